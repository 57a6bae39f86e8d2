"""The scenarios page's walkthrough text and one small figure per scenario (plain dict specs)."""

from figures.scenarios.common import BAD, FONT, OK, Walkthrough
from figures.scenarios.memory import sharding_figure, sharding_text, sizing_figure, sizing_text
from figures.scenarios.placement import (
    placement_figure,
    placement_text,
    scale_out_figure,
    scale_out_text,
)
from figures.scenarios.schedules import schedules_figure, schedules_text
from figures.scenarios.sentence import sentence_figure, sentence_text
from figures.scenarios.walkthrough import walkthrough

__all__ = [
    "BAD",
    "FONT",
    "OK",
    "Walkthrough",
    "placement_figure",
    "placement_text",
    "scale_out_figure",
    "scale_out_text",
    "schedules_figure",
    "schedules_text",
    "sentence_figure",
    "sentence_text",
    "sharding_figure",
    "sharding_text",
    "sizing_figure",
    "sizing_text",
    "walkthrough",
]
