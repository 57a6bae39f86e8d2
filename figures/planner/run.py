"""The run the planner page computes: a model preset on a cluster with a training setup, as one
hashable key for the page's caches (no Streamlit here).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.hardware import Cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Evaluation, SearchResult, Training, evaluate, search


@dataclass(frozen=True, kw_only=True)
class Run:
    """One training run on one cluster (the model by its preset name)."""

    model: str
    cluster: Cluster
    training: Training
    sequence_parallel: bool = False  # a layout choice: the search tries layouts with it set


def search_run(run: Run) -> SearchResult:
    """Every layout of the run's cluster, ranked, and the rejected ones with their rule."""
    return search(
        preset(run.model), run.cluster, run.training, sequence_parallel=run.sequence_parallel
    )


def evaluate_run(run: Run, lay: Layout) -> Evaluation:
    """One layout of the run: step time, memory, breakdown."""
    return evaluate(preset(run.model), run.cluster, lay, run.training)
