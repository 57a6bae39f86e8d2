"""Reliability figures: goodput vs checkpoint interval, waste breakdown, interruptions,
stragglers."""

from figures.reliability.goodput import goodput_figure, waste_figure
from figures.reliability.scale import interruptions_figure, stragglers_figure, useful_devices_figure

__all__ = [
    "goodput_figure",
    "interruptions_figure",
    "stragglers_figure",
    "useful_devices_figure",
    "waste_figure",
]
