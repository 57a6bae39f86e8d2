"""Collectives figures (plain dict specs): the animated ring, cost models, bus bandwidth."""

from figures.collectives.cost import time_vs_ranks_figure, time_vs_size_figure
from figures.collectives.formulas import how_computed_markdown
from figures.collectives.frames import open_at_step
from figures.collectives.nccl import nccl_pick_markdown
from figures.collectives.ring import (
    EXTENT,
    HEIGHT,
    MAX_ANIMATED_RANKS,
    PLOT_PX,
    R_INNER,
    R_OUTER,
    ring_animation_figure,
    step_labels,
)
from figures.collectives.traffic import bandwidth_figure, bytes_per_rank_figure

__all__ = [
    "EXTENT",
    "HEIGHT",
    "MAX_ANIMATED_RANKS",
    "PLOT_PX",
    "R_INNER",
    "R_OUTER",
    "bandwidth_figure",
    "bytes_per_rank_figure",
    "how_computed_markdown",
    "nccl_pick_markdown",
    "open_at_step",
    "ring_animation_figure",
    "step_labels",
    "time_vs_ranks_figure",
    "time_vs_size_figure",
]
