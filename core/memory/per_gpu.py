"""Per-GPU training memory of a layout: model states under ZeRO/FSDP with TP/PP, plus
activations, for every pipeline stage.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.memory.activations import RecomputeOption, stage_activations
from core.memory.zero import gathered_unit_bytes, model_state_bytes_per_gpu
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


def _stage(model, lay: Layout, tr: Training, m: int, r: int) -> StageMemory:
    psi, nd = model.params_per_gpu(lay.tp, lay.pp, r), lay.shard_degree or lay.dp
    states = model_state_bytes_per_gpu(psi, nd, lay.zero_stage, tr.recipe)
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
        gathered_bytes=gathered_unit_bytes(model, lay.tp, r, lay.pp, tr.recipe) if sharded else 0,
    )


def memory_per_gpu(model, layout: Layout, training: Training) -> MemoryResult:
    """Per-GPU bytes of every pipeline stage; the headline fields are the fullest stage's."""
    p, m = layout.pp, training.num_microbatches(layout)
    model.check_split(layout.tp, p, layout.num_chunks)
    if layout.schedule == "interleaved_1f1b" and (p < 2 or m % p):
        raise ValueError(
            f"interleaved 1F1B with PP={p} and {m} micro-batches: Megatron needs PP ≥ 2 and "
            f"a multiple of PP micro-batches; use PP ≥ 2 and {max(p, 2)}, {2 * max(p, 2)}, …"
        )
    stages = tuple(_stage(model, layout, training, m, r) for r in range(p))
    worst = max(stages, key=lambda st: (st.total_bytes, -st.stage))
    return MemoryResult(**vars(worst), stages=stages, layout=layout, training=training)


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
