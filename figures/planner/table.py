"""The search's layouts as table rows and columns, and the calibration table."""

from __future__ import annotations

from collections.abc import Sequence

from core.pipeline import SCHEDULES
from core.planner import CalibrationRow, SearchResult, calibration_table
from core.units import gib_or_gb


def table_rows(result: SearchResult, limit: int | None = None) -> list[dict]:
    """Ranked layouts then rejected ones, as rows for a table (SI units; None = any value)."""
    best = result.fastest.step_time_s if result.fastest else None
    rows = [
        {
            "rank": i + 1,
            "dp": e.layout.dp,
            "tp": e.layout.tp,
            "pp": e.layout.pp,
            "zero_stage": e.layout.zero_stage,
            "micro_batch": e.layout.micro_batch,
            "schedule": e.layout.schedule,
            "num_chunks": e.layout.num_chunks,
            "step_time_s": e.step_time_s,
            "vs_fastest": e.step_time_s / best - 1,
            "tokens_per_s": e.tokens_per_s,
            "mfu": e.mfu,
            "memory_bytes": e.memory.total_bytes,
            "boring": e is result.boring,
            "status": "ok",
            "reason": "",
        }
        for i, e in enumerate(result.ranked[:limit])
    ]
    rows += [
        {
            "rank": None,
            "dp": r.dp,
            "tp": r.tp,
            "pp": r.pp,
            "zero_stage": r.zero_stage,
            "micro_batch": r.micro_batch,
            "schedule": r.schedule,
            "num_chunks": r.num_chunks,
            "step_time_s": None,
            "vs_fastest": None,
            "tokens_per_s": None,
            "mfu": None,
            "memory_bytes": None,
            "boring": False,
            "status": r.rule,
            "reason": r.reason,
        }
        for r in result.rejected
    ]
    return rows


def calibration_rows(rows: Sequence[CalibrationRow] | None = None) -> list[dict]:
    """Predicted vs published TFLOP/s per GPU (Narayanan et al. 2021 Table 1) as table rows."""
    rows = calibration_table() if rows is None else rows
    return [
        {
            "params (B)": r.run.params_billion,
            "GPUs": r.run.gpus,
            "TP": r.run.tp,
            "PP": r.run.pp,
            "DP": r.run.gpus // (r.run.tp * r.run.pp),
            "batch": r.run.global_batch,
            "schedule": SCHEDULES[r.schedule].label
            + (f" v={r.num_chunks}" if r.num_chunks > 1 else ""),
            "published TFLOP/s": r.run.tflops_per_gpu,
            "model (fit)": round(r.predicted_tflops_per_gpu, 1),
            "error": r.error,
        }
        for r in rows
    ]


# Table column -> (header, printf or Streamlit number format (None: shown as is), column width), in
# order.
TABLE_COLUMNS = {
    "rank": ("#", None, "small"),
    "dp": ("DP", None, "small"),
    "tp": ("TP", None, "small"),
    "pp": ("PP", None, "small"),
    "zero_stage": ("ZeRO", None, "small"),
    "micro_batch": ("mb", None, "small"),
    "schedule": ("schedule", None, "medium"),
    "num_chunks": ("v", None, "small"),
    "step_time_s": ("step (s)", "%.3g", "small"),
    "vs_fastest": ("vs fastest", "percent", "small"),
    "mfu": ("MFU", "percent", "small"),
    "tokens_per_s": ("tokens/s", "compact", "small"),
    "memory": ("memory", "%.1f", "small"),
    "boring": ("boring", None, "small"),
    "status": ("status", None, "medium"),
    "reason": ("reason", None, "large"),
}


def table_columns(rule: str) -> list[str]:
    """Columns worth showing for a filter: timings for ranked layouts, the rule and reason for
    rejected
    ones.
    """
    timing, why = (
        {"rank", "step_time_s", "vs_fastest", "mfu", "tokens_per_s", "memory", "boring"},
        {"status", "reason"},
    )
    hide = set() if rule == "all" else why if rule == "ranked" else timing
    return [k for k in TABLE_COLUMNS if k not in hide]


def filter_rows(rows: list[dict], rule: str, limit: int, units: str = "binary") -> list[dict]:
    """Table rows whose status is the rule ("all", "ranked" = ok, or a rejection rule), memory in
    GiB/GB.
    """
    unit = gib_or_gb(units)[1]
    keep = [
        r for r in rows if rule == "all" or r["status"] == ("ok" if rule == "ranked" else rule)
    ][:limit]
    return [r | {"memory": r["memory_bytes"] and r["memory_bytes"] / unit} for r in keep]
