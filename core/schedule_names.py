"""Pipeline schedules by name: display label, placement, backward split, chunk rule, source.

A shared noun: a Layout names its schedule from here; core.pipeline attaches the op-order builders
to the same names and core.memory sizes the activations of a subset of them.
"""

from __future__ import annotations

from dataclasses import dataclass


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
        source="Narayanan 2021; NVIDIA/Megatron-LM megatron/core/pipeline_parallel/schedules.py",
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
