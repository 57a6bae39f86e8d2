"""Planner: time one DP x TP x PP x ZeRO layout on a cluster: step time, throughput, MFU, memory
and where the time goes.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.hardware import Cluster
from core.memory import MemoryResult, budget
from core.model import ModelSpec
from core.parallel import GroupSpan, Layout
from core.pipeline import PipelineResult, simulate
from core.planner.cp_ep import layout_spans
from core.planner.grid import GridPlacement, grid_placement
from core.planner.stage_memory import layout_memory
from core.planner.stage_work import StageTimes, all_stage_times
from core.planner.step_time import Breakdown, step_breakdown
from core.training import Training
from core.units import format_bytes


@dataclass(frozen=True, kw_only=True, eq=False)
class Evaluation:
    """One layout's predicted step: time, throughput, utilisation, memory and where the time
    goes.
    """

    model: ModelSpec
    cluster: Cluster
    training: Training
    layout: Layout
    num_microbatches: int  # per pipeline: B / (DP x micro-batch)
    step_time_s: float
    tokens_per_s: float
    mfu: float  # model FLOPs (6N + attention, no recompute) / (GPUs x dense peak x step)
    hfu: float  # hardware FLOPs (recompute included) / the same
    model_flops: float  # per step
    hardware_flops: float
    memory: MemoryResult
    capacity_bytes: float
    fits: bool
    breakdown: Breakdown
    stages: tuple[StageTimes, ...]  # every pipeline stage, first to last
    spans: dict[str, GroupSpan]
    dp_sync_s: float  # gradient sync before any overlap
    warnings: tuple[str, ...]

    @property
    def stage(self) -> StageTimes:
        """The busiest stage (most F + B per micro-batch): the one the breakdown follows."""
        return max(self.stages, key=lambda st: (st.busy_s, st.stage))

    @property
    def tflops_per_gpu(self) -> float:
        """Model TFLOP/s per GPU (MFU x peak)."""
        return self.model_flops / self.step_time_s / self.cluster.num_gpus / 1e12

    @property
    def hardware_tflops_per_gpu(self) -> float:
        """Hardware TFLOP/s per GPU, the convention of Narayanan et al. 2021 (full recompute: Eq.
        3).
        """
        return self.hardware_flops / self.step_time_s / self.cluster.num_gpus / 1e12

    @property
    def placement(self) -> GridPlacement:
        """The TP × CP × PP × DP grid on the nodes: the one whose group spans the planner costs
        (core.planner.grid; CP right after TP, EP groups inside DP × CP)."""
        return grid_placement(self.layout, self.cluster)

    def pipeline(self) -> PipelineResult:
        """The simulated schedule of one step with this layout's real F and B durations."""
        lay, sts = self.layout, self.stages
        return simulate(
            lay.schedule,
            lay.pp,
            self.num_microbatches,
            lay.num_chunks,
            [st.forward_s for st in sts],
            [st.backward_s / 2 for st in sts],
            [st.backward_s / 2 for st in sts],
        )


def check_model_shape(model) -> None:
    if not isinstance(model, ModelSpec):
        raise ValueError(
            "the planner needs a model shape (layers, hidden size, heads) to count FLOPs "
            "and activations; pick a preset or enter a custom shape"
        )


def _gb(num_bytes: float) -> str:
    """Warnings in the app's default unit, GB, the same number the metric and the bar show."""
    return format_bytes(num_bytes, "decimal")


def usable_bytes(cluster: Cluster, training: Training) -> float:
    return budget(0.0, cluster.gpu.hbm_bytes, training.memory_headroom).usable_bytes


def capacity_fits(cluster: Cluster, training: Training, mem: MemoryResult) -> bool:
    """The one reserve and verdict of every page (core.memory.budget)."""
    return budget(mem.total_bytes, cluster.gpu.hbm_bytes, training.memory_headroom).fits


def evaluate(model, cluster: Cluster, layout: Layout, training: Training) -> Evaluation:
    """Predict step time, tokens/s, MFU, per-GPU memory and the step-time breakdown of a layout."""
    check_model_shape(model)
    layout.check(cluster.num_gpus, training.global_batch)
    spans = layout_spans(layout, cluster)
    mem = layout_memory(model, layout, training)
    return evaluate_placed(model, cluster, layout, training, spans, mem)


def evaluate_placed(
    model: ModelSpec,
    cluster: Cluster,
    lay: Layout,
    training: Training,
    spans: dict[str, GroupSpan],
    mem: MemoryResult,
    stages: tuple[StageTimes, ...] | None = None,
) -> Evaluation:
    """evaluate() with the placement, memory and (optionally) the stage times already known."""
    s, m = training.seq_len, training.num_microbatches(lay)
    sts = stages or all_stage_times(model, cluster, spans, lay, training)
    # dense and expert parameters alike sync over DP × CP (experts really over EDP = DP × CP / EP)
    psi = tuple(x.params_on_gpu + getattr(x, "expert_params_on_gpu", 0) for x in mem.stages)
    bd, sync = step_breakdown(model, cluster, spans, lay, training, sts, psi)
    step, tokens = bd.total_s, training.global_batch * s
    model_flops = model.flops_per_token(s) * tokens  # 6N + 12 l h s per token (PaLM App. B)
    hw_flops = model_flops * (1 + model.recompute_flops_fraction(s, training.recompute))
    peak = cluster.num_gpus * cluster.gpu.bf16_flops_per_s * step
    ok = capacity_fits(cluster, training, mem)
    return Evaluation(
        model=model,
        cluster=cluster,
        training=training,
        layout=lay,
        num_microbatches=m,
        step_time_s=step,
        tokens_per_s=tokens / step,
        mfu=model_flops / peak,
        hfu=hw_flops / peak,
        model_flops=model_flops,
        hardware_flops=hw_flops,
        memory=mem,
        capacity_bytes=cluster.gpu.hbm_bytes,
        fits=ok,
        breakdown=bd,
        stages=sts,
        spans=spans,
        dp_sync_s=sync,
        warnings=_warnings(cluster, lay, spans, mem, ok, m, training),
    )


def _warnings(cluster, lay, spans, mem, ok, m, training) -> tuple[str, ...]:
    out, tp, gpn = [], spans["tp"], cluster.gpus_per_node
    if tp.crosses_node:
        why = (
            f"TP={lay.tp} exceeds {gpn} GPUs per node"
            if lay.tp > gpn
            else f"order {lay.order} puts TP groups across nodes"
        )
        out.append(
            f"{why}: {tp.crossing_groups} of {tp.num_groups} TP groups cross the node boundary, "
            f"so every layer's all-reduces run on {tp.link}; keep TP ≤ {gpn} and innermost"
        )
    if not ok:
        used = budget(mem.total_bytes, cluster.gpu.hbm_bytes, training.memory_headroom).used_bytes
        out.append(
            f"does not fit: {_gb(used)} "
            f"per GPU (stage {mem.stage}, with the {training.memory_headroom:.0%} reserve) > "
            f"{_gb(cluster.gpu.hbm_bytes)} of HBM; raise TP, PP or the ZeRO stage, lower the "
            "micro-batch, or recompute"
        )
    if lay.pp > 1 and m < lay.pp:
        out.append(
            f"only {m} micro-batches for PP={lay.pp} stages: most of the pipeline idles; "
            f"use ≥ {4 * lay.pp} micro-batches (smaller micro-batch or DP)"
        )
    return tuple(out)
