"""Collectives figures (plain dict specs): the animated ring, cost models, bus bandwidth."""

from figures.collectives.cost import time_vs_ranks_figure, time_vs_size_figure
from figures.collectives.formulas import how_computed_markdown
from figures.collectives.frames import open_at_step, replay_names
from figures.collectives.geometry import RingBoxes, ring_boxes
from figures.collectives.nccl import nccl_pick_markdown
from figures.collectives.ring import HEIGHT, ring_animation_figure, step_labels
from figures.collectives.ring_check import MAX_ANIMATED_RANKS
from figures.collectives.story import followed_move, receiver_note, step_caption
from figures.collectives.traffic import bandwidth_figure, bytes_per_rank_figure

__all__ = [
    "HEIGHT",
    "MAX_ANIMATED_RANKS",
    "RingBoxes",
    "bandwidth_figure",
    "bytes_per_rank_figure",
    "followed_move",
    "how_computed_markdown",
    "nccl_pick_markdown",
    "open_at_step",
    "receiver_note",
    "replay_names",
    "ring_animation_figure",
    "ring_boxes",
    "step_caption",
    "step_labels",
    "time_vs_ranks_figure",
    "time_vs_size_figure",
]
