"""Fixtures shared by several test modules, and how the suite shares the machine between xdist
workers."""

import fcntl
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

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


# Tests marked `quiet` measure throughput against a baseline taken a minute earlier (the hostile
# upload's 20% bound): CPU another worker takes in one phase and not the other reads as a stall.
# CI's first two-worker run failed exactly so (loud 253 reruns against quiet 338). While a quiet
# test runs, the other workers finish the test in hand and wait; an flock pair between the
# processes of one run makes it so.
QUIET = "quiet: measures time or throughput; other xdist workers pause while it runs"


def pytest_configure(config):
    config.addinivalue_line("markers", QUIET)
    # The controller names the run, so that it can remove the run's lock files when it ends.
    if config.getoption("dist", "no") != "no" and not hasattr(config, "workerinput"):
        config.option.testrunuid = config.option.testrunuid or uuid.uuid4().hex


def _locks(run: str) -> tuple[Path, Path]:
    base = Path(tempfile.gettempdir()) / f"splitlab-quiet-{run}"
    return base.with_suffix(".gate"), base.with_suffix(".lock")


@contextmanager
def machine_share(run: str, *, alone: bool):
    """A readers-writer lock with the writer first: a quiet test takes the gate (so no new test
    starts), then the lock alone (so the tests in hand finish first); any other test passes the
    gate and shares the lock. flock, not a pytest fixture: the workers are separate processes."""
    gate_path, lock_path = _locks(run)
    with open(gate_path, "a") as gate, open(lock_path, "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        yield  # closing the files releases both


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    run = getattr(item.config, "workerinput", {}).get("testrunuid")
    if run is None:  # one process: nothing to share the machine with
        return (yield)
    with machine_share(run, alone=item.get_closest_marker("quiet") is not None):
        return (yield)


def pytest_unconfigure(config):
    run = getattr(config.option, "testrunuid", None)
    if run and not hasattr(config, "workerinput"):
        for path in _locks(run):
            path.unlink(missing_ok=True)
