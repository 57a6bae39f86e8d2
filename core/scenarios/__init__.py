"""Eight guided design exercises, composed from the other cores: their numbers and a preloaded page
link.
"""

from core.scenarios.common import GPU, RESERVE, SEQ, Link
from core.scenarios.five_d import LongContext, MoeTwoNodes, long_context, moe_two_nodes
from core.scenarios.layouts import Outcome, Placement, Sentence, placement, sentence
from core.scenarios.scaling import BubbleRow, ScaleOut, Schedules, gpipe_vs_1f1b, scale_out
from core.scenarios.sizing import Sharding, Sizing, ddp_vs_fsdp, size_70b

__all__ = [
    "GPU",
    "RESERVE",
    "SEQ",
    "BubbleRow",
    "Link",
    "LongContext",
    "MoeTwoNodes",
    "Outcome",
    "Placement",
    "ScaleOut",
    "Schedules",
    "Sentence",
    "Sharding",
    "Sizing",
    "ddp_vs_fsdp",
    "gpipe_vs_1f1b",
    "long_context",
    "moe_two_nodes",
    "placement",
    "scale_out",
    "sentence",
    "size_70b",
]
