"""Per-GPU training memory: model states under ZeRO/FSDP with TP/PP, activations, what fits."""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.checks import check_choice, check_divides, whole_number
from core.memory.activations import RECOMPUTE_MODES, SCHEDULES, RecomputeOption, stage_activations
from core.model import ModelSpec


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """Bytes per parameter of weights, gradients and optimizer state; `source` cites it."""

    name: str
    param_bytes: int
    grad_bytes: int
    optimizer_bytes: int
    source: str

    @property
    def bytes_per_param(self) -> int:
        return self.param_bytes + self.grad_bytes + self.optimizer_bytes


RECIPES: dict[str, Recipe] = {
    n: Recipe(name=n, param_bytes=p, grad_bytes=g, optimizer_bytes=o, source=src)
    for n, p, g, o, src in [
        (
            "mixed_adam",
            2,
            2,
            12,
            "ZeRO paper Sec. 3.1: fp16 weights + grads, fp32 master + m + v (K = 12)",
        ),
        (
            "megatron_fp32_grads",
            2,
            4,
            12,
            "NVIDIA/Megatron-LM megatron/training/theoretical_memory_usage.py; fp32 grads (#654)",
        ),
        (
            "fp32_adam",
            4,
            4,
            8,
            "fp32 weights + grads + m + v (Playbook); FSDP MixedPrecision's sharded fp32",
        ),
        (
            "bf16_no_master",
            2,
            2,
            8,
            "bf16 weights + grads, fp32 m + v, no master (Playbook charts)",
        ),
        (
            "sgd_momentum",
            2,
            2,
            8,
            "SGD: fp32 master + momentum = 8 B (EleutherAI Transformer Math 101)",
        ),
    ]
}
ZERO_STAGE_LABELS = {0: "DDP", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3"}
# PyTorch FSDP ShardingStrategy -> ZeRO stage (pytorch/pytorch torch/distributed/fsdp/api.py);
# HYBRID_* shard inside a node, replicate across.
FSDP_STRATEGIES = {
    "NO_SHARD": 0,
    "SHARD_GRAD_OP": 2,
    "FULL_SHARD": 3,
    "HYBRID_SHARD": 3,
    "_HYBRID_SHARD_ZERO2": 2,
}


def get_recipe(name: str) -> Recipe:
    """Recipe by name, with a clear error for unknown names."""
    check_choice("recipe", name, RECIPES)
    return RECIPES[name]


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
    zero_stage = int(check_choice("zero_stage", zero_stage, (0, 1, 2, 3)))
    # ZeRO paper Sec. 5: stage 1 shards optimizer state, 2 adds grads, 3 adds weights; a shard
    # holds ceil(Psi / dp) elements (frameworks pad the flat buffer to a multiple of dp).
    shard = -(-psi // dp)
    return ModelStates(
        parameters_bytes=r.param_bytes * (shard if zero_stage >= 3 else psi),
        gradients_bytes=r.grad_bytes * (shard if zero_stage >= 2 else psi),
        optimizer_bytes=r.optimizer_bytes * (shard if zero_stage >= 1 else psi),
    )


@dataclass(frozen=True, kw_only=True)
class ParallelConfig:
    """DP x TP x PP degrees, ZeRO stage, sequence parallelism; shard_degree < dp means hybrid."""

    dp: int = 1
    tp: int = 1
    pp: int = 1
    zero_stage: int = 0
    sequence_parallel: bool = False
    shard_degree: int | None = None

    def __post_init__(self) -> None:
        for f in ("dp", "tp", "pp"):  # store ints even when given integral floats
            object.__setattr__(self, f, whole_number(f, getattr(self, f)))
        object.__setattr__(
            self, "zero_stage", int(check_choice("zero_stage", self.zero_stage, (0, 1, 2, 3)))
        )
        if self.shard_degree is not None:
            object.__setattr__(
                self, "shard_degree", whole_number("shard_degree", self.shard_degree)
            )
            check_divides(
                "shard_degree",
                self.shard_degree,
                self.dp,
                "DP ranks",
                "the DP ranks must split into whole shard groups",
            )


@dataclass(frozen=True, kw_only=True)
class TrainingConfig:
    """Micro-batch shape, pipeline schedule, precision recipe and memory-saving switches."""

    micro_batch: int = 1
    seq_len: int = 2048
    num_microbatches: int = 1
    recipe: str = "mixed_adam"
    recompute: str = "none"
    flash_attention: bool = False
    schedule: str = "1f1b"
    virtual_stages: int = 1  # v: model chunks per rank, interleaved 1F1B only

    def __post_init__(self) -> None:
        for f in ("micro_batch", "seq_len", "num_microbatches", "virtual_stages"):
            object.__setattr__(self, f, whole_number(f, getattr(self, f)))
        get_recipe(self.recipe)
        check_choice("recompute", self.recompute, RECOMPUTE_MODES)
        check_choice("schedule", self.schedule, SCHEDULES)
        if self.virtual_stages > 1 and self.schedule != "interleaved_1f1b":
            raise ValueError(
                f"virtual_stages={self.virtual_stages} needs schedule='interleaved_1f1b'"
            )


@dataclass(frozen=True, kw_only=True)
class StageMemory:
    """One GPU of one pipeline stage. layers_in_flight = stored layers x micro-batches."""

    stage: int
    params_on_gpu: int  # Psi of this stage and TP rank, before ZeRO sharding
    parameters_bytes: int
    gradients_bytes: int
    optimizer_bytes: int
    activations_bytes: float
    layer_activation_bytes: float
    layers_in_flight: float
    extra_activation_bytes: float  # embedding / logits terms, all micro-batches in flight

    @property
    def states_bytes(self) -> int:
        """Model states: parameters + gradients + optimizer states."""
        return self.parameters_bytes + self.gradients_bytes + self.optimizer_bytes

    @property
    def total_bytes(self) -> float:
        return self.states_bytes + self.activations_bytes


@dataclass(frozen=True, kw_only=True)
class MemoryResult(StageMemory):
    """The fullest pipeline stage's per-GPU bytes (inherited fields, `stage` is its index), plus
    all.
    """

    stages: tuple[StageMemory, ...]
    parallel: ParallelConfig
    training: TrainingConfig


def _stage(model, par: ParallelConfig, tr: TrainingConfig, r: int) -> StageMemory:
    psi = model.params_per_gpu(par.tp, par.pp, r)
    states = model_state_bytes_per_gpu(psi, par.shard_degree or par.dp, par.zero_stage, tr.recipe)
    layer, flight, extras = stage_activations(model, r, par.tp, par.pp, par.sequence_parallel, tr)
    return StageMemory(
        stage=r,
        params_on_gpu=psi,
        parameters_bytes=states.parameters_bytes,
        gradients_bytes=states.gradients_bytes,
        optimizer_bytes=states.optimizer_bytes,
        activations_bytes=flight * layer + extras,
        layer_activation_bytes=layer,
        layers_in_flight=flight,
        extra_activation_bytes=extras,
    )


def memory_per_gpu(model, parallel: ParallelConfig, training: TrainingConfig) -> MemoryResult:
    """Per-GPU bytes of every pipeline stage; the headline fields are the fullest stage's."""
    p, m = parallel.pp, training.num_microbatches
    model.check_split(parallel.tp, p, training.virtual_stages)
    if training.schedule == "interleaved_1f1b" and (p < 2 or m % p):
        raise ValueError(
            f"interleaved 1F1B with PP={p} and {m} micro-batches: Megatron needs PP ≥ 2 and "
            f"a multiple of PP micro-batches; use PP ≥ 2 and {max(p, 2)}, {2 * max(p, 2)}, …"
        )
    stages = tuple(_stage(model, parallel, training, r) for r in range(parallel.pp))
    worst = max(stages, key=lambda st: (st.total_bytes, -st.stage))
    return MemoryResult(**vars(worst), stages=stages, parallel=parallel, training=training)


def memory_by_zero_stage(
    model, parallel: ParallelConfig, training: TrainingConfig
) -> tuple[MemoryResult, ...]:
    """The same run under DDP, ZeRO-1, ZeRO-2 and ZeRO-3."""
    return tuple(memory_per_gpu(model, replace(parallel, zero_stage=z), training) for z in range(4))


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
    zero_stage = int(check_choice("zero_stage", zero_stage, (0, 1, 2, 3)))
    ring = psi * (n - 1) / n  # a ring reduce-scatter or all-gather sends (n-1)/n of the tensor
    # Stage 0 all-reduces grads (= reduce-scatter + all-gather); 1-2 reduce-scatter grads and
    # all-gather updated weights; 3 all-gathers weights before forward and again before backward.
    return ZeroComm(
        gradient_bytes=(2 if zero_stage == 0 else 1) * ring * r.grad_bytes,
        parameter_bytes=(0, 1, 1, 2)[zero_stage] * ring * r.param_bytes,
    )


def recompute_tradeoff(
    model: ModelSpec, parallel: ParallelConfig, training: TrainingConfig
) -> tuple[RecomputeOption, ...]:
    """Memory saved vs extra compute for none / selective / full recompute."""
    acts = {
        m: memory_per_gpu(model, parallel, replace(training, recompute=m)).activations_bytes
        for m in RECOMPUTE_MODES
    }
    return tuple(
        RecomputeOption(
            recompute=m,
            activations_bytes=a,
            saved_bytes=acts["none"] - a,
            extra_compute_fraction=model.recompute_flops_fraction(training.seq_len, m),
        )
        for m, a in acts.items()
    )


def layer_allgather_bytes(model: ModelSpec, tp: int = 1, recipe: str = "mixed_adam") -> int:
    """Bytes of one layer's whole weights that ZeRO-3 / FULL_SHARD all-gathers before forward and
    backward.
    """
    return model.layer_params_per_gpu(whole_number("tp", tp)) * get_recipe(recipe).param_bytes


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
    parallel: ParallelConfig,
    training: TrainingConfig,
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    max_dp: int = 65536,
    max_micro_batch: int = 4096,
) -> tuple[FitRow, ...]:
    """For each ZeRO stage, the fewest GPUs (DP degree) and the largest micro-batch that fit."""

    def ok(par, tr):
        return fits(memory_per_gpu(model, par, tr).total_bytes, capacity_bytes, reserve_bytes)

    rows = []
    for z in range(4):
        par = replace(parallel, zero_stage=z, shard_degree=None)
        # DDP memory does not fall with dp: only dp = 1 needs checking.
        dp = _first_true(
            lambda d, par=par: ok(replace(par, dp=d), training), 1, 1 if z == 0 else max_dp
        )
        mb = None
        if isinstance(model, ModelSpec):
            bad = _first_true(
                lambda k, par=par: not ok(par, replace(training, micro_batch=k)), 1, max_micro_batch
            )
            mb = max_micro_batch if bad is None else bad - 1
        rows.append(
            FitRow(
                zero_stage=z, min_dp=dp, min_gpus=dp and dp * par.tp * par.pp, max_micro_batch=mb
            )
        )
    return tuple(rows)
