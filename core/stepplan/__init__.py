"""One training step drawn: its phases (what every GPU holds, what each group sends, who waits),
timed by the planner's simulation; a composition of planner, memory and pipeline.
"""

from core.stepplan.cpep import CpEpBytes, cp_ep_bytes
from core.stepplan.drawn import Drawn, drawn_ranks, links
from core.stepplan.phases import MAX_STEP_OPS, Holding, Phase, StepPlan, Traffic, step_plan
from core.stepplan.windows import Window, pipeline_windows

__all__ = [
    "CpEpBytes",
    "Drawn",
    "Holding",
    "MAX_STEP_OPS",
    "Phase",
    "StepPlan",
    "Traffic",
    "Window",
    "cp_ep_bytes",
    "drawn_ranks",
    "links",
    "pipeline_windows",
    "step_plan",
]
