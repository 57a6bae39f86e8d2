"""The pipeline schedules by name (ScheduleInfo: placement, backward split, input rules) and the
check of a schedule's inputs; core.pipeline.orders builds their per-rank op orders.
"""

from __future__ import annotations

from core.checks import check_choice, whole_number

# The registry (label, placement, chunk rule, source) is a shared noun; core.pipeline.orders keys
# its builders by the same names. Re-exported: `from core.pipeline import SCHEDULES` keeps working.
from core.schedule_names import SCHEDULES, ScheduleInfo, check_chunks  # noqa: F401

MAX_OPS = 1_000_000  # beyond this the pure-Python simulator would take seconds


def check_inputs(schedule: str, p: int, m: int, v: int) -> ScheduleInfo:
    """Raise ValueError stating the numbers, the rule and the fix; return the schedule's info."""
    info = SCHEDULES[check_choice("schedule", schedule, SCHEDULES)]
    p, m, v = (
        whole_number(name, value, fix="use 1 or more")
        for name, value in (("P (pipeline ranks)", p), ("M (micro-batches)", m), ("v (chunks)", v))
    )
    check_chunks(schedule, v)
    if schedule == "interleaved_1f1b" and m % p:
        # Megatron's interleaved schedule (older form, G = P) wants whole groups of P micro-batches.
        raise ValueError(
            f"interleaved_1f1b needs M a multiple of P: M={m}, P={p}; use M={-(-m // p) * p}"
        )
    if info.placement == "v" and m < 2 * p:
        fix = f"use M={2 * p}" + (f" or P={m // 2}" if m >= 2 else "")
        raise ValueError(
            f"{schedule} needs M ≥ 2P micro-batches to fill the V: M={m}, P={p}; {fix}"
        )
    ops = (3 if info.splits_backward else 2) * m * v * p
    if ops > MAX_OPS:
        raise ValueError(
            f"{schedule} at P={p}, M={m}, v={v} has {ops:,} ops, over the "
            f"{MAX_OPS:,}-op limit of this simulator; use a smaller P·M·v"
        )
    return info


def effective_v(schedule: str, v: int) -> tuple[int, str]:
    """The v a schedule runs with (`v` clamped to the values it allows) and a note why, empty when
    `v` is used as given."""
    info = SCHEDULES[check_choice("schedule", schedule, SCHEDULES)]
    lo, hi = info.allowed_v[0], info.allowed_v[-1]
    if lo == hi:
        note = "one stage per rank, v unused" if hi == 1 else f"V placement, v forced to {hi}"
    else:
        note = f"needs v ≥ {lo}, runs v = {lo}" if v < lo else ""
    return min(max(v, lo), hi), note and f"{info.short_label}: {note}."
