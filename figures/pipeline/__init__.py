"""Plotly figure builders (plain dict specs) for simulated pipeline schedules."""

from figures.pipeline.frame import KIND_NAMES, gantt_title
from figures.pipeline.gantt import MAX_BARS, gantt_figure
from figures.pipeline.labels import PLOT_PX, label_items
from figures.pipeline.panels import side_by_side
from figures.pipeline.playback import at_time, busy_ranks, full_at, moments
from figures.pipeline.raster import RASTER_COLUMNS, gantt_raster_figure, raster
from figures.pipeline.schedules import bubble_vs_m_figure, peak_activations_figure

__all__ = [
    "KIND_NAMES",
    "MAX_BARS",
    "PLOT_PX",
    "RASTER_COLUMNS",
    "at_time",
    "bubble_vs_m_figure",
    "busy_ranks",
    "full_at",
    "gantt_figure",
    "gantt_raster_figure",
    "gantt_title",
    "label_items",
    "moments",
    "peak_activations_figure",
    "raster",
    "side_by_side",
]
