"""The step the training-step page draws: one layout of a planner run, as phases (no Streamlit)."""

from __future__ import annotations

from core.model import preset
from core.parallel import Layout
from core.stepplan import StepPlan, step_plan
from figures.planner.run import Run


def plan_run(run: Run, lay: Layout) -> StepPlan:
    """Phases of one step of `lay` on the run's cluster, timed by the planner."""
    return step_plan(preset(run.model), run.cluster, lay, run.training)
