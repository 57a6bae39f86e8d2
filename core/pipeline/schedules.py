"""The pipeline schedules by name (ScheduleInfo: placement, backward split, input rules) and the
check of a schedule's inputs; core.pipeline.orders builds their per-rank op orders.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import check_choice, whole_number

MAX_OPS = 1_000_000  # beyond this the pure-Python simulator would take seconds


@dataclass(frozen=True, kw_only=True)
class ScheduleInfo:
    """Registry entry: display label, placement, backward split and input rules."""

    label: str
    placement: str  # "loop": stage s on rank s mod P; "v": rank r holds stages r and 2P-1-r
    splits_backward: bool
    allowed_v: tuple[int, ...]
    constraints: str
    source: str


SCHEDULES: dict[str, ScheduleInfo] = {
    "gpipe": ScheduleInfo(
        label="GPipe",
        placement="loop",
        splits_backward=False,
        allowed_v=(1,),
        constraints="none",
        source="Huang et al. 2019; torch ScheduleGPipe",
    ),
    "1f1b": ScheduleInfo(
        label="1F1B",
        placement="loop",
        splits_backward=False,
        allowed_v=(1,),
        constraints="none (warm-up capped at M)",
        source="PipeDream-Flush; Megatron non-interleaved",
    ),
    "interleaved_1f1b": ScheduleInfo(
        label="Interleaved 1F1B",
        placement="loop",
        splits_backward=False,
        allowed_v=tuple(range(2, 9)),
        constraints="v ≥ 2; M a multiple of P",
        source="Narayanan et al. 2021; Megatron-LM pipeline_parallel/schedules.py",
    ),
    "looped_bfs": ScheduleInfo(
        label="Looped BFS",
        placement="loop",
        splits_backward=False,
        allowed_v=tuple(range(1, 9)),
        constraints="none",
        source="Lamy-Poirier 2022; torch ScheduleLoopedBFS",
    ),
    "zb_h1": ScheduleInfo(
        label="ZB-H1",
        placement="loop",
        splits_backward=True,
        allowed_v=(1,),
        constraints="none",
        source="Qi et al. ICLR 2024 (ZB1P); torch ScheduleInterleavedZeroBubble",
    ),
    "zb_v": ScheduleInfo(
        label="ZB-V",
        placement="v",
        splits_backward=True,
        allowed_v=(2,),
        constraints="v = 2; M ≥ 2P",
        source="Qi et al. 2024 sec. 6; torch ScheduleZBVZeroBubble",
    ),
    "dualpipe_v": ScheduleInfo(
        label="DualPipeV",
        placement="v",
        splits_backward=True,
        allowed_v=(2,),
        constraints="v = 2; M ≥ 2P",
        source="deepseek-ai/DualPipe dualpipe/dualpipev.py",
    ),
}


def check_inputs(schedule: str, p: int, m: int, v: int) -> ScheduleInfo:
    """Raise ValueError stating the numbers, the rule and the fix; return the schedule's info."""
    info = SCHEDULES[check_choice("schedule", schedule, SCHEDULES)]
    p, m, v = (
        whole_number(name, value, fix="use 1 or more")
        for name, value in (("P (pipeline ranks)", p), ("M (micro-batches)", m), ("v (chunks)", v))
    )
    if v not in info.allowed_v:
        lo, hi = info.allowed_v[0], info.allowed_v[-1]
        fix = lo if v < lo else hi
        allowed = f"v = {lo}" if lo == hi else f"v from {lo} to {hi}"
        raise ValueError(f"{schedule} allows {allowed} (model chunks per rank): v={v}; use v={fix}")
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
