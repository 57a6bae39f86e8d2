"""What fits: a capacity test with a reserve, and for each ZeRO stage the fewest GPUs and the
largest micro-batch that fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from core.memory.per_gpu import memory_per_gpu
from core.model import ModelSpec
from core.parallel import Layout
from core.training import Training


def fits(total_bytes: float, capacity_bytes: float, reserve_bytes: float = 0.0) -> bool:
    """True when the bytes plus a reserve for temporaries and fragmentation fit the capacity."""
    return total_bytes + reserve_bytes <= capacity_bytes


@dataclass(frozen=True, kw_only=True)
class Budget:
    """One GPU's memory against its HBM: what training holds, the reserve, what is left. The one
    source of every "per GPU" metric, bar top, verdict and warning (memory page, planner,
    scenarios): used_bytes is always training + reserve.
    """

    capacity_bytes: float  # what the device reports (core.hardware)
    reserve_bytes: float  # RESERVE_PARTS (core.training), reserve_fraction of the capacity
    reserve_fraction: float
    training_bytes: float  # model states + activations + ZeRO-3 gathered units

    @property
    def used_bytes(self) -> float:
        return self.training_bytes + self.reserve_bytes

    @property
    def usable_bytes(self) -> float:
        """What training may hold: capacity minus the reserve."""
        return self.capacity_bytes - self.reserve_bytes

    @property
    def fits(self) -> bool:
        return fits(self.training_bytes, self.capacity_bytes, self.reserve_bytes)

    @property
    def margin_bytes(self) -> float:
        """Left over when it fits (> 0), missing when it does not (< 0)."""
        return self.capacity_bytes - self.used_bytes


def budget(training_bytes: float, capacity_bytes: float, reserve_fraction: float) -> Budget:
    """Budget of one GPU: training_bytes (e.g. MemoryResult.total_bytes) on capacity_bytes of
    HBM with reserve_fraction of it kept free (Training.memory_headroom).
    """
    return Budget(
        capacity_bytes=capacity_bytes,
        reserve_bytes=reserve_fraction * capacity_bytes,
        reserve_fraction=reserve_fraction,
        training_bytes=training_bytes,
    )


def _first_true(pred, lo: int, hi: int) -> int | None:
    """Smallest k in [lo, hi] with pred(k), for a predicate monotone in k (binary search)."""
    if not pred(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pred(mid) else (mid + 1, hi)
    return lo


@dataclass(frozen=True, kw_only=True)
class FitRow:
    """One ZeRO stage: fewest DP ranks and GPUs, largest micro-batch at the chosen DP."""

    zero_stage: int
    min_dp: int | None  # None: nothing up to the search limit fits
    min_gpus: int | None
    max_micro_batch: int | None  # 0: even 1 does not fit; None: no model shape to size activations


def what_fits(
    model,
    layout: Layout,
    training: Training,
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    max_dp: int = 65536,
    max_micro_batch: int = 4096,
) -> tuple[FitRow, ...]:
    """For each ZeRO stage, the fewest GPUs (DP degree) and the largest micro-batch that fit."""
    # Each probe keeps the micro-batches per pipeline (what sets the activations in flight): the
    # global batch grows with DP x micro-batch.
    m = training.num_microbatches(layout)

    def ok(lay):
        tr = replace(training, global_batch=m * lay.dp * lay.micro_batch)
        return fits(memory_per_gpu(model, lay, tr).total_bytes, capacity_bytes, reserve_bytes)

    rows, step = [], layout.ep // math.gcd(layout.ep, layout.cp)  # EP must divide DP x CP

    for z in range(4):
        lay = replace(layout, zero_stage=z, shard_degree=None)
        # DDP memory does not fall with dp: only the smallest dp needs checking.
        top = 1 if z == 0 else max_dp // step
        k = _first_true(lambda k, lay=lay: ok(replace(lay, dp=k * step)), 1, top)
        dp = k and k * step
        mb = None
        if isinstance(model, ModelSpec):
            bad = _first_true(
                lambda k, lay=lay: not ok(replace(lay, micro_batch=k)), 1, max_micro_batch
            )
            mb = max_micro_batch if bad is None else bad - 1
        rows.append(
            FitRow(
                zero_stage=z,
                min_dp=dp,
                min_gpus=dp and dp * lay.tp * lay.pp * lay.cp,
                max_micro_batch=mb,
            )
        )
    return tuple(rows)
