"""Pipeline parallelism: schedule orders, the event simulator, bubble metrics and closed forms,
exports.
"""

from core.pipeline.export import op_names, to_chrome_trace, to_csv, to_dataframe
from core.pipeline.metrics import (
    BUBBLE_METRICS,
    CLOSED_FORMS,
    BubbleMetric,
    BubbleSweep,
    ClosedForm,
    bubble_sweep,
    closed_form_bubble_share,
    closed_form_idle_s,
    closed_form_makespan_s,
    closed_form_peak_activations,
)
from core.pipeline.orders import (
    ScheduleOrder,
    build_order,
    format_action,
    stage_chunks,
    stage_to_rank,
)
from core.pipeline.result import (
    KINDS,
    Op,
    OpTable,
    PipelineResult,
    bubble_ratio,
    bubble_share,
    peak_activations,
    span_bubble,
)
from core.pipeline.schedules import MAX_OPS, SCHEDULES, ScheduleInfo, check_inputs, effective_v
from core.pipeline.simulator import simulate, simulate_order

__all__ = [
    "BUBBLE_METRICS",
    "BubbleMetric",
    "BubbleSweep",
    "CLOSED_FORMS",
    "ClosedForm",
    "KINDS",
    "MAX_OPS",
    "Op",
    "OpTable",
    "PipelineResult",
    "SCHEDULES",
    "ScheduleInfo",
    "ScheduleOrder",
    "bubble_ratio",
    "bubble_share",
    "bubble_sweep",
    "build_order",
    "check_inputs",
    "closed_form_bubble_share",
    "closed_form_idle_s",
    "closed_form_makespan_s",
    "closed_form_peak_activations",
    "effective_v",
    "format_action",
    "op_names",
    "peak_activations",
    "simulate",
    "simulate_order",
    "span_bubble",
    "stage_chunks",
    "stage_to_rank",
    "to_chrome_trace",
    "to_csv",
    "to_dataframe",
]
