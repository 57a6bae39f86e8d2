"""The run the planner page computes: a model preset on a cluster with a training setup, as one
hashable key for the page's caches (no Streamlit here).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from core.expert_parallel.spec import any_preset as preset  # dense and MoE presets by name
from core.hardware import Cluster
from core.parallel import Layout
from core.planner import (
    LLAMA3_405B,
    Evaluation,
    SearchResult,
    Training,
    calibration_table,
    closest_fit,
    evaluate,
    explain,
    search,
    validate,
)
from figures.planner.why import closest_markdown, mfu_caveat, short_label, why_markdown


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


def answer_words(run: Run, result: SearchResult, units: str) -> str:
    """Why the search's fastest layout — or, when nothing fits, the closest layout and its fixes."""
    model, kw = preset(run.model), dict(sequence_parallel=run.sequence_parallel)
    if result.fastest is None:
        cl = closest_fit(model, run.cluster, run.training, result, **kw)
        return cl and closest_markdown(cl, units) or ""
    w = explain(model, run.cluster, run.training, result)
    return f"**Recommended: {short_label(w.best)}. Why:** " + why_markdown(w, units)


def caveat_words(ev: Evaluation) -> str:
    """What the MFU was fitted on, its error there, and the caveat for other hardware."""
    return mfu_caveat(ev, *_fit_errors(), list(_validation()))


@cache
def _fit_errors() -> tuple[float, float]:
    """Mean and worst absolute error on Narayanan et al. 2021 Table 1 (the fit)."""
    errs = [abs(r.error) for r in calibration_table()]
    return sum(errs) / len(errs), max(errs)


@cache
def _validation() -> tuple:
    """The published runs shown but not fitted (core.planner.validation)."""
    return tuple(validate(r) for r in LLAMA3_405B)
