"""Plotly figure builders (plain dict specs) for simulated pipeline schedules."""

from figures.pipeline.frame import KIND_NAMES, gantt_title
from figures.pipeline.gantt import MAX_BARS, MAX_LABELS, MIN_LABEL_SHARE, gantt_figure
from figures.pipeline.panels import side_by_side
from figures.pipeline.raster import RASTER_COLUMNS, gantt_raster_figure, raster
from figures.pipeline.schedules import bubble_vs_m_figure, peak_activations_figure

__all__ = [
    "KIND_NAMES",
    "MAX_BARS",
    "MAX_LABELS",
    "MIN_LABEL_SHARE",
    "RASTER_COLUMNS",
    "bubble_vs_m_figure",
    "gantt_figure",
    "gantt_raster_figure",
    "gantt_title",
    "peak_activations_figure",
    "raster",
    "side_by_side",
]
