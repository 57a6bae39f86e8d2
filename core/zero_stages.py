"""ZeRO stages: what each shards over the data-parallel ranks, and PyTorch's name for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ZeroStage:
    """One ZeRO stage: display label, the model states it shards over the DP ranks, source."""

    label: str
    shards: str
    pytorch: str  # PyTorch's name for the same split (stage 0 is plain DDP, FSDP NO_SHARD)
    source: str


# Rajbhandari et al., SC'20 (arXiv:1910.02054) Sec. 5; PyTorch names the same splits
# NO_SHARD / SHARD_GRAD_OP / FULL_SHARD (torch.distributed.fsdp.ShardingStrategy).
ZERO_STAGES: dict[int, ZeroStage] = {
    z: ZeroStage(label=label, shards=shards, pytorch=pt, source=src)
    for z, label, shards, pt, src in [
        (0, "DDP", "nothing", "NO_SHARD", "PyTorch DDP; FSDP NO_SHARD"),
        (1, "ZeRO-1", "optimizer states", "ZeroRedundancyOptimizer", "ZeRO Sec. 5.1 (P_os)"),
        (2, "ZeRO-2", "optimizer states, gradients", "SHARD_GRAD_OP", "ZeRO Sec. 5.2 (P_os+g)"),
        (3, "ZeRO-3", "all model states", "FULL_SHARD", "ZeRO Sec. 5.3 (P_os+g+p)"),
    ]
}
