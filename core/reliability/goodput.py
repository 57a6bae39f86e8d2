"""Goodput: where wall time goes at one checkpoint interval, the waste curve, useful devices."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.checks import positive, whole_number
from core.reliability.checkpoints import (
    daly_interval_s,
    delta_and_mtbf,
    optimal_interval_s,
    young_interval_s,
)
from core.units import format_seconds

MAX_MTBFS = 700.0  # beyond this exp() overflows: such a segment never finishes anyway
MIN_GOODPUT = 0.01  # below 1% useful at the best interval, the regime is degenerate (a sentence)


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
    # restart of R must run failure-free. Renewal argument: expm1(s/M) failed attempts per segment
    # (s = tau + delta), each losing E[X | X < s] and followed by M expm1(R/M) of restarting, so
    # wall = M e^(R/M) expm1(s/M) (Daly 2006's complete model); to first order the waste is
    # delta/tau + (tau/2 + R)/M (Young).
    tau = positive(
        "interval_s", interval_s, fix="use a checkpoint interval such as 30 min = 1800 s"
    )
    d, m = delta_and_mtbf(checkpoint_s, mtbf_s, allow_zero=True)
    r = positive(
        "restart_s",
        restart_s,
        fix="use the time to restart and reload, e.g. 600 s",
        allow_zero=True,
    )
    s = tau + d
    if max(s, r) / m > MAX_MTBFS:
        raise ValueError(
            f"interval + checkpoint = {s:.4g} s, restart = {r:.4g} s, job MTBF = "
            f"{m:.4g} s: over {MAX_MTBFS:.0f} MTBFs nothing completes; keep them "
            "below a few MTBFs"
        )
    failures = math.expm1(s / m)  # expected failed attempts per segment
    lost, restart = m * failures - s, m * failures * math.expm1(r / m)
    wall = tau + d + lost + restart
    if not math.isfinite(wall) or not tau / wall > 0:  # near MAX_MTBFS the product overflows
        raise ValueError(
            f"interval + checkpoint = {s:.4g} s and restart = {r:.4g} s against a job MTBF of "
            f"{m:.4g} s: the expected wall time overflows, nothing completes; keep them below a "
            "few MTBFs"
        )
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


def degenerate(*, checkpoint_s: float, restart_s: float, mtbf_s: float) -> str | None:
    """A plain sentence when no checkpoint interval keeps even MIN_GOODPUT of the wall time
    useful (the cluster fails faster than it can checkpoint or restart), else None."""
    d, m = delta_and_mtbf(checkpoint_s, mtbf_s, allow_zero=True)
    r = positive("restart_s", restart_s, fix="use e.g. 600 s", allow_zero=True)
    best = None
    if max(d, r) / m < 50:
        try:
            opt = optimal_interval_s(checkpoint_s=d, mtbf_s=m) if d > 0 else m / 100
            best = waste(interval_s=opt, checkpoint_s=d, restart_s=r, mtbf_s=m).goodput
        except ValueError:
            best = None
    if best is not None and best >= MIN_GOODPUT:
        return None
    shown = f"under {MIN_GOODPUT:.0%}" if best is None else f"{best * 100:.2g}%"
    slow = "checkpoint" if d >= r else "restart"
    return (
        f"This cluster fails faster than it can {slow}: the job fails every "
        f"{format_seconds(m)} on average, one checkpoint takes {format_seconds(d)} to write and "
        f"a restart {format_seconds(r)}, so even at the best interval the share of wall time "
        f"doing useful work is {shown}. Use faster storage, a smaller checkpoint (weights "
        "only), a faster restart, or fewer GPUs."
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
        n = whole_number("num_points", num_points, fix="use e.g. 80")
        intervals_s = np.geomspace(opt / 10, min(opt * 10, 3 * mtbf_s), n).tolist()
    at = lambda tau: waste(interval_s=tau, restart_s=restart_s, **kw)  # noqa: E731
    return GoodputCurve(
        points=tuple(at(t) for t in intervals_s),
        young=at(young_interval_s(**kw)),
        daly=at(daly_interval_s(**kw)),
        optimum=at(opt),
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
    n = whole_number("num_gpus", num_gpus, fix="use e.g. 16384")
    g = positive("goodput", goodput, fix="it is a fraction of wall time (Waste.goodput)", hi=1.0)
    b = positive(
        "bubble_fraction",
        bubble_fraction,
        fix="it is an idle share below 1",
        allow_zero=True,
        hi=0.999999,
    )
    s = positive("straggler_slowdown", straggler_slowdown, fix="it is E[step] / mean step")
    if s < 1:
        raise ValueError(
            f"straggler_slowdown={s} < 1: the slowest rank sets the step, so "
            "E[step] ≥ mean step; use StragglerCurve.slowdown (≥ 1)"
        )
    if mfu is None:
        factors = [("after pipeline bubble", 1.0 - b), ("after stragglers", 1.0 / s)]
    else:
        f = positive("mfu", mfu, fix="use a fraction such as 0.4", hi=1.0)
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
