"""Monte Carlo goodput: replay runs under random exponential failures, to set beside `waste`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.checks import positive, whole_number
from core.reliability.goodput import waste


@dataclass(frozen=True, kw_only=True)
class MonteCarloGoodput:
    """Goodput of simulated runs with exponential failures, to set beside `waste`."""

    interval_s: float
    num_runs: int
    intervals_per_run: int
    goodput: float  # total work / total wall time over all runs
    goodput_stderr: float  # delta method on the mean wall time per interval
    checkpoint_fraction: float
    lost_work_fraction: float
    restart_fraction: float
    failures_per_run: float
    wall_per_run_s: float


def simulate_goodput(
    *,
    interval_s: float,
    checkpoint_s: float,
    restart_s: float,
    mtbf_s: float,
    run_work_s: float,
    num_runs: int = 32,
    seed: int = 0,
    max_events: int = 150_000,
) -> MonteCarloGoodput:
    """Replay runs of run_work_s of work (whole intervals) under random exponential failures."""
    # Gaps are drawn afresh at each attempt's start (exact by memorylessness). To stay near
    # max_events
    # draws (~50 ns each) the run count shrinks (≥ 2) and a run may be cut to fewer intervals.
    base = waste(
        interval_s=interval_s, checkpoint_s=checkpoint_s, restart_s=restart_s, mtbf_s=mtbf_s
    )
    tau, d, r, m = base.interval_s, base.checkpoint_s, base.restart_s, base.mtbf_s
    work = positive(
        "run_work_s", run_work_s, fix="use the run's training time, e.g. 7 days = 604800 s"
    )
    runs = whole_number("num_runs", num_runs, fix="use e.g. 32")
    budget = whole_number("max_events", max_events, fix="use e.g. 150000")
    events = 1 + math.expm1((tau + d) / m) * (1 + math.exp(r / m))  # expected draws per interval
    if events > budget / 2:
        raise ValueError(
            f"interval {tau:.4g} s + checkpoint {d:.4g} s, restart {r:.4g} s, MTBF "
            f"{m:.4g} s: each interval needs ~{events:.3g} failure draws (goodput "
            f"{base.goodput:.2g}), over half of max_events={budget}; shorten the interval "
            "or raise max_events"
        )
    cap = max(2, int(budget / events))
    per_run = max(1, min(math.ceil(min(work / tau, 1e18)), cap // 2))  # 1e300 / 1e-300 → inf
    runs = max(2, min(runs, cap // per_run))
    rng = np.random.default_rng(seed)
    n, s = runs * per_run, tau + d
    lost, restart, fails = np.zeros(n), np.zeros(n), np.zeros(n)
    active = np.arange(n)
    while active.size:  # segments whose attempt has not yet survived s seconds
        gap = rng.exponential(m, active.size)
        hit = gap < s
        active = active[hit]
        lost[active] += gap[hit]
        fails[active] += 1
        pending = active
        while pending.size:  # a restart completes only after r failure-free seconds
            gap = rng.exponential(m, pending.size)
            hit = gap < r
            restart[pending] += np.where(hit, gap, r)
            pending = pending[hit]
            fails[pending] += 1
    wall = s + lost + restart  # per interval: iid by memorylessness, so they give the error bar
    mean_wall, total = float(wall.mean()), float(wall.sum())
    goodput = tau / mean_wall
    return MonteCarloGoodput(
        interval_s=tau,
        num_runs=runs,
        intervals_per_run=per_run,
        goodput=goodput,
        goodput_stderr=goodput * float(wall.std(ddof=1)) / math.sqrt(n) / mean_wall,
        checkpoint_fraction=n * d / total,
        lost_work_fraction=float(lost.sum()) / total,
        restart_fraction=float(restart.sum()) / total,
        failures_per_run=float(fails.sum()) / runs,
        wall_per_run_s=total / runs,
    )
