"""Compute and memory of an MoE model under EP: active vs total parameters, FLOPs per token, and
model-state bytes per GPU with the routed experts sharded by EP × ETP and the rest by TP.

Megatron-Core "parallel folding": the ranks of one pipeline stage are TP × DP for the dense part
and EP × ETP × EDP for the experts, so EP × ETP must divide TP × DP (`NVIDIA/Megatron-LM
megatron/core/transformer/moe/README.md`). Bytes: bf16 weights and gradients, fp32 master weights
and two Adam moments (12 bytes), ZeRO-1 sharding the optimizer over each part's data-parallel
ranks (DP x CP for the dense part, EDP for the experts). Activations are on the Memory page.
Norms and routers stay whole on every TP rank (core.expert_parallel.spec): with ETP = TP and
PP = 1 these are core.memory's numbers for the same layout at ZeRO-1 (tests/test_consistency.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import whole_number
from core.expert_parallel.models import MoeConfig, counts
from core.expert_parallel.spec import moe_spec


@dataclass(frozen=True, kw_only=True)
class EpMemory:
    dense_params_per_gpu: float
    expert_params_per_gpu: float
    parameters_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    edp: int  # expert data-parallel degree: replicas of each expert shard

    @property
    def total_bytes(self) -> float:
        return self.parameters_bytes + self.gradients_bytes + self.optimizer_bytes


def check_expert_layout(cfg: MoeConfig, *, ep: int, etp: int, tp: int, dp: int, cp=1) -> int:
    """EDP when EP divides the experts and EP × ETP divides TP × CP × DP, else a ValueError."""
    ep, etp, tp, dp = (
        whole_number(n, v) for n, v in (("EP", ep), ("ETP", etp), ("TP", tp), ("DP", dp))
    )
    dp *= whole_number("CP", cp)  # CP ranks hold weight replicas, like DP ranks (the "dp_cp" group)
    if cfg.experts % ep:
        ok = [d for d in range(1, cfg.experts + 1) if cfg.experts % d == 0]
        raise ValueError(
            f"EP={ep} does not divide the {cfg.experts} experts of {cfg.name}: each EP rank owns "
            f"the same whole experts; use EP in {{{', '.join(map(str, ok))}}}"
        )
    if (tp * dp) % (ep * etp):
        raise ValueError(
            f"EP × ETP = {ep * etp} does not divide TP × {'CP × ' * (cp > 1)}DP = {tp * dp}: the "
            "expert layout "
            "folds into the same GPUs of a pipeline stage; pick EP × ETP among the divisors of "
            f"{tp * dp}"
        )
    return tp * dp // (ep * etp)


def _shard(n: float, k: int) -> float:
    """n elements over k ranks: ceil(n / k) for a whole count (ZeRO pads the flat buffer)."""
    return -(-int(n) // k) if float(n).is_integer() else n / k


def ep_memory(
    cfg: MoeConfig,
    *,
    ep: int,
    etp: int = 1,
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
    cp: int = 1,
    zero1=True,
) -> EpMemory:
    """Model-state bytes on one GPU of a stage (layers split evenly over PP)."""
    edp = check_expert_layout(cfg, ep=ep, etp=etp, tp=tp, dp=dp, cp=cp)
    pp = whole_number("PP", pp)
    dense = moe_spec(cfg).params_per_gpu(tp, 1, 0)  # one TP rank's share of the whole model
    dense, expert = (dense if pp == 1 else dense / pp), counts(cfg).routed_expert / (ep * etp * pp)
    expert = int(expert) if float(expert).is_integer() else expert
    opt = 12 * (_shard(dense, dp * cp if zero1 else 1) + _shard(expert, edp if zero1 else 1))
    return EpMemory(
        dense_params_per_gpu=dense,
        expert_params_per_gpu=expert,
        parameters_bytes=2 * (dense + expert),
        gradients_bytes=2 * (dense + expert),
        optimizer_bytes=opt,
        edp=edp,
    )


def flops_per_token(cfg: MoeConfig, *, training: bool = True) -> float:
    """2 FLOPs per active parameter forward, 6 for forward + backward (attention scores aside)."""
    return (6 if training else 2) * counts(cfg).active
