"""Planner: time one DP x TP x PP x ZeRO layout on a cluster, search every layout, calibrate,
export a step.
"""

# Layout and Training are shared nouns (core.parallel, core.training); re-exported so
# `from core.planner import Layout, Training` works.
from core.parallel import Layout
from core.planner.calibration import (
    NARAYANAN_2021,
    SEQ_LEN,
    SOURCE,
    VOCAB,
    CalibrationRow,
    PublishedRun,
    calibration_table,
    gpt,
    markdown,
    megatron_2021_training,
    predict,
    write,
)
from core.planner.closest import Closest, Fix, closest_fit
from core.planner.comm import dp_sync_s, group_collective_s, p2p_s
from core.planner.evaluate import Evaluation, capacity_fits, evaluate
from core.planner.export import planner_step_trace
from core.planner.gemm import GEMM_OVERHEAD_S, gemm_time_s, layer_gemms, matmul_forward_s
from core.planner.picks import pick_layout, tp_flipped
from core.planner.search import Rejected, SearchResult, search
from core.planner.splits import balanced_split, head_layers, split_options
from core.planner.stage_memory import layout_memory
from core.planner.stage_work import (
    ACT_BYTES,
    LOSS_BWD_BYTES,
    LOSS_FWD_BYTES,
    StageTimes,
    all_stage_times,
    layer_traffic_bytes,
    stage_times,
)
from core.planner.step_time import (
    Breakdown,
    chain_exposed_s,
    clear_caches,
    dp_exposed_s,
    dp_sync_parts,
    makespan_per_microbatch,
    pipeline_makespan_s,
    step_breakdown,
)
from core.planner.validation import LLAMA3_405B, ValidationRow, ValidationRun, validate
from core.planner.why import Flip, Why, explain
from core.training import Efficiency, Training

__all__ = [
    "Closest",
    "Fix",
    "Flip",
    "LLAMA3_405B",
    "ValidationRow",
    "ValidationRun",
    "Why",
    "balanced_split",
    "closest_fit",
    "explain",
    "head_layers",
    "split_options",
    "validate",
    "Layout",
    "ACT_BYTES",
    "Breakdown",
    "CalibrationRow",
    "Efficiency",
    "Evaluation",
    "GEMM_OVERHEAD_S",
    "all_stage_times",
    "chain_exposed_s",
    "clear_caches",
    "dp_exposed_s",
    "dp_sync_parts",
    "gemm_time_s",
    "layer_gemms",
    "layout_memory",
    "matmul_forward_s",
    "pipeline_makespan_s",
    "LOSS_BWD_BYTES",
    "LOSS_FWD_BYTES",
    "NARAYANAN_2021",
    "PublishedRun",
    "Rejected",
    "SEQ_LEN",
    "SOURCE",
    "SearchResult",
    "StageTimes",
    "Training",
    "VOCAB",
    "calibration_table",
    "capacity_fits",
    "dp_sync_s",
    "evaluate",
    "gpt",
    "group_collective_s",
    "layer_traffic_bytes",
    "makespan_per_microbatch",
    "markdown",
    "megatron_2021_training",
    "p2p_s",
    "pick_layout",
    "planner_step_trace",
    "predict",
    "search",
    "stage_times",
    "step_breakdown",
    "tp_flipped",
    "write",
]
