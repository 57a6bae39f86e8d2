"""The step the training-step page draws: one layout of a planner run, as phases (no Streamlit).

The page lists the planner's dense models and the MoE presets of core.expert_parallel; an MoE
model is timed and sized by the planner as its active path (core.stepplan.active_path), and its
experts give the EP all-to-all its bytes.
"""

from __future__ import annotations

from core.expert_parallel import MOE_PRESETS, moe_preset
from core.model import MODEL_PRESETS, ModelSpec, preset
from core.parallel import Layout
from core.planner import SearchResult, search
from core.stepplan import Fold, StepPlan, active_path, step_plan
from figures.planner.run import Run

MODELS = {**{m: m for m in MODEL_PRESETS}, **{m: f"{m} (MoE)" for m in MOE_PRESETS}}


def is_moe(name: str) -> bool:
    return name in MOE_PRESETS and name not in MODEL_PRESETS


def model_spec(name: str) -> ModelSpec:
    """The planner's preset, or an MoE preset's active path."""
    return active_path(moe_preset(name)) if is_moe(name) else preset(name)


def fold(name: str, cp: int, ep: int) -> Fold:
    return Fold(cp=cp, ep=ep, moe=moe_preset(name) if is_moe(name) else None)


def step_search(run: Run) -> SearchResult:
    """The planner's search for the run's model (an MoE model: its active path)."""
    spec = model_spec(run.model)
    return search(spec, run.cluster, run.training, sequence_parallel=run.sequence_parallel)


def plan_run(run: Run, lay: Layout, cp: int = 1, ep: int = 1) -> StepPlan:
    """Phases of one step of `lay` on the run's cluster, timed by the planner; CP and EP taken
    from its DP ranks."""
    return step_plan(model_spec(run.model), run.cluster, lay, run.training, fold(run.model, cp, ep))
