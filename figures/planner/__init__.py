"""Planner figures (plain dict specs): the cluster with its groups, memory, step-time breakdown,
comparison; the table rows and the words around them.
"""

from figures.planner.charts import breakdown_figure, compare_figure, layout_figure, memory_figure
from figures.planner.cluster import COLOUR_BY, MAX_NODES_DRAWN, bare_cluster_figure, cluster_figure
from figures.planner.explain import (
    exercise_markdown,
    headline_metrics,
    how_computed_markdown,
    no_layout_message,
    takeaway_text,
)
from figures.planner.table import (
    TABLE_COLUMNS,
    calibration_rows,
    filter_rows,
    table_columns,
    table_rows,
    validation_rows,
)

__all__ = [
    "COLOUR_BY",
    "MAX_NODES_DRAWN",
    "TABLE_COLUMNS",
    "bare_cluster_figure",
    "breakdown_figure",
    "calibration_rows",
    "cluster_figure",
    "compare_figure",
    "exercise_markdown",
    "filter_rows",
    "headline_metrics",
    "how_computed_markdown",
    "layout_figure",
    "memory_figure",
    "no_layout_message",
    "table_columns",
    "table_rows",
    "validation_rows",
    "takeaway_text",
]
