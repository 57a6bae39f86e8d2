"""Per-GPU training memory of a layout: model states under ZeRO/FSDP with TP/PP/CP/EP, plus
activations, for every pipeline stage.

CP and EP (`NVIDIA/Megatron-LM megatron/core/parallel_state.py`; the Ultra-Scale Playbook's "5D
parallelism" section, nanotron/ultrascale-playbook): CP ranks hold replicas of the weights and
reduce their gradients together with the DP ranks (the "dp_cp" group), so ZeRO shards the dense
states over DP x CP; a routed expert's weights are split over EP x ETP (ETP = TP) and its states
sharded over the expert-data-parallel group, EDP = DP x CP / EP (DeepSeek-V3 report arXiv:
2412.19437 §3.4 trains with 64-way EP and ZeRO-1 over the rest). Activations: each CP rank stores
S / CP tokens of every layer (core.memory.activations).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.memory.activations import RecomputeOption, stage_activations
from core.memory.zero import ModelStates, gathered_unit_bytes, model_state_bytes_per_gpu
from core.model import ModelSpec
from core.parallel import Layout
from core.training import RECOMPUTE_MODES, Training


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
    gathered_bytes: int = 0  # ZeRO-3 / FULL_SHARD: gathered + prefetched unit and its gradients
    expert_params_on_gpu: int = 0  # routed-expert params of this GPU (÷ EP x TP), before ZeRO

    @property
    def states_bytes(self) -> int:
        """Model states: parameters + gradients + optimizer states."""
        return self.parameters_bytes + self.gradients_bytes + self.optimizer_bytes

    @property
    def total_bytes(self) -> float:
        """Everything this GPU's training holds at its peak (the reserve comes on top)."""
        return self.states_bytes + self.activations_bytes + self.gathered_bytes


@dataclass(frozen=True, kw_only=True)
class MemoryResult(StageMemory):
    """The fullest pipeline stage's per-GPU bytes (inherited fields, `stage` is its index), plus
    all.
    """

    stages: tuple[StageMemory, ...]
    layout: Layout
    training: Training


def num_experts(model) -> int:
    """Routed experts per MoE layer (core.expert_parallel.spec.MoeSpec); 0 for a dense model."""
    return getattr(model, "num_experts", 0)


def _sum(a: ModelStates, b: ModelStates) -> ModelStates:
    return ModelStates(**{k: getattr(a, k) + getattr(b, k) for k in vars(a)})


def shard_degrees(lay: Layout) -> tuple[int, int]:
    """ZeRO's sharding degrees (dense part, routed experts): DP x CP ranks (the HSDP group x CP)
    and the expert-data-parallel group, that / EP (DP x CP / EP when EP does not divide an HSDP
    group)."""
    nd = (lay.shard_degree or lay.dp) * lay.cp
    return nd, nd // lay.ep if nd % lay.ep == 0 else lay.edp


def _stage(model, lay: Layout, tr: Training, m: int, r: int) -> StageMemory:
    psi, (nd, nd_e) = model.params_per_gpu(lay.tp, lay.pp, r), shard_degrees(lay)
    states = model_state_bytes_per_gpu(psi, nd, lay.zero_stage, tr.recipe)
    psi_e = model.expert_params_per_gpu(lay.tp, lay.pp, r, lay.ep) if num_experts(model) else 0
    if psi_e:
        states = _sum(states, model_state_bytes_per_gpu(psi_e, nd_e, lay.zero_stage, tr.recipe))
    layer, flight, extras = stage_activations(model, r, lay, tr, m)
    sharded = lay.zero_stage == 3 and nd > 1  # weights sharded: each unit is gathered to use it
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
        gathered_bytes=gathered_unit_bytes(model, lay.tp, r, lay.pp, tr.recipe, lay.ep)
        if sharded
        else 0,
        expert_params_on_gpu=psi_e,
    )


def memory_per_gpu(model, layout: Layout, training: Training) -> MemoryResult:
    """Per-GPU bytes of every pipeline stage; the headline fields are the fullest stage's."""
    p, m = layout.pp, training.num_microbatches(layout)
    model.check_split(layout.tp, p, layout.num_chunks)
    check_cp_ep(model, layout, training.seq_len)
    if layout.schedule == "interleaved_1f1b" and (p < 2 or m % p):
        raise ValueError(
            f"interleaved 1F1B with PP={p} and {m} micro-batches: Megatron needs PP ≥ 2 and "
            f"a multiple of PP micro-batches; use PP ≥ 2 and {max(p, 2)}, {2 * max(p, 2)}, …"
        )
    stages = tuple(_stage(model, layout, training, m, r) for r in range(p))
    worst = max(stages, key=lambda st: (st.total_bytes, -st.stage))
    return MemoryResult(**vars(worst), stages=stages, layout=layout, training=training)


def check_cp_ep(model, layout: Layout, seq_len: int) -> None:
    """Raise core.expert_parallel.check_5d's message for the first CP / EP rule the run breaks:
    EP on a dense model or not dividing the experts, CP not dividing the sequence (2·CP chunks for
    zig-zag), Ulysses without whole heads per rank."""
    # Imported here: core.expert_parallel's package imports core.context_parallel, whose memory
    # module imports core.memory (no module-level cycle: validate imports only their rule modules).
    from core.expert_parallel.validate import check_5d

    lay, e = layout, num_experts(model)
    if lay.cp == 1 and lay.ep == 1 and not e:
        return
    shape = dict(seq_len=seq_len, heads=lay.tp, kv_heads=lay.tp, layers=lay.pp, cp_kind="ring")
    if isinstance(model, ModelSpec):  # a bare parameter count: only the EP rules apply
        shape = dict(
            seq_len=seq_len,
            heads=model.num_heads,
            kv_heads=model.num_kv_heads,
            layers=model.num_layers,
            cp_kind=lay.cp_kind,
        )
    degrees = dict(dp=lay.dp, tp=lay.tp, pp=lay.pp, cp=lay.cp, ep=lay.ep, etp=lay.tp)
    check_5d(gpus=lay.world_size, experts=e, **degrees, **shape)


def memory_by_zero_stage(model, layout: Layout, training: Training) -> tuple[MemoryResult, ...]:
    """The same run under DDP, ZeRO-1, ZeRO-2 and ZeRO-3."""
    return tuple(memory_per_gpu(model, replace(layout, zero_stage=z), training) for z in range(4))


def recompute_tradeoff(
    model: ModelSpec, layout: Layout, training: Training
) -> tuple[RecomputeOption, ...]:
    """Memory saved vs extra compute for none / selective / full recompute."""
    acts = {
        m: memory_per_gpu(model, layout, replace(training, recompute=m)).activations_bytes
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
