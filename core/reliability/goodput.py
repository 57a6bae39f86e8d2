"""Reliability at scale: job MTBF, checkpoint size and interval, goodput, useful devices."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.memory import get_recipe, model_state_bytes_per_gpu
from core.model import ModelSpec, ParamsOnly

HOUR_S, DAY_S = 3600.0, 86400.0
_MAX_MTBFS = 700.0  # beyond this exp() overflows: such a segment never finishes anyway


def _positive(name: str, value, fix: str, allow_zero: bool = False, hi: float = math.inf) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if (
        not ok
        or not math.isfinite(value)
        or value < 0
        or (value == 0 and not allow_zero)
        or value > hi
    ):
        rule = ("≥ 0" if allow_zero else "> 0") + (f" and ≤ {hi:g}" if hi < math.inf else "")
        raise ValueError(f"{name}={value!r} must be a finite number {rule}; {fix}")
    return float(value)


def _count(name: str, value, fix: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}={value!r} must be a whole number ≥ 1; {fix}")
    return int(value)


# Llama 3 (Dubey et al. 2024, arXiv:2407.21783, Sec. 3.3.4): 466 job interruptions in a 54-day
# pre-training snapshot, 47 planned and 419 unexpected, on up to 16K (16,384) H100s.
LLAMA3_GPUS, LLAMA3_SNAPSHOT_S, LLAMA3_UNEXPECTED, LLAMA3_PLANNED = 16_384, 54 * DAY_S, 419, 47
LLAMA3_JOB_MTBF_S = LLAMA3_SNAPSHOT_S / LLAMA3_UNEXPECTED
# Implied per-GPU MTBF, as if every unexpected interruption were one GPU's independent failure.
LLAMA3_GPU_MTBF_S = LLAMA3_JOB_MTBF_S * LLAMA3_GPUS


@dataclass(frozen=True, kw_only=True)
class Interruptions:
    """Failures of an N-GPU job over a run: a Poisson process at rate N / MTBF_gpu."""

    num_gpus: int
    gpu_mtbf_s: float
    run_s: float
    job_mtbf_s: float  # MTBF_gpu / N (docs/notes/planner.md §4)
    expected_interruptions: float  # N T / MTBF_gpu
    prob_no_failure: float  # exp(-N T / MTBF_gpu)


def interruptions(
    *,
    num_gpus: int,
    run_s: float,
    gpu_mtbf_s: float | None = None,
    gpu_failure_rate_per_s: float | None = None,
) -> Interruptions:
    """Job MTBF and expected failures: independent exponential failures add their rates."""
    n = _count("num_gpus", num_gpus, "use e.g. 16384")
    if (gpu_mtbf_s is None) == (gpu_failure_rate_per_s is None):
        raise ValueError(
            "give exactly one of gpu_mtbf_s or gpu_failure_rate_per_s (rate = 1 / MTBF)"
        )
    if gpu_mtbf_s is None:
        gpu_mtbf_s = 1.0 / _positive(
            "gpu_failure_rate_per_s",
            gpu_failure_rate_per_s,
            "use e.g. 1 / (50000 h) ≈ 5.6e-9 per second",
        )
    gpu_mtbf = _positive("gpu_mtbf_s", gpu_mtbf_s, "use e.g. 50000 h = 1.8e8 s")
    t, m = _positive("run_s", run_s, "use e.g. 7 days = 604800 s"), gpu_mtbf / n
    return Interruptions(
        num_gpus=n,
        gpu_mtbf_s=gpu_mtbf,
        run_s=t,
        job_mtbf_s=m,
        expected_interruptions=t / m,
        prob_no_failure=math.exp(-t / m),
    )


# What a checkpoint holds, in terms of a memory.py recipe's parts. Gradients are rebuilt by the next
# backward pass, so frameworks save weights + optimizer state (14 B/param for
# mixed-precision Adam: docs/notes/planner.md §4).
CHECKPOINT_CONTENTS = {
    "weights+optimizer": ("parameters", "optimizer"),
    "weights": ("parameters",),
    "all model states": ("parameters", "gradients", "optimizer"),
}


@dataclass(frozen=True, kw_only=True)
class Checkpoint:
    """Bytes one full checkpoint holds and the time to write it."""

    num_params: int
    recipe: str
    contents: str
    bytes_per_param: int
    size_bytes: int
    write_bandwidth_bytes_per_s: float
    write_s: float


def checkpoint(
    *,
    model: ModelSpec | ParamsOnly,
    write_bandwidth_bytes_per_s: float,
    recipe: str = "mixed_adam",
    contents: str = "weights+optimizer",
) -> Checkpoint:
    """Size of the whole job's states (one copy: DP replicas hold the same bytes) / write
    bandwidth.
    """
    if contents not in CHECKPOINT_CONTENTS:
        raise ValueError(
            f"contents={contents!r} is unknown: use one of {', '.join(CHECKPOINT_CONTENTS)}"
        )
    bw = _positive(
        "write_bandwidth_bytes_per_s",
        write_bandwidth_bytes_per_s,
        "use the storage's aggregate write bandwidth, e.g. 1e11 (100 GB/s)",
    )
    states = model_state_bytes_per_gpu(model.num_params, 1, 0, recipe)  # dp=1: unsharded totals
    size = sum(getattr(states, f"{part}_bytes") for part in CHECKPOINT_CONTENTS[contents])
    return Checkpoint(
        num_params=model.num_params,
        recipe=get_recipe(recipe).name,
        contents=contents,
        bytes_per_param=size // model.num_params,
        size_bytes=size,
        write_bandwidth_bytes_per_s=bw,
        write_s=size / bw,
    )


def _delta_m(checkpoint_s: float, mtbf_s: float, allow_zero: bool = False) -> tuple[float, float]:
    return (
        _positive("checkpoint_s", checkpoint_s, "use the write time, e.g. 60 s", allow_zero),
        _positive("mtbf_s", mtbf_s, "use the job MTBF, e.g. 3 h = 10800 s"),
    )


def young_interval_s(*, checkpoint_s: float, mtbf_s: float) -> float:
    """Young (1974, CACM 17(9)): tau = sqrt(2 delta M), the minimum of delta/tau + tau/(2M)."""
    d, m = _delta_m(checkpoint_s, mtbf_s)
    return math.sqrt(2.0 * d * m)


def daly_interval_s(*, checkpoint_s: float, mtbf_s: float) -> float:
    """Daly (2006, FGCS 22(3)) higher-order estimate; tau = M once delta ≥ 2M."""
    d, m = _delta_m(checkpoint_s, mtbf_s)
    if d >= 2.0 * m:
        return m
    r = d / (2.0 * m)
    return math.sqrt(2.0 * d * m) * (1.0 + math.sqrt(r) / 3.0 + r / 9.0) - d


def optimal_interval_s(*, checkpoint_s: float, mtbf_s: float) -> float:
    """Exact minimiser of the expected wall time per unit of work (see `waste`), by bisection."""
    d, m = _delta_m(checkpoint_s, mtbf_s)
    # d/dtau [expm1((tau + delta)/M) / tau] = 0  <=>  (1 - x) e^(x + delta/M) = 1 with x = tau/M,
    # i.e. log1p(-x) + x + delta/M = 0: decreasing in x on (0, 1), positive at 0, -inf at 1.
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # converged to adjacent floats; for delta ≳ 36 M the root rounds to 1
            break
        lo, hi = (mid, hi) if math.log1p(-mid) + mid + d / m > 0 else (lo, mid)
    return 0.5 * (lo + hi) * m


@dataclass(frozen=True, kw_only=True)
class Waste:
    """Where the wall time goes at one checkpoint interval (fractions of wall time sum to 1)."""

    interval_s: float
    checkpoint_s: float
    restart_s: float
    mtbf_s: float
    wall_per_interval_s: float  # expected wall time to bank one interval of work
    goodput: float  # useful (surviving) work / wall time
    checkpoint_fraction: float  # completed checkpoint writes
    lost_work_fraction: float  # work and partial checkpoints destroyed by failures
    restart_fraction: float  # restarts, including restarts hit by a further failure
    first_order_waste: float  # delta/tau + (tau/2 + R)/M (docs/notes/planner.md §4)

    @property
    def wasted_fraction(self) -> float:
        return 1.0 - self.goodput


def waste(*, interval_s: float, checkpoint_s: float, restart_s: float, mtbf_s: float) -> Waste:
    """Exact expected waste with exponential failures (also during checkpoints and restarts)."""
    # A segment is tau of work then a delta write; a failure loses the segment so far, then a
    # restart
    # of R must run failure-free. Renewal argument: expm1(s/M) failed attempts per segment
    # (s = tau + delta), each losing E[X | X < s] and followed by M expm1(R/M) of restarting, so
    # wall = M e^(R/M) expm1(s/M) (Daly 2006's complete model); to first order the waste is
    # delta/tau + (tau/2 + R)/M (Young).
    tau = _positive("interval_s", interval_s, "use a checkpoint interval such as 30 min = 1800 s")
    d, m = _delta_m(checkpoint_s, mtbf_s, allow_zero=True)
    r = _positive("restart_s", restart_s, "use the time to restart and reload, e.g. 600 s", True)
    s = tau + d
    if max(s, r) / m > _MAX_MTBFS:
        raise ValueError(
            f"interval + checkpoint = {s:.4g} s, restart = {r:.4g} s, job MTBF = "
            f"{m:.4g} s: over {_MAX_MTBFS:.0f} MTBFs nothing completes; keep them "
            "below a few MTBFs"
        )
    failures = math.expm1(s / m)  # expected failed attempts per segment
    lost, restart = m * failures - s, m * failures * math.expm1(r / m)
    wall = tau + d + lost + restart
    return Waste(
        interval_s=tau,
        checkpoint_s=d,
        restart_s=r,
        mtbf_s=m,
        wall_per_interval_s=wall,
        goodput=tau / wall,
        checkpoint_fraction=d / wall,
        lost_work_fraction=lost / wall,
        restart_fraction=restart / wall,
        first_order_waste=d / tau + (tau / 2 + r) / m,
    )


@dataclass(frozen=True, kw_only=True)
class GoodputCurve:
    """Waste vs checkpoint interval with Young's, Daly's and the exact optimum."""

    points: tuple[Waste, ...]
    young: Waste
    daly: Waste
    optimum: Waste


def goodput_curve(
    *,
    checkpoint_s: float,
    restart_s: float,
    mtbf_s: float,
    intervals_s: tuple[float, ...] | None = None,
    num_points: int = 80,
) -> GoodputCurve:
    """Waste at each interval; by default log-spaced around the optimum (1/10x to 10x, ≤ 3
    MTBFs).
    """
    kw = dict(checkpoint_s=checkpoint_s, mtbf_s=mtbf_s)
    opt = optimal_interval_s(**kw)
    if intervals_s is None:
        n = _count("num_points", num_points, "use e.g. 80")
        intervals_s = np.geomspace(opt / 10, min(opt * 10, 3 * mtbf_s), n).tolist()
    at = lambda tau: waste(interval_s=tau, restart_s=restart_s, **kw)  # noqa: E731
    return GoodputCurve(
        points=tuple(at(t) for t in intervals_s),
        young=at(young_interval_s(**kw)),
        daly=at(daly_interval_s(**kw)),
        optimum=at(opt),
    )


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
    work = _positive(
        "run_work_s", run_work_s, "use the run's training time, e.g. 7 days = 604800 s"
    )
    runs = _count("num_runs", num_runs, "use e.g. 32")
    budget = _count("max_events", max_events, "use e.g. 150000")
    events = 1 + math.expm1((tau + d) / m) * (1 + math.exp(r / m))  # expected draws per interval
    if events > budget / 2:
        raise ValueError(
            f"interval {tau:.4g} s + checkpoint {d:.4g} s, restart {r:.4g} s, MTBF "
            f"{m:.4g} s: each interval needs ~{events:.3g} failure draws (goodput "
            f"{base.goodput:.2g}), over half of max_events={budget}; shorten the interval "
            "or raise max_events"
        )
    cap = max(2, int(budget / events))
    per_run = max(1, min(math.ceil(work / tau), cap // 2))
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


@dataclass(frozen=True, kw_only=True)
class UsefulDevices:
    """Average GPUs doing useful work at one instant, after each loss in turn."""

    steps: tuple[tuple[str, float], ...]  # (label, devices), from ("allocated", N) down

    @property
    def useful_gpus(self) -> float:
        return self.steps[-1][1]


def useful_devices(
    *,
    num_gpus: int,
    bubble_fraction: float = 0.0,
    straggler_slowdown: float = 1.0,
    goodput: float = 1.0,
    mfu: float | None = None,
) -> UsefulDevices:
    """N x (1 - bubble) x (1 / straggler slowdown) x goodput, or N x MFU x goodput."""
    # bubble: PipelineResult.bubble_fraction; slowdown: StragglerCurve.slowdown; goodput:
    # Waste.goodput.
    # MFU already counts bubbles and waiting, so it replaces the first two factors.
    n = _count("num_gpus", num_gpus, "use e.g. 16384")
    g = _positive("goodput", goodput, "it is a fraction of wall time (Waste.goodput)", hi=1.0)
    b = _positive(
        "bubble_fraction", bubble_fraction, "it is an idle share below 1", True, hi=0.999999
    )
    s = _positive("straggler_slowdown", straggler_slowdown, "it is E[step] / mean step")
    if s < 1:
        raise ValueError(
            f"straggler_slowdown={s} < 1: the slowest rank sets the step, so "
            "E[step] ≥ mean step; use StragglerCurve.slowdown (≥ 1)"
        )
    if mfu is None:
        factors = [("after pipeline bubble", 1.0 - b), ("after stragglers", 1.0 / s)]
    else:
        f = _positive("mfu", mfu, "use a fraction such as 0.4", hi=1.0)
        if b > 0 or s != 1:
            raise ValueError(
                f"mfu={f} with bubble_fraction={b}, straggler_slowdown={s}: MFU already "
                "includes bubble and straggler idle time; pass either mfu or those two"
            )
        factors = [("at MFU (peak FLOP/s)", f)]
    steps = [("allocated", float(n))]
    for label, kept in factors + [("after failures + checkpoints", g)]:
        steps.append((label, steps[-1][1] * kept))
    return UsefulDevices(steps=tuple(steps))
