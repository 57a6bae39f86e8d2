"""Expert parallelism: routers, one MoE layer dispatched and combined by all-to-all on real data,
capacity and drops, bias balancing, node-limited routing, parameter counts of published MoE
models, memory per GPU and the 5-D layout rules.
"""

from core.expert_parallel.balance import BiasRun, bias_balancing
from core.expert_parallel.layer import MoeLayerResult, check_ep, moe_layer
from core.expert_parallel.memory import EpMemory, check_expert_layout, ep_memory, flops_per_token
from core.expert_parallel.models import (
    MOE_PRESETS,
    MoeConfig,
    MoeCounts,
    counts,
    layer_tensors,
    model_tensors,
    moe_preset,
)
from core.expert_parallel.placement import NodeTraffic, nic_bytes_per_gpu, node_stats, node_traffic
from core.expert_parallel.router import (
    ROUTERS,
    capacity,
    keep_within_capacity,
    route,
    token_batch,
    top_k,
)
from core.expert_parallel.spec import ALL_PRESETS, MOE_MODEL_PRESETS, MoeSpec, any_preset, moe_spec
from core.expert_parallel.validate import CP_KINDS, check_5d

__all__ = [
    "ALL_PRESETS",
    "MOE_MODEL_PRESETS",
    "MoeSpec",
    "any_preset",
    "moe_spec",
    "BiasRun",
    "CP_KINDS",
    "EpMemory",
    "NodeTraffic",
    "bias_balancing",
    "check_5d",
    "check_expert_layout",
    "ep_memory",
    "flops_per_token",
    "nic_bytes_per_gpu",
    "node_stats",
    "node_traffic",
    "MOE_PRESETS",
    "ROUTERS",
    "MoeConfig",
    "MoeCounts",
    "MoeLayerResult",
    "capacity",
    "check_ep",
    "counts",
    "keep_within_capacity",
    "layer_tensors",
    "model_tensors",
    "moe_layer",
    "moe_preset",
    "route",
    "token_batch",
    "top_k",
]
