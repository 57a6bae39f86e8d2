"""One training step drawn: its phases (what every GPU holds, what each group sends, who waits),
timed by the planner's simulation; a composition of planner, memory and pipeline.
"""

from core.stepplan.cpep import Fold, active_path, coords
from core.stepplan.drawn import Drawn, drawn_ranks, links
from core.stepplan.phases import MAX_STEP_OPS, Holding, Phase, StepPlan, Traffic, step_plan
from core.stepplan.windows import Window, pipeline_windows

__all__ = [
    "Drawn",
    "Fold",
    "active_path",
    "coords",
    "Holding",
    "MAX_STEP_OPS",
    "Phase",
    "StepPlan",
    "Traffic",
    "Window",
    "drawn_ranks",
    "links",
    "pipeline_windows",
    "step_plan",
]
