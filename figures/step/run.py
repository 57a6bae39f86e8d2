"""The step the training-step page draws: one layout of a planner run, as phases (no Streamlit).

The page lists the planner's dense models and the MoE presets of core.expert_parallel; an MoE
model is the planner's own MoeSpec (core.expert_parallel.spec): searched, timed and sized with
its experts, CP and EP as the planner page does.
"""

from __future__ import annotations

from core.expert_parallel import MOE_PRESETS
from core.expert_parallel.spec import any_preset
from core.model import MODEL_PRESETS, ModelSpec
from core.parallel import Layout
from core.planner import SearchResult, search
from core.stepplan import StepPlan, step_plan
from figures.planner.run import Run

MODELS = {**{m: m for m in MODEL_PRESETS}, **{m: f"{m} (MoE)" for m in MOE_PRESETS}}


def is_moe(name: str) -> bool:
    return name in MOE_PRESETS and name not in MODEL_PRESETS


def model_spec(name: str) -> ModelSpec:
    """The planner's preset: a dense ModelSpec or an MoE MoeSpec."""
    return any_preset(name)


def step_search(run: Run) -> SearchResult:
    """The planner's search for the run's model (CP and EP among its layouts)."""
    spec = model_spec(run.model)
    return search(spec, run.cluster, run.training, sequence_parallel=run.sequence_parallel)


def plan_run(run: Run, lay: Layout) -> StepPlan:
    """Phases of one step of `lay` (its own CP and EP) on the run's cluster, timed by the
    planner's evaluate of that layout."""
    return step_plan(model_spec(run.model), run.cluster, lay, run.training)
