"""Plotly figure builders (plain dict specs) for the data-parallel page."""

from figures.data_parallel.buckets import bucket_timeline_figure
from figures.data_parallel.explain import how_computed_lines
from figures.data_parallel.proof import (
    FULL,
    MAX_PARAMS_SHOWN,
    RING,
    WEIGHTED,
    gradient_proof_figure,
    loss_curves_figure,
)
from figures.data_parallel.scaling import (
    SCALING_EFFICIENCY,
    dtype_name,
    efficiency_figure,
    percent,
    step_time_figure,
    straggler_figure,
)
from figures.data_parallel.scenario import (
    fix_notes,
    scenario_figure,
    scenario_markdown,
    scenario_rows,
)

__all__ = [
    "SCALING_EFFICIENCY",
    "FULL",
    "MAX_PARAMS_SHOWN",
    "RING",
    "WEIGHTED",
    "bucket_timeline_figure",
    "dtype_name",
    "efficiency_figure",
    "fix_notes",
    "gradient_proof_figure",
    "how_computed_lines",
    "loss_curves_figure",
    "percent",
    "scenario_figure",
    "scenario_markdown",
    "scenario_rows",
    "step_time_figure",
    "straggler_figure",
]
