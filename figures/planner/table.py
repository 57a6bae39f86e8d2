"""The search's layouts as table rows and columns, and the calibration table."""

from __future__ import annotations

from collections.abc import Sequence

from core.parallel import ZERO_STAGES
from core.pipeline import SCHEDULES
from core.planner import LLAMA3_405B, CalibrationRow, SearchResult, calibration_table, validate
from core.units import gib_or_gb


def _labels(zero: int | None, schedule: str | None, v: int | None, split=None) -> dict:
    """Human labels of a row's ZeRO stage, schedule and layer split (registry labels)."""
    sched = schedule and SCHEDULES[schedule].short_label + (f" v={v}" if v and v > 1 else "")
    uneven = split and len(set(split)) > 1
    return {
        "zero": None if zero is None else ZERO_STAGES[zero].label,
        "schedule_label": sched,
        "layers": (f"{split[0]}/{split[1]}…/{split[-1]}" if uneven else "even") if sched else None,
    }


def table_rows(result: SearchResult, limit: int | None = None) -> list[dict]:
    """Ranked layouts then rejected ones, as rows for a table (SI units; None = any value)."""
    best = result.fastest.step_time_s if result.fastest else None
    rows = [
        {
            "rank": i + 1,
            "dp": e.layout.dp,
            "tp": e.layout.tp,
            "pp": e.layout.pp,
            "cp": e.layout.cp,
            "ep": e.layout.ep,
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
        | _labels(
            e.layout.zero_stage, e.layout.schedule, e.layout.num_chunks, e.layout.layers_per_stage
        )
        for i, e in enumerate(result.ranked[:limit])
    ]
    rows += [
        {
            "rank": None,
            "dp": r.dp,
            "tp": r.tp,
            "pp": r.pp,
            "cp": r.cp,
            "ep": r.ep,
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
        | _labels(r.zero_stage, r.schedule, r.num_chunks)
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


def validation_rows() -> list[dict]:
    """Published runs the model was not fitted on: published vs predicted MFU (core.planner)."""
    out = []
    for row in map(validate, LLAMA3_405B):
        ev, r = row.fitting or row.fastest, row.run
        out.append(
            {
                "run": r.name,
                "TP × PP × DP": f"{r.tp} × {r.pp} × {r.dp}",
                "published MFU": f"{r.mfu:.0%}",
                "predicted MFU": f"{ev.mfu:.1%}",
                "error": f"{row.error:+.1%}",
                "step (s)": round(ev.step_time_s, 2),
                "planner's variant": f"{ev.layout.label}, {ev.training.recompute} recompute",
            }
        )
    return out


# Table column -> (header, printf or Streamlit number format (None: shown as is), column width), in
# order.
TABLE_COLUMNS = {
    "rank": ("#", None, "small"),
    "dp": ("DP", None, "small"),
    "tp": ("TP", None, "small"),
    "pp": ("PP", None, "small"),
    "cp": ("CP", None, "small"),
    "ep": ("EP", None, "small"),
    "zero": ("ZeRO", None, "small"),
    "micro_batch": ("mb", None, "small"),
    "step_time_s": ("step (s)", "%.3g", "small"),
    "mfu": ("MFU", "percent", "small"),
    "memory": ("memory", "%.1f", "small"),
    "status": ("status", None, "small"),
    "vs_fastest": ("vs fastest", "percent", "small"),
    "schedule_label": ("schedule", None, "small"),
    "layers": ("layers", None, "small"),
    "tokens_per_s": ("tokens/s", "compact", "small"),
    "boring": ("boring", None, "small"),
    "reason": ("reason", None, "large"),
}


def table_columns(rule: str) -> list[str]:
    """Columns worth showing for a filter: timings for ranked layouts, the rule and reason for
    rejected
    ones.
    """
    timing, why = (
        {"rank", "step_time_s", "vs_fastest", "mfu", "tokens_per_s", "boring", "layers"},
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
