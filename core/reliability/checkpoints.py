"""Checkpoints: the bytes one holds, its write time, and the interval between them (Young, Daly,
exact).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.checks import check_choice, positive
from core.memory import model_state_bytes_per_gpu
from core.model import ModelSpec, ParamsOnly
from core.training import get_recipe

# What a checkpoint holds, in terms of a training recipe's parts. Gradients are rebuilt by the next
# backward pass, so frameworks save weights + optimizer state (14 B/param for mixed-precision
# Adam: docs/notes/planner.md §4).
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
    check_choice("contents", contents, CHECKPOINT_CONTENTS)
    bw = positive(
        "write_bandwidth_bytes_per_s",
        write_bandwidth_bytes_per_s,
        fix="use the storage's aggregate write bandwidth, e.g. 1e11 (100 GB/s)",
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


def delta_and_mtbf(
    checkpoint_s: float, mtbf_s: float, allow_zero: bool = False
) -> tuple[float, float]:
    """The checkpoint write time delta and the job MTBF M, checked (delta = 0 with allow_zero)."""
    return (
        positive(
            "checkpoint_s", checkpoint_s, fix="use the write time, e.g. 60 s", allow_zero=allow_zero
        ),
        positive("mtbf_s", mtbf_s, fix="use the job MTBF, e.g. 3 h = 10800 s"),
    )


def young_interval_s(*, checkpoint_s: float, mtbf_s: float) -> float:
    """Young (1974, CACM 17(9)): tau = sqrt(2 delta M), the minimum of delta/tau + tau/(2M)."""
    d, m = delta_and_mtbf(checkpoint_s, mtbf_s)
    return math.sqrt(2.0 * d * m)


def daly_interval_s(*, checkpoint_s: float, mtbf_s: float) -> float:
    """Daly (2006, FGCS 22(3)) higher-order estimate; tau = M once delta ≥ 2M."""
    d, m = delta_and_mtbf(checkpoint_s, mtbf_s)
    if d >= 2.0 * m:
        return m
    r = d / (2.0 * m)
    return math.sqrt(2.0 * d * m) * (1.0 + math.sqrt(r) / 3.0 + r / 9.0) - d


def optimal_interval_s(*, checkpoint_s: float, mtbf_s: float) -> float:
    """Exact minimiser of the expected wall time per unit of work (see `waste`), by bisection."""
    d, m = delta_and_mtbf(checkpoint_s, mtbf_s)
    # d/dtau [expm1((tau + delta)/M) / tau] = 0  <=>  (1 - x) e^(x + delta/M) = 1 with x = tau/M,
    # i.e. log1p(-x) + x + delta/M = 0: decreasing in x on (0, 1), positive at 0, -inf at 1.
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # converged to adjacent floats; for delta ≳ 36 M the root rounds to 1
            break
        lo, hi = (mid, hi) if math.log1p(-mid) + mid + d / m > 0 else (lo, mid)
    return 0.5 * (lo + hi) * m
