"""Plotly figure builders (plain dict specs) and the runs of the expert-parallel page."""

from figures.expert_parallel.curves import balance_figure, fit_figure, placement_figure
from figures.expert_parallel.layer import expert_load_figure, traffic_matrix_figure
from figures.expert_parallel.run import (
    BALANCE,
    DSV3,
    LAYER_TOKENS,
    balancing,
    layer,
    model_memory,
    placement,
)

__all__ = [
    "BALANCE",
    "LAYER_TOKENS",
    "DSV3",
    "balance_figure",
    "balancing",
    "expert_load_figure",
    "fit_figure",
    "layer",
    "model_memory",
    "placement",
    "placement_figure",
    "traffic_matrix_figure",
]
