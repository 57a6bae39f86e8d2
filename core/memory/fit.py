"""What fits: a capacity test with a reserve, and for each ZeRO stage the fewest GPUs and the
largest micro-batch that fit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.memory.per_gpu import memory_per_gpu
from core.model import ModelSpec
from core.parallel import Layout
from core.training import Training


def fits(total_bytes: float, capacity_bytes: float, reserve_bytes: float = 0.0) -> bool:
    """True when the bytes plus a reserve for temporaries and fragmentation fit the capacity."""
    return total_bytes + reserve_bytes <= capacity_bytes


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

    rows = []
    for z in range(4):
        lay = replace(layout, zero_stage=z, shard_degree=None)
        # DDP memory does not fall with dp: only dp = 1 needs checking.
        dp = _first_true(lambda d, lay=lay: ok(replace(lay, dp=d)), 1, 1 if z == 0 else max_dp)
        mb = None
        if isinstance(model, ModelSpec):
            bad = _first_true(
                lambda k, lay=lay: not ok(replace(lay, micro_batch=k)), 1, max_micro_batch
            )
            mb = max_micro_batch if bad is None else bad - 1
        rows.append(
            FitRow(
                zero_stage=z, min_dp=dp, min_gpus=dp and dp * lay.tp * lay.pp, max_micro_batch=mb
            )
        )
    return tuple(rows)
