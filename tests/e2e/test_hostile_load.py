"""Issue 19's load run, bounded (~90 s): 20 sessions rerun the collectives page alone, while one
more session uploads the worst trace (2,000,000 events, every limit just met) to the Plan vs
trace page, and alone again; the p95 with the upload stays within 20% of the baselines.

The upload is read in a child process in the idle CPU class (core.traces.isolate), so it uses
only CPU the sessions leave. The two quiet phases bracket the loud one: the machine's own drift
shows as their difference, and the loud p95 is compared with the larger of them. Loopback only;
the app process is always stopped (benchmarks/hostile_load.py).
"""

from concurrent.futures import ThreadPoolExecutor

import pytest

from benchmarks.hostile_load import run

# A live server, like the browser tests; quiet: the other xdist worker waits while it measures
# (tests/conftest.py), or its CPU in one phase and not another reads as a stall.
pytestmark = [pytest.mark.browser, pytest.mark.quiet]


def _within(r: dict) -> bool:
    quiet, loud, after = r["quiet"], r["loud"], r["after"]
    return loud["p95_ms"] <= 1.2 * max(quiet["p95_ms"], after["p95_ms"])


@pytest.mark.timeout(400)
def test_one_hostile_upload_leaves_the_other_sessions_p95_unchanged():
    # In its own thread: the browser tests' Playwright leaves an event loop running on this one,
    # and the driver's asyncio.run() needs a thread without one. Two identical quiet phases differ
    # by ~10-15% on the 2-core machine, so a p95 just over the 20% bound is measured once more
    # (a fresh server); a real stall (the case: seconds, not percent) fails both runs.
    runs = []
    with ThreadPoolExecutor(max_workers=1) as pool:
        for _ in range(2):
            runs.append(pool.submit(run, 20, 12, 2_000_000, "collectives").result())
            if _within(runs[-1]):
                break
    r = runs[-1]
    quiet, loud, after = r["quiet"], r["loud"], r["after"]
    assert loud["uploads"] >= 1
    assert not (quiet["exceptions"] or loud["exceptions"] or after["exceptions"])
    assert loud["reruns"] > 0.8 * min(quiet["reruns"], after["reruns"])
    assert _within(r), runs
