"""Pipeline schedules by name: display label, placement, backward split, chunk rule, source.

A shared noun: a Layout names its schedule from here; core.pipeline attaches the op-order builders
to the same names and core.memory sizes the activations of a subset of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import check_choice


@dataclass(frozen=True, kw_only=True)
class ScheduleInfo:
    """Registry entry: display label, placement, backward split and input rules."""

    label: str
    short_label: str  # the pipeline page's select writes it into the URL: keep it stable
    placement: str  # "loop": stage s on rank s mod P; "v": rank r holds stages r and 2P-1-r
    splits_backward: bool
    allowed_v: tuple[int, ...]
    constraints: str
    source: str


SCHEDULES: dict[str, ScheduleInfo] = {
    "gpipe": ScheduleInfo(
        short_label="GPipe",
        label="GPipe",
        placement="loop",
        splits_backward=False,
        allowed_v=(1,),
        constraints="none",
        source="Huang et al. 2019; torch ScheduleGPipe",
    ),
    "1f1b": ScheduleInfo(
        short_label="1F1B",
        label="1F1B",
        placement="loop",
        splits_backward=False,
        allowed_v=(1,),
        constraints="none (warm-up capped at M)",
        source="PipeDream-Flush; Megatron non-interleaved",
    ),
    "interleaved_1f1b": ScheduleInfo(
        short_label="Interleaved",
        label="Interleaved 1F1B",
        placement="loop",
        splits_backward=False,
        allowed_v=tuple(range(2, 9)),
        constraints="v ≥ 2; M a multiple of P",
        source="Narayanan 2021; NVIDIA/Megatron-LM megatron/core/pipeline_parallel/schedules.py",
    ),
    "zb_h1": ScheduleInfo(
        short_label="ZB-H1",
        label="ZB-H1",
        placement="loop",
        splits_backward=True,
        allowed_v=(1,),
        constraints="none",
        source="Qi et al. ICLR 2024 (ZB1P); torch ScheduleInterleavedZeroBubble",
    ),
    "zb_v": ScheduleInfo(
        short_label="ZB-V",
        label="ZB-V",
        placement="v",
        splits_backward=True,
        allowed_v=(2,),
        constraints="v = 2; M ≥ 2P",
        source="Qi et al. 2024 sec. 6; torch ScheduleZBVZeroBubble",
    ),
    "dualpipe_v": ScheduleInfo(
        short_label="DualPipeV",
        label="DualPipeV",
        placement="v",
        splits_backward=True,
        allowed_v=(2,),
        constraints="v = 2; M ≥ 2P",
        source="deepseek-ai/DualPipe dualpipe/dualpipev.py",
    ),
    "looped_bfs": ScheduleInfo(
        short_label="Looped BFS",
        label="Looped BFS",
        placement="loop",
        splits_backward=False,
        allowed_v=tuple(range(1, 9)),
        constraints="none",
        source="Lamy-Poirier 2022; torch ScheduleLoopedBFS",
    ),
}


def check_chunks(schedule: str, v: int, name: str = "v") -> ScheduleInfo:
    """The chunk rule (v among the schedule's allowed values), with `name` the caller's word for v
    in the fix; return the schedule's info."""
    info = SCHEDULES[check_choice("schedule", schedule, SCHEDULES)]
    if v not in info.allowed_v:
        lo, hi = info.allowed_v[0], info.allowed_v[-1]
        allowed = f"{name} = {lo}" if lo == hi else f"{name} from {lo} to {hi}"
        raise ValueError(
            f"{schedule} allows {allowed} (model chunks per rank): {name}={v}; "
            f"use {name}={lo if v < lo else hi}"
            + (", or interleaved_1f1b for 2 to 8" if hi == 1 else "")
        )
    return info
