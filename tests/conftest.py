"""Fixtures shared by several test modules."""

import pytest

from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, evaluate


@pytest.fixture(scope="session")
def pair():
    """The seeds' placement exercise: GPT-3 175B on 8 x 8 H100, TP 8 x PP 8, with TP inside the
    node (default order) and TP across nodes (order pp-tp-dp)."""
    model, c = preset("GPT-3 175B"), make_cluster(num_nodes=8, gpus_per_node=8)
    tr = Training(global_batch=64, recompute="full")
    return (
        evaluate(model, c, Layout(dp=1, tp=8, pp=8), tr),
        evaluate(model, c, Layout(dp=1, tp=8, pp=8, order="pp-tp-dp"), tr),
    )


# Tests that must never share the machine with each other: every test that starts a live server
# (tests/e2e: latency, load and replica measurements among them) and the URL fuzzer, whose process
# pool takes every core while it runs.
LIVE_SERVER = ("tests/e2e/", "tests/test_url_fuzz.py")


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: all LIVE_SERVER tests are one, every other module one
    (its module-scoped fixtures are then built once, on one worker)."""
    return "live-server" if nodeid.startswith(LIVE_SERVER) else nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config, log):
    """`-n 2 --dist loadgroup` (the README's test command): one worker runs the LIVE_SERVER tests
    one at a time, so two servers never share the 2-core machine while a latency or load test
    measures, the fuzzer's burst never lands inside such a measurement and its pool runs once, not
    once per worker; both workers share the other modules. Why not `xdist_group` marks:
    pytest-xdist 3.8 tags a grouped test by rewriting `item._nodeid`, which pytest 9 no longer
    reads (its node id lives in `_id`), so the marks group nothing. This is xdist's own hook for
    choosing a scheduler (pytest-dev/pytest-xdist src/xdist/newhooks.py)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LiveServerApart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return LiveServerApart(config, log)
