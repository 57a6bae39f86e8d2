"""Shared by the two probe modules that tests/test_suite_split.py runs on real xdist workers (the
names lack the test_ prefix, so the suite itself never collects them)."""

import os
import time


def hold(name: str, seconds: float) -> None:
    """Sleep, and log when this test started and ended (wall clock: the workers are processes)."""
    start = time.time()
    time.sleep(seconds)
    with open(os.environ["SPLIT_PROBE_LOG"], "a") as log:
        log.write(f"{name} {start} {time.time()}\n")
