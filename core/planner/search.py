"""Planner search: every DP x TP x PP x ZeRO x micro-batch x schedule layout of a cluster,
ranked by predicted step time, or rejected with the rule it breaks.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from core.hardware import Cluster
from core.memory import SIZED_SCHEDULES, MemoryResult
from core.model import ModelSpec
from core.parallel import DEFAULT_ORDER, Layout, ParallelDims, group_span
from core.planner.cp_ep import cp_degrees, cp_ep_problem, ep_degrees, layout_spans
from core.planner.evaluate import (
    Evaluation,
    capacity_fits,
    check_model_shape,
    evaluate_placed,
    usable_bytes,
)
from core.planner.splits import split_options
from core.planner.stage_memory import layout_memory
from core.planner.stage_work import all_stage_times
from core.training import Training


@dataclass(frozen=True, kw_only=True)
class Rejected:
    """A layout that cannot run, with the rule it breaks; None = for every value of that field."""

    dp: int
    tp: int
    pp: int
    cp: int = 1
    ep: int = 1
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
    # TP x PP -> the memory-rejected layout of that product needing the fewest bytes per GPU
    least_memory: dict[int, MemoryResult] = field(default_factory=dict)

    @property
    def closest(self) -> MemoryResult | None:
        """The memory-rejected layout closest to fitting (fewest bytes on its fullest GPU)."""
        return min(self.least_memory.values(), key=lambda m: m.total_bytes, default=None)

    @property
    def fastest(self) -> Evaluation | None:
        return self.ranked[0] if self.ranked else None

    @property
    def boring_slowdown(self) -> float | None:
        """Boring step time over the fastest, minus 1 (0.05 = 5% slower)."""
        return (
            None if self.boring is None else self.boring.step_time_s / self.fastest.step_time_s - 1
        )


def _model_parallel(lay: Layout) -> int:
    """TP × PP × CP: the ranks one replica spans (EP folds into DP × CP)."""
    return lay.tp * lay.pp * lay.cp


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _grid_problem(
    model: ModelSpec, cluster: Cluster, B: int, dims: ParallelDims, dp: int
) -> tuple[str, str] | None:
    """(rule, reason) ruling out every layout with these degrees, or None (dims: TP × PP × DP
    with the CP ranks folded into DP; dp: the data-parallel degree that splits the batch)."""
    tp, gpn = dims.tp, cluster.gpus_per_node
    if tp > gpn:
        return (
            "TP crosses node",
            f"TP={tp} exceeds {gpn} GPUs per node: TP groups would cross the "
            f"node boundary; use TP ≤ {gpn}",
        )
    try:
        model.check_split(tp, 1)  # TP splits heads and FFN; PP may split the layers unevenly
    except ValueError as e:
        return "model split", str(e)
    if dims.pp > model.num_layers:
        return (
            "model split",
            f"PP={dims.pp} exceeds the {model.num_layers} layers: every stage needs at least one "
            f"layer; use PP ≤ {model.num_layers}",
        )
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


def _schedules(
    model: ModelSpec, pp: int, schedules, max_chunks: int, seq_len: int
) -> list[tuple[str, int, tuple[int, ...] | None]]:
    """(schedule, v, layers per stage) options: no pipeline with PP = 1; each split (even, and
    lighter first/last stages); interleaved for each v the split allows (a layer per chunk)."""
    if pp == 1:
        return [("1f1b", 1, None)]
    # MoE stages hold whole, equal layer counts (core.expert_parallel.spec splits experts by stage)
    splits = [None] if getattr(model, "num_experts", 0) else split_options(model, pp, seq_len)
    out = [(s, 1, n) for n in splits for s in schedules if s != "interleaved_1f1b"]
    if "interleaved_1f1b" not in schedules:
        return out
    return out + [
        ("interleaved_1f1b", v, n)
        for v in range(2, max_chunks + 1)
        for n in splits
        if (model.num_layers % (pp * v) == 0 if n is None else min(n) >= v)
    ]


def _grid(model, N: int, seq_len: int, cps, eps, gpn: int):
    """(tp, pp, cp, ep, dp) of every grid point."""
    for tp in _divisors(N):
        for pp in _divisors(N // tp):
            for cp in cps or cp_degrees(seq_len, N):
                if (N // (tp * pp)) % cp:
                    continue
                dp = N // (tp * pp * cp)
                for ep in eps or ep_degrees(model, dp * cp, tp, gpn):
                    if (dp * cp) % ep == 0:
                        yield tp, pp, cp, ep, dp


def search(
    model,
    cluster: Cluster,
    training: Training,
    *,
    zero_stages=(0, 1, 2, 3),
    schedules=SIZED_SCHEDULES,
    micro_batches=None,
    max_chunks: int = 8,
    order: str = DEFAULT_ORDER,
    sequence_parallel: bool = False,
    cps: tuple[int, ...] | None = None,
    eps: tuple[int, ...] | None = None,
) -> SearchResult:
    """Every (DP, TP, PP, CP, EP, ZeRO, micro-batch, schedule, v) of the cluster, ranked or
    rejected; CP and EP default to cp_degrees / ep_degrees."""
    check_model_shape(model)
    N, B, ranked, rejected, least = cluster.num_gpus, training.global_batch, [], [], {}
    stage_cache: dict[Layout, tuple] = {}
    sp, usable = sequence_parallel, usable_bytes(cluster, training)
    for tp, pp, cp, ep, dp in _grid(model, N, training.seq_len, cps, eps, cluster.gpus_per_node):
        dims = ParallelDims(dp=dp * cp, pp=pp, tp=tp, order=order)
        deg = dict(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep)
        problem = _grid_problem(model, cluster, B, dims, dp) or cp_ep_problem(
            model, tp, pp, cp, ep, dp, training.seq_len
        )
        if problem:
            rejected.append(Rejected(**deg, rule=problem[0], reason=problem[1]))
            continue
        spans = layout_spans(Layout(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, order=order), cluster)
        for sched, v, split in _schedules(model, pp, schedules, max_chunks, training.seq_len):
            too_big = {}  # ZeRO stage -> micro-batch that did not fit: larger ones won't either
            for mb in [
                b for b in _divisors(B // dp) if micro_batches is None or b in micro_batches
            ]:
                kw = dict(**deg, micro_batch=mb, schedule=sched, num_chunks=v)
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
                    lay = Layout(
                        **kw,
                        zero_stage=z,
                        order=order,
                        sequence_parallel=sp,
                        layers_per_stage=split,
                    )
                    try:
                        mem = None if z in too_big else layout_memory(model, lay, training)
                    except ValueError as e:  # a split core.memory refuses (e.g. MoE stages)
                        rejected.append(
                            Rejected(**kw, zero_stage=z, rule="model split", reason=str(e))
                        )
                        continue
                    if mem is not None and capacity_fits(cluster, training, mem):
                        try:
                            # Stage times depend on ZeRO only through ZeRO-3's gathers.
                            key = replace(lay, zero_stage=3 if z == 3 else 0)
                            if key not in stage_cache:
                                stage_cache[key] = all_stage_times(
                                    model, cluster, spans, lay, training
                                )
                            ranked.append(
                                evaluate_placed(
                                    model, cluster, lay, training, spans, mem, stage_cache[key]
                                )
                            )
                        except ValueError as e:  # e.g. sequence parallelism: TP must divide s
                            rejected.append(
                                Rejected(**kw, zero_stage=z, rule="model split", reason=str(e))
                            )
                        continue
                    too_big.setdefault(z, mb)
                    held = least.get(tp * pp * cp)
                    if mem is not None and (held is None or mem.total_bytes < held.total_bytes):
                        least[tp * pp * cp] = mem
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
                                f"does not fit: {need} {usable / 1e9:.1f} GB usable; "
                                "raise TP, PP, CP, EP or the ZeRO stage, lower the "
                                "micro-batch, or recompute"
                            ),
                        )
                    )
    ranked.sort(key=lambda e: (e.step_time_s, _model_parallel(e.layout), e.layout.zero_stage))
    boring = min(
        ranked,
        default=None,
        key=lambda e: (
            _model_parallel(e.layout),
            e.layout.pp,
            e.layout.cp,
            e.layout.zero_stage,
            e.step_time_s,
        ),
    )
    return SearchResult(
        ranked=tuple(ranked), rejected=tuple(rejected), boring=boring, least_memory=least
    )
