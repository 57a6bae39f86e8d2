"""Why the search picked its layout: the wall that decided it, each with its computed number, and
the changes that would flip the choice (a smaller batch, more GPUs, a slower network), found by
re-ranking today's fastest layouts under each change.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.hardware import Cluster
from core.memory import MemoryResult
from core.model import ModelSpec
from core.planner.comm import group_collective_s
from core.planner.evaluate import Evaluation, evaluate, usable_bytes
from core.planner.search import SearchResult
from core.planner.stage_work import layer_params
from core.training import Training, get_recipe


@dataclass(frozen=True, kw_only=True)
class Flip:
    """One what-if: the change, the new winner (None: nothing fits) and whether its TP, PP or
    ZeRO stage differ from today's."""

    change: str  # "batch", "gpus", "network"
    detail: str  # e.g. "global batch 288 (÷ 4)"
    winner: Evaluation | None
    flips: bool


@dataclass(frozen=True, kw_only=True, eq=False)
class Why:
    """Structured reasons for the fastest layout; figures/planner/why.py puts them into words."""

    best: Evaluation
    runner_up: Evaluation | None  # fastest layout with a different (DP, TP, PP, ZeRO)
    memory_floor: int | None  # smallest TP x PP that fits, when every smaller one ran out of memory
    below_floor: MemoryResult | None  # the closest smaller TP x PP try (its bytes per GPU)
    usable_bytes: float
    sequences_per_gpu: float  # B / DP: sequences each data-parallel rank holds per step
    zero3_layer_gather_s: float  # one layer's ZeRO-3 parameter all-gather (0 unless ZeRO-3)
    other_tp: Evaluation | None  # fastest at TP = GPUs per node (or below it when TP is there)
    flips: tuple[Flip, ...]

    @property
    def bubble_share(self) -> float:
        return self.best.breakdown.pp_bubble_s / self.best.step_time_s


def signature(ev: Evaluation) -> tuple[int, int, int, int]:
    lay = ev.layout
    return lay.dp, lay.tp, lay.pp, lay.zero_stage


def explain(
    model: ModelSpec,
    cluster: Cluster,
    training: Training,
    result: SearchResult,
    *,
    what_ifs: bool = True,
) -> Why | None:
    """Reasons for result.fastest (None when nothing fits: see core.planner.closest)."""
    best = result.fastest
    if best is None:
        return None
    lay, gpn = best.layout, cluster.gpus_per_node
    floor = min(e.layout.tp * e.layout.pp * e.layout.cp for e in result.ranked)  # TP × PP × CP
    below = [m for mp, m in result.least_memory.items() if mp < floor]
    gather = 0.0
    if lay.zero_stage == 3 and lay.dp > 1:
        nbytes = layer_params(model, lay.tp, lay) * get_recipe(training.recipe).param_bytes
        gather = group_collective_s(
            "all_gather", best.spans["dp"], nbytes, cluster, training.efficiency
        )
    want = (lambda t: t == gpn) if lay.tp != gpn else (lambda t: t < lay.tp)
    return Why(
        best=best,
        runner_up=next((e for e in result.ranked if signature(e) != signature(best)), None),
        memory_floor=floor if below and floor > 1 else None,
        below_floor=min(below, key=lambda m: m.total_bytes, default=None),
        usable_bytes=usable_bytes(cluster, training),
        sequences_per_gpu=training.global_batch / lay.dp,
        zero3_layer_gather_s=gather,
        other_tp=next((e for e in result.ranked if want(e.layout.tp)), None),
        flips=flips(model, cluster, training, result) if what_ifs else (),
    )


RERANK_TOP = 40  # what-ifs re-rank this many of today's fastest layouts, not a whole new search


def _rerank(
    model: ModelSpec, cluster: Cluster, training: Training, ranked, dp_scale: int = 1
) -> Evaluation | None:
    """The fastest of today's top layouts under a change (DP scaled with the GPUs; micro-batch 1
    where the old one no longer divides the batch), among those that still fit."""
    best = None
    for e in ranked[:RERANK_TOP]:
        lay = replace(e.layout, dp=e.layout.dp * dp_scale)
        for cand in (lay, replace(lay, micro_batch=1)):
            try:
                ev = evaluate(model, cluster, cand, training)
            except ValueError:  # the batch no longer splits this way
                continue
            if ev.fits and (best is None or ev.step_time_s < best.step_time_s):
                best = ev
            break
    return best


def flips(
    model: ModelSpec, cluster: Cluster, training: Training, result: SearchResult
) -> tuple[Flip, ...]:
    """Re-rank today's top layouts under three changes and name the winner each gives."""
    B, eff, best = training.global_batch, training.efficiency, result.fastest
    cases = []
    if B % 4 == 0:
        quarter = replace(training, global_batch=B // 4)
        cases.append(("batch", f"global batch {B // 4:,} (÷ 4)", cluster, quarter, 1))
    nodes = replace(cluster, num_nodes=2 * cluster.num_nodes)
    cases.append(("gpus", f"{nodes.num_gpus:,} GPUs (× 2, DP × 2)", nodes, training, 2))
    if cluster.num_nodes > 1:
        slow = replace(training, efficiency=replace(eff, inter_link=eff.inter_link / 4))
        cases.append(("network", "a 4× slower network between nodes", cluster, slow, 1))
    out = []
    for change, detail, c, t, scale in cases:
        win = _rerank(model, c, t, result.ranked, scale)
        moved = win is None or signature(win)[1:] != signature(best)[1:]
        out.append(Flip(change=change, detail=detail, winner=win, flips=moved))
    return tuple(out)
