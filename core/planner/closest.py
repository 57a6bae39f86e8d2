"""When no layout fits: the one closest to fitting and the single changes that would make it fit
(sequence parallelism, full recompute, a smaller micro-batch, ZeRO-3, more nodes), each with its
number."""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.hardware import Cluster
from core.memory import MemoryResult
from core.model import ModelSpec
from core.planner.evaluate import Evaluation, capacity_fits, usable_bytes
from core.planner.search import SearchResult, search
from core.planner.stage_memory import layout_memory
from core.training import Training


@dataclass(frozen=True, kw_only=True, eq=False)
class Fix:
    """One change to the closest layout: its bytes on the fullest GPU, or for more nodes the
    fastest layout the bigger cluster runs."""

    change: str  # short name: "sequence parallelism", "full recompute", "micro-batch 1", ...
    memory: MemoryResult | None  # the closest layout with this change (None for more nodes)
    winner: Evaluation | None  # more nodes: the bigger cluster's fastest layout
    fits: bool


@dataclass(frozen=True, kw_only=True, eq=False)
class Closest:
    """The memory-rejected layout needing the fewest bytes per GPU, and the fixes tried on it."""

    memory: MemoryResult
    usable_bytes: float
    fixes: tuple[Fix, ...]

    @property
    def over_bytes(self) -> float:
        return self.memory.total_bytes - self.usable_bytes


def closest_fit(
    model: ModelSpec,
    cluster: Cluster,
    training: Training,
    result: SearchResult,
    max_nodes_factor: int = 8,
    **search_kw,
) -> Closest | None:
    """The closest layout and what fixes it, when result ranks nothing (else None)."""
    mem = result.closest
    if result.ranked or mem is None:
        return None
    lay, fixes = mem.layout, []
    tries = []
    if lay.tp > 1 and not lay.sequence_parallel:
        tries.append(("sequence parallelism", replace(lay, sequence_parallel=True), training))
    if training.recompute != "full":
        tries.append(("full recompute", lay, replace(training, recompute="full")))
    if lay.micro_batch > 1:
        tries.append(("micro-batch 1", replace(lay, micro_batch=1), training))
    if lay.zero_stage < 3 and lay.dp > 1:
        tries.append(("ZeRO-3", replace(lay, zero_stage=3), training))
    for change, new, tr in tries:
        try:
            m = layout_memory(model, new, tr)
        except ValueError:  # e.g. SP needs TP to divide the sequence
            continue
        fixes.append(Fix(change=change, memory=m, winner=None, fits=capacity_fits(cluster, tr, m)))
    k = 2
    while k <= max_nodes_factor:
        bigger = replace(cluster, num_nodes=k * cluster.num_nodes)
        win = search(model, bigger, training, **search_kw).fastest
        if win is not None or k == max_nodes_factor:
            fixes.append(
                Fix(change=f"{k}× the nodes", memory=None, winner=win, fits=win is not None)
            )
            break
        k *= 2
    return Closest(memory=mem, usable_bytes=usable_bytes(cluster, training), fixes=tuple(fixes))
