"""Reliability at scale: failure rates, checkpoint intervals and goodput."""

from core.reliability.checkpoints import (
    CHECKPOINT_CONTENTS,
    Checkpoint,
    checkpoint,
    daly_interval_s,
    optimal_interval_s,
    young_interval_s,
)
from core.reliability.failures import (
    DAY_S,
    HOUR_S,
    LLAMA3_GPU_MTBF_S,
    LLAMA3_GPUS,
    LLAMA3_JOB_MTBF_S,
    LLAMA3_PLANNED,
    LLAMA3_SNAPSHOT_S,
    LLAMA3_UNEXPECTED,
    Interruptions,
    interruptions,
)
from core.reliability.goodput import (
    GoodputCurve,
    UsefulDevices,
    Waste,
    degenerate,
    goodput_curve,
    useful_devices,
    waste,
)
from core.reliability.montecarlo import MonteCarloGoodput, simulate_goodput

__all__ = [
    "CHECKPOINT_CONTENTS",
    "Checkpoint",
    "DAY_S",
    "GoodputCurve",
    "HOUR_S",
    "Interruptions",
    "LLAMA3_GPUS",
    "LLAMA3_GPU_MTBF_S",
    "LLAMA3_JOB_MTBF_S",
    "LLAMA3_PLANNED",
    "LLAMA3_SNAPSHOT_S",
    "LLAMA3_UNEXPECTED",
    "MonteCarloGoodput",
    "UsefulDevices",
    "Waste",
    "checkpoint",
    "daly_interval_s",
    "degenerate",
    "goodput_curve",
    "interruptions",
    "optimal_interval_s",
    "simulate_goodput",
    "useful_devices",
    "waste",
    "young_interval_s",
]
