"""Plotly figure builders (plain dict specs) for the tensor-parallel page."""

from figures.tensor_parallel.comm import comm_vs_compute_figure, tp_sweep_figure
from figures.tensor_parallel.explain import (
    boundary_lessons,
    comm_plan_rows,
    how_computed_lines,
    node_boundary_note,
)
from figures.tensor_parallel.ownership import ownership_figure, rank_colour
from figures.tensor_parallel.proof import FLOOR, proof_sweep_figure

__all__ = [
    "FLOOR",
    "boundary_lessons",
    "comm_plan_rows",
    "comm_vs_compute_figure",
    "how_computed_lines",
    "node_boundary_note",
    "ownership_figure",
    "proof_sweep_figure",
    "rank_colour",
    "tp_sweep_figure",
]
