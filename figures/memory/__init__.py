"""Memory figures (plain dict specs): per-GPU stacks, pipeline stages, A vs B, recompute; the
labels, tables and formula text of the memory page.
"""

from figures.memory.compare import compare_layouts, compare_summary
from figures.memory.explain import how_computed_blocks, how_computed_markdown, sizing_questions
from figures.memory.labels import (
    MODEL_LABELS,
    RECIPE_HELP,
    activation_formula,
    fits_rows,
    headline_metrics,
    is_moe,
    run_caption,
)
from figures.memory.recompute import recompute_tradeoff_figure
from figures.memory.stacks import (
    AXIS_FONT,
    SEGMENTS,
    TICK_FONT,
    compare_layouts_figure,
    layout_label,
    pipeline_stages_figure,
    zero_stages_figure,
)

__all__ = [
    "AXIS_FONT",
    "MODEL_LABELS",
    "RECIPE_HELP",
    "SEGMENTS",
    "TICK_FONT",
    "activation_formula",
    "compare_layouts",
    "compare_layouts_figure",
    "compare_summary",
    "fits_rows",
    "headline_metrics",
    "how_computed_blocks",
    "how_computed_markdown",
    "is_moe",
    "layout_label",
    "pipeline_stages_figure",
    "recompute_tradeoff_figure",
    "run_caption",
    "sizing_questions",
    "zero_stages_figure",
]
