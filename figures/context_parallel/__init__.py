"""Plotly figure builders (plain dict specs) and the run of the context-parallel page."""

from figures.context_parallel.blocks import block_grid_figure, gantt_figure
from figures.context_parallel.curves import memory_figure, overlap_figure, traffic_figure
from figures.context_parallel.ring import ring_step_figure
from figures.context_parallel.run import CP_SWEEP, LINKS, SEQ_SWEEP, CpRun, long_context, toy

__all__ = [
    "CP_SWEEP",
    "LINKS",
    "SEQ_SWEEP",
    "CpRun",
    "block_grid_figure",
    "gantt_figure",
    "long_context",
    "memory_figure",
    "overlap_figure",
    "ring_step_figure",
    "toy",
    "traffic_figure",
]
