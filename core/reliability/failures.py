"""Failures at scale: independent GPU failures add their rates, so a job's MTBF is MTBF_gpu / N."""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.checks import positive, whole_number

HOUR_S, DAY_S = 3600.0, 86400.0

# Llama 3 (Dubey et al. 2024, arXiv:2407.21783, Sec. 3.3.4): 466 job interruptions in a 54-day
# pre-training snapshot, 47 planned and 419 unexpected, on up to 16K (16,384) H100s.
LLAMA3_GPUS, LLAMA3_SNAPSHOT_S, LLAMA3_UNEXPECTED, LLAMA3_PLANNED = 16_384, 54 * DAY_S, 419, 47
LLAMA3_JOB_MTBF_S = LLAMA3_SNAPSHOT_S / LLAMA3_UNEXPECTED
# Implied per-GPU MTBF, as if every unexpected interruption were one GPU's independent failure.
LLAMA3_GPU_MTBF_S = LLAMA3_JOB_MTBF_S * LLAMA3_GPUS


@dataclass(frozen=True, kw_only=True)
class Interruptions:
    """Failures of an N-GPU job over a run: a Poisson process at rate N / MTBF_gpu."""

    num_gpus: int
    gpu_mtbf_s: float
    run_s: float
    job_mtbf_s: float  # MTBF_gpu / N (docs/notes/planner.md §4)
    expected_interruptions: float  # N T / MTBF_gpu
    prob_no_failure: float  # exp(-N T / MTBF_gpu)


def interruptions(
    *,
    num_gpus: int,
    run_s: float,
    gpu_mtbf_s: float | None = None,
    gpu_failure_rate_per_s: float | None = None,
) -> Interruptions:
    """Job MTBF and expected failures: independent exponential failures add their rates."""
    n = whole_number("num_gpus", num_gpus, fix="use e.g. 16384")
    if (gpu_mtbf_s is None) == (gpu_failure_rate_per_s is None):
        raise ValueError(
            "give exactly one of gpu_mtbf_s or gpu_failure_rate_per_s (rate = 1 / MTBF)"
        )
    if gpu_mtbf_s is None:
        gpu_mtbf_s = 1.0 / positive(
            "gpu_failure_rate_per_s",
            gpu_failure_rate_per_s,
            fix="use e.g. 1 / (50000 h) ≈ 5.6e-9 per second",
        )
    gpu_mtbf = positive("gpu_mtbf_s", gpu_mtbf_s, fix="use e.g. 50000 h = 1.8e8 s")
    t, m = positive("run_s", run_s, fix="use e.g. 7 days = 604800 s"), gpu_mtbf / n
    return Interruptions(
        num_gpus=n,
        gpu_mtbf_s=gpu_mtbf,
        run_s=t,
        job_mtbf_s=m,
        expected_interruptions=t / m,
        prob_no_failure=math.exp(-t / m),
    )
