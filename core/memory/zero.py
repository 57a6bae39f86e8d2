"""Model states under ZeRO / FSDP sharding: bytes per GPU, bytes sent per step, FSDP strategies."""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import check_choice, check_divides, whole_number
from core.model import ModelSpec
from core.parallel import ZERO_STAGES
from core.training import get_recipe

# PyTorch FSDP ShardingStrategy -> ZeRO stage (pytorch/pytorch torch/distributed/fsdp/api.py);
# HYBRID_* shard inside a node, replicate across.
FSDP_STRATEGIES = {
    "NO_SHARD": 0,
    "SHARD_GRAD_OP": 2,
    "FULL_SHARD": 3,
    "HYBRID_SHARD": 3,
    "_HYBRID_SHARD_ZERO2": 2,
}


def fsdp_to_zero(strategy: str, dp: int, gpus_per_node: int = 8) -> tuple[int, int]:
    """(ZeRO stage, sharding degree) of a PyTorch FSDP strategy; hybrid shards within a node."""
    check_choice("FSDP strategy", strategy, FSDP_STRATEGIES)
    dp = whole_number("dp", dp)
    shard = min(dp, whole_number("gpus_per_node", gpus_per_node)) if "HYBRID" in strategy else dp
    check_divides(
        "shard group", shard, dp, "DP ranks", "every replica must hold a whole shard group"
    )
    return FSDP_STRATEGIES[strategy], shard


@dataclass(frozen=True, kw_only=True)
class ModelStates:
    """Per-GPU bytes of weights, gradients and optimizer state."""

    parameters_bytes: int
    gradients_bytes: int
    optimizer_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.parameters_bytes + self.gradients_bytes + self.optimizer_bytes


def model_state_bytes_per_gpu(num_params, dp, zero_stage, recipe="mixed_adam") -> ModelStates:
    """Weights, grads and optimizer bytes per GPU for Psi params over dp ranks at a ZeRO stage."""
    psi, dp, r = whole_number("num_params", num_params), whole_number("dp", dp), get_recipe(recipe)
    zero_stage = int(check_choice("zero_stage", zero_stage, ZERO_STAGES))
    # ZeRO paper Sec. 5: stage 1 shards optimizer state, 2 adds grads, 3 adds weights; a shard
    # holds ceil(Psi / dp) elements (frameworks pad the flat buffer to a multiple of dp).
    shard = -(-psi // dp)
    return ModelStates(
        parameters_bytes=r.param_bytes * (shard if zero_stage >= 3 else psi),
        gradients_bytes=r.grad_bytes * (shard if zero_stage >= 2 else psi),
        optimizer_bytes=r.optimizer_bytes * (shard if zero_stage >= 1 else psi),
    )


@dataclass(frozen=True, kw_only=True)
class ZeroComm:
    """Bytes each GPU sends per step: gradient all-reduce / reduce-scatter, weight all-gathers."""

    gradient_bytes: float
    parameter_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.gradient_bytes + self.parameter_bytes


def zero_comm_bytes_per_gpu(num_params, dp, zero_stage, recipe="mixed_adam") -> ZeroComm:
    """Bytes each GPU sends per step at a ZeRO stage (ZeRO paper Sec. 7: 2 Psi; stage 3: 3 Psi)."""
    psi, n, r = whole_number("num_params", num_params), whole_number("dp", dp), get_recipe(recipe)
    zero_stage = int(check_choice("zero_stage", zero_stage, ZERO_STAGES))
    ring = psi * (n - 1) / n  # a ring reduce-scatter or all-gather sends (n-1)/n of the tensor
    # Stage 0 all-reduces grads (= reduce-scatter + all-gather); 1-2 reduce-scatter grads and
    # all-gather updated weights; 3 all-gathers weights before forward and again before backward.
    return ZeroComm(
        gradient_bytes=(2 if zero_stage == 0 else 1) * ring * r.grad_bytes,
        parameter_bytes=(0, 1, 1, 2)[zero_stage] * ring * r.param_bytes,
    )


def layer_allgather_bytes(
    model: ModelSpec, tp: int = 1, recipe: str = "mixed_adam", ep: int = 1
) -> int:
    """Bytes of one layer's whole weights that ZeRO-3 / FULL_SHARD all-gathers before forward and
    backward; an MoE layer's routed experts count only this GPU's E / EP of them."""
    tp = whole_number("tp", tp)
    unit = model.layer_params_per_gpu(tp, whole_number("ep", ep)) if ep > 1 else None
    return (unit or model.layer_params_per_gpu(tp)) * get_recipe(recipe).param_bytes


def gathered_unit_bytes(model, tp: int, stage: int, pp: int, recipe="mixed_adam", ep=1) -> int:
    """ZeRO-3 / FULL_SHARD's working set on one GPU: the largest unit of the stage gathered whole
    (the current one) and the next one prefetched, each at the weights' dtype, plus the current
    unit's unsharded gradients before their reduce-scatter (docs/notes/memory.md §6).
    """
    # PyTorch FSDP with BACKWARD_PRE prefetch holds current params, next params and current
    # grads (pytorch/pytorch torch/distributed/fsdp/api.py, BackwardPrefetch); DeepSpeed's
    # estimator adds 4 x the largest layer for the same
    # (deepspeedai/DeepSpeed deepspeed/runtime/zero/stage3.py).
    if not isinstance(model, ModelSpec):
        return 0  # a bare parameter count has no layers to gather
    unit = model.layer_params_per_gpu(tp, ep) if ep > 1 else model.layer_params_per_gpu(tp)
    if stage == 0 or stage == pp - 1:  # the vocab-parallel embedding / head is a unit too
        unit = max(unit, -(-model.word_embedding_params // tp))
    r = get_recipe(recipe)
    return unit * (2 * r.param_bytes + r.grad_bytes)
