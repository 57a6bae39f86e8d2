"""Planner: time one DP x TP x PP x ZeRO layout on a cluster, or search every layout and rank
them.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.hardware import Cluster
from core.memory import MemoryResult, ParallelConfig, TrainingConfig, fits, memory_per_gpu
from core.model import ModelSpec
from core.parallel import (
    DEFAULT_ORDER,
    SCHEDULE_LABELS,
    GroupSpan,
    Layout,  # noqa: F401
    ParallelDims,
    Placement,
    group_span,
    place,
)
from core.pipeline import PipelineResult, simulate
from core.planner.step_time import Breakdown, StageTimes, stage_times, step_breakdown
from core.planner.training import Training


@dataclass(frozen=True, kw_only=True, eq=False)
class Evaluation:
    """One layout's predicted step: time, throughput, utilisation, memory and where the time
    goes.
    """

    model: ModelSpec
    cluster: Cluster
    training: Training
    layout: Layout  # resolved: micro-batch and schedule set
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
    stage: StageTimes
    spans: dict[str, GroupSpan]
    dp_sync_s: float  # gradient sync before any overlap
    warnings: tuple[str, ...]

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
    def placement(self) -> Placement:
        return place(self.layout.dims, self.cluster)

    def pipeline(self) -> PipelineResult:
        """The simulated schedule of one step with this layout's real F and B durations."""
        lay, st = self.layout, self.stage
        return simulate(
            lay.schedule,
            lay.pp,
            self.num_microbatches,
            lay.num_chunks,
            st.forward_s,
            st.backward_s / 2,
            st.backward_s / 2,
        )


def _need_shape(model) -> None:
    if not isinstance(model, ModelSpec):
        raise ValueError(
            "the planner needs a model shape (layers, hidden size, heads) to count FLOPs "
            "and activations; pick a preset or enter a custom shape"
        )


def layout_memory(model: ModelSpec, lay: Layout, training: Training) -> MemoryResult:
    """Per-GPU memory of a resolved layout, from core.memory."""
    return memory_per_gpu(
        model,
        ParallelConfig(
            dp=lay.dp,
            tp=lay.tp,
            pp=lay.pp,
            zero_stage=lay.zero_stage,
            sequence_parallel=training.sequence_parallel,
        ),
        TrainingConfig(
            micro_batch=lay.micro_batch,
            seq_len=training.seq_len,
            num_microbatches=training.global_batch // (lay.dp * lay.micro_batch),
            recipe=training.recipe,
            recompute=training.recompute,
            flash_attention=training.flash_attention,
            schedule=lay.schedule,
            virtual_stages=lay.num_chunks,
        ),
    )


def _usable(cluster: Cluster, training: Training) -> float:
    return cluster.gpu.hbm_bytes * (1 - training.memory_headroom)


def capacity_fits(cluster: Cluster, training: Training, mem: MemoryResult) -> bool:
    cap = cluster.gpu.hbm_bytes
    return fits(mem.total_bytes, cap, training.memory_headroom * cap)


def evaluate(model, cluster: Cluster, layout: Layout, training: Training) -> Evaluation:
    """Predict step time, tokens/s, MFU, per-GPU memory and the step-time breakdown of a layout."""
    _need_shape(model)
    lay = layout.resolved(training)
    lay.check(cluster.num_gpus, training.global_batch)
    spans = {d: group_span(lay.dims, d, cluster) for d in ("dp", "pp", "tp")}
    return _evaluate(model, cluster, lay, training, spans, layout_memory(model, lay, training))


def _evaluate(
    model: ModelSpec,
    cluster: Cluster,
    lay: Layout,
    training: Training,
    spans: dict[str, GroupSpan],
    mem: MemoryResult,
) -> Evaluation:
    s, m = training.seq_len, training.global_batch // (lay.dp * lay.micro_batch)
    st = stage_times(model, cluster, spans, lay, training, mem.stages[-1].params_on_gpu)
    bd, sync = step_breakdown(
        st, cluster, spans, lay, training, max(x.params_on_gpu for x in mem.stages)
    )
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
        stage=st,
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
        out.append(
            f"does not fit: {mem.total_bytes / 1e9:.1f} GB per GPU (stage {mem.stage}) > "
            f"{_usable(cluster, training) / 1e9:.1f} GB usable ({training.memory_headroom:.0%} "
            "headroom); raise TP, PP or the ZeRO stage, lower the micro-batch, or recompute"
        )
    if lay.pp > 1 and m < lay.pp:
        out.append(
            f"only {m} micro-batches for PP={lay.pp} stages: most of the pipeline idles; "
            f"use ≥ {4 * lay.pp} micro-batches (smaller micro-batch or DP)"
        )
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class Rejected:
    """A layout that cannot run, with the rule it breaks; None = for every value of that field."""

    dp: int
    tp: int
    pp: int
    zero_stage: int | None = None
    micro_batch: int | None = None
    schedule: str | None = None
    num_chunks: int | None = None
    rule: str
    reason: str


