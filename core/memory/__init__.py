"""Per-GPU training memory: ZeRO/FSDP sharding, activations, what fits."""

from core.memory.activations import (
    SIZED_SCHEDULES,
    Block,
    RecomputeOption,
    activation_bytes_per_layer,
    block_of,
    edge_activation_bytes,
    gpt_block,
    layers_in_flight,
    stage_activations,
)
from core.memory.fit import Budget, FitRow, budget, fits, what_fits
from core.memory.per_gpu import (
    MemoryResult,
    StageMemory,
    memory_by_zero_stage,
    memory_per_gpu,
    recompute_tradeoff,
    shard_degrees,
)
from core.memory.zero import (
    FSDP_STRATEGIES,
    ModelStates,
    ZeroComm,
    fsdp_to_zero,
    gathered_unit_bytes,
    layer_allgather_bytes,
    model_state_bytes_per_gpu,
    zero_comm_bytes_per_gpu,
)

__all__ = [
    "Block",
    "Budget",
    "FSDP_STRATEGIES",
    "FitRow",
    "MemoryResult",
    "ModelStates",
    "RecomputeOption",
    "SIZED_SCHEDULES",
    "StageMemory",
    "ZeroComm",
    "activation_bytes_per_layer",
    "block_of",
    "budget",
    "edge_activation_bytes",
    "fits",
    "fsdp_to_zero",
    "gathered_unit_bytes",
    "gpt_block",
    "layer_allgather_bytes",
    "layers_in_flight",
    "memory_by_zero_stage",
    "memory_per_gpu",
    "model_state_bytes_per_gpu",
    "recompute_tradeoff",
    "shard_degrees",
    "stage_activations",
    "what_fits",
    "zero_comm_bytes_per_gpu",
]
