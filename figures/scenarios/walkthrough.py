"""The text and figure of any scenario result."""

from __future__ import annotations

from core.scenarios import Placement, ScaleOut, Schedules, Sentence, Sharding, Sizing
from core.scenarios.five_d import LongContext, MoeTwoNodes
from figures.scenarios.common import Walkthrough
from figures.scenarios.five_d import long_context_figure, long_context_text, moe_figure, moe_text
from figures.scenarios.memory import sharding_figure, sharding_text, sizing_figure, sizing_text
from figures.scenarios.placement import (
    placement_figure,
    placement_text,
    scale_out_figure,
    scale_out_text,
)
from figures.scenarios.schedules import schedules_figure, schedules_text
from figures.scenarios.sentence import sentence_figure, sentence_text


def walkthrough(result, units: str, bw_units: str) -> tuple[Walkthrough, dict]:
    """The text and figure of any scenario result."""
    if isinstance(result, Sizing):
        return sizing_text(result, units), sizing_figure(result, units)
    if isinstance(result, ScaleOut):
        return scale_out_text(result, units, bw_units), scale_out_figure(result)
    if isinstance(result, Sentence):  # before Placement: a Sentence is a Placement
        return sentence_text(result, units), sentence_figure(result, units)
    if isinstance(result, Placement):
        return placement_text(result, units), placement_figure(result)
    if isinstance(result, Schedules):
        return schedules_text(result), schedules_figure(result)
    if isinstance(result, Sharding):
        return sharding_text(result, units), sharding_figure(result, units)
    if isinstance(result, LongContext):
        return long_context_text(result, units), long_context_figure(result, units)
    if isinstance(result, MoeTwoNodes):
        return moe_text(result, units), moe_figure(result)
    raise ValueError(f"unknown scenario result {type(result).__name__}")