@dataclass(frozen=True, kw_only=True, eq=False)
class SearchResult:
    """Valid layouts fastest first, rejected ones with reasons, and the "boring" layout."""

    ranked: tuple[Evaluation, ...]
    rejected: tuple[Rejected, ...]
    boring: Evaluation | None  # smallest TP x PP (TP before PP) that fits, lowest ZeRO, then DP

    @property
    def fastest(self) -> Evaluation | None:
        return self.ranked[0] if self.ranked else None

    @property
    def boring_slowdown(self) -> float | None:
        """Boring step time over the fastest, minus 1 (0.05 = 5% slower)."""
        return (
            None if self.boring is None else self.boring.step_time_s / self.fastest.step_time_s - 1
        )


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _grid_problem(
    model: ModelSpec, cluster: Cluster, B: int, dims: ParallelDims
) -> tuple[str, str] | None:
    """(rule, reason) ruling out every layout with these degrees, or None."""
    tp, dp, gpn = dims.tp, dims.dp, cluster.gpus_per_node
    if tp > gpn:
        return (
            "TP crosses node",
            f"TP={tp} exceeds {gpn} GPUs per node: TP groups would cross the "
            f"node boundary; use TP ≤ {gpn}",
        )
    try:
        model.check_split(tp, dims.pp)
    except ValueError as e:
        return "model split", str(e)
    if B % dp:
        return (
            "batch",
            f"global batch {B} is not divisible by DP={dp}: every DP rank needs the same "
            f"number of sequences; use a DP degree dividing {B}",
        )
    tp_span = group_span(dims, "tp", cluster)
    if tp_span.crosses_node:
        return (
            "TP crosses node",
            f"TP={tp} does not divide {gpn} GPUs per node: {tp_span.crossing_groups} "
            "TP groups would straddle two nodes; use TP in "
            f"{{{', '.join(map(str, _divisors(gpn)))}}}",
        )
    return None


def _schedules(model: ModelSpec, pp: int, schedules, max_chunks: int) -> list[tuple[str, int]]:
    """(schedule, v) options: no pipeline with PP = 1; interleaved for each v splitting layers
    evenly.
    """
    if pp == 1:
        return [("1f1b", 1)]
    out = [(s, 1) for s in schedules if s != "interleaved_1f1b"]
    return out + [
        ("interleaved_1f1b", v)
        for v in range(2, max_chunks + 1)
        if "interleaved_1f1b" in schedules and model.num_layers % (pp * v) == 0
    ]


def search(
    model,
    cluster: Cluster,
    training: Training,
    *,
    zero_stages=(0, 1, 2, 3),
    schedules=tuple(SCHEDULE_LABELS),
    micro_batches=None,
    max_chunks: int = 8,
    order: str = DEFAULT_ORDER,
) -> SearchResult:
    """Every (DP, TP, PP, ZeRO, micro-batch, schedule, v) of the cluster, ranked or rejected."""
    _need_shape(model)
    N, B, ranked, rejected = cluster.num_gpus, training.global_batch, [], []
    for tp in _divisors(N):
        for pp in _divisors(N // tp):
            dims = ParallelDims(dp=N // (tp * pp), pp=pp, tp=tp, order=order)
            dp, problem = dims.dp, _grid_problem(model, cluster, B, dims)
            if problem:
                rejected.append(Rejected(dp=dp, tp=tp, pp=pp, rule=problem[0], reason=problem[1]))
                continue
            spans = {d: group_span(dims, d, cluster) for d in ("dp", "pp", "tp")}
            for sched, v in _schedules(model, pp, schedules, max_chunks):
                too_big = {}  # ZeRO stage -> micro-batch that did not fit: larger ones won't either
                for mb in [
                    b for b in _divisors(B // dp) if micro_batches is None or b in micro_batches
                ]:
                    kw = dict(dp=dp, tp=tp, pp=pp, micro_batch=mb, schedule=sched, num_chunks=v)
                    if sched == "interleaved_1f1b" and (B // (dp * mb)) % pp:
                        rejected.append(
                            Rejected(
                                **kw,
                                rule="schedule",
                                reason=(
                                    f"interleaved 1F1B needs the {B // (dp * mb)} micro-batches to "
                                    "be a multiple "
                                    f"of PP={pp} (Megatron); use a micro-batch giving {pp}, "
                                    f"{2 * pp}, … of them"
                                ),
                            )
                        )
                        continue
                    for z in (z for z in zero_stages if dp > 1 or z == 0):  # ZeRO = DDP at DP 1
                        lay = Layout(**kw, zero_stage=z, order=order)
                        mem = None if z in too_big else layout_memory(model, lay, training)
                        if mem is not None and capacity_fits(cluster, training, mem):
                            try:
                                ranked.append(_evaluate(model, cluster, lay, training, spans, mem))
                            except ValueError as e:  # e.g. sequence parallelism: TP must divide s
                                rejected.append(
                                    Rejected(**kw, zero_stage=z, rule="model split", reason=str(e))
                                )
                            continue
                        too_big.setdefault(z, mb)
                        need = (
                            f"micro-batch {too_big[z]} already exceeds"
                            if mem is None
                            else f"{mem.total_bytes / 1e9:.1f} GB per GPU >"
                        )
                        rejected.append(
                            Rejected(
                                **kw,
                                zero_stage=z,
                                rule="memory",
                                reason=(
                                    f"does not fit: {need} {_usable(cluster, training) / 1e9:.1f} "
                                    "GB usable; "
                                    "raise TP, PP or the ZeRO stage, lower the micro-batch, or "
                                    "recompute"
                                ),
                            )
                        )
    ranked.sort(key=lambda e: (e.step_time_s, e.layout.tp * e.layout.pp, e.layout.zero_stage))
    boring = min(
        ranked,
        default=None,
        key=lambda e: (e.layout.tp * e.layout.pp, e.layout.pp, e.layout.zero_stage, e.step_time_s),
    )
    return SearchResult(ranked=tuple(ranked), rejected=tuple(rejected), boring=boring)
