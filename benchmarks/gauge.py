"""This machine's speed in the hour of a measurement: every benchmark's table names it."""

from __future__ import annotations

import statistics
import time


def machine_gauge_ms() -> float:
    """Median ms of a fixed pure-Python loop: this machine's speed varies about 2x by the hour
    (2026-12-03: the scenarios page's first chart 94-96 ms in one hour, 155-170 ms in another;
    2026-12-07: N on /collectives at 50 sessions 73 and 59 reruns/s an hour apart, docs/load.md),
    so each table names the speed it was measured at. Lower is a faster hour."""
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        sum(i * i for i in range(1_000_000))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000
