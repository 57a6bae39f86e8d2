"""What is trained and how (batch, sequence, recipe, recompute) and the hardware efficiencies it
runs
at.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.checks import check_choice, whole_number
from core.memory import RECOMPUTE_MODES, SCHEDULES, get_recipe


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """Achievable fractions of hardware peaks; one default set serves every model and cluster."""

    matmul: float = 0.70  # of dense peak for GEMMs: the one value set against Narayanan Table 1
    # (all rows at once); folds in kernel gaps (Calculon: 0.9-0.95 raw)
    hbm: float = 0.85  # of HBM bandwidth, for memory-bound elementwise kernels (Calculon: 0.9)
    intra_link: float = 0.77  # busbw / NVLink: 8x A100 231.6 of 300 GB/s, 8 GB all-reduce in
    # Azure/AI-benchmarking-guide Azure_Results/ND_A100_v4_results.md
    inter_link: float = (
        0.94  # per NIC: 47 of 50 GB/s NDR (nccl-tests #290), 24 of 25 HDR (nccl #812)
    )
    tp_overlap: float = 0.0  # share of TP communication hidden behind compute (Megatron 2021: none)

    def __post_init__(self) -> None:
        for f in ("matmul", "hbm", "intra_link", "inter_link", "tp_overlap"):
            v, zero_ok = getattr(self, f), f == "tp_overlap"
            if not (0 <= v if zero_ok else 0 < v) or v > 1:
                raise ValueError(
                    f"efficiency {f}={v!r} must be in {'[' if zero_ok else '('}0, 1]: a "
                    f"fraction; use e.g. {0 if zero_ok else 0.7}"
                )


@dataclass(frozen=True, kw_only=True)
class Training:
    """What is trained and how: batch, sequence, precision recipe, recompute and efficiency."""

    global_batch: int  # sequences per optimizer step
    seq_len: int = 2048
    micro_batch: int = 1  # used when a Layout leaves its micro_batch unset
    recipe: str = "mixed_adam"
    recompute: str = "none"
    schedule: str = "1f1b"  # used when a Layout leaves its schedule unset
    flash_attention: bool = True
    sequence_parallel: bool = False
    overlap_dp: bool = True  # gradient sync hidden behind the last micro-batch's backward
    memory_headroom: float = 0.1  # share of HBM kept free: CUDA context, NCCL buffers, fragments
    efficiency: Efficiency = field(default_factory=Efficiency)

    def __post_init__(self) -> None:
        for f in ("global_batch", "seq_len", "micro_batch"):
            whole_number(f, getattr(self, f))
        get_recipe(self.recipe)
        check_choice("recompute", self.recompute, RECOMPUTE_MODES)
        check_choice("schedule", self.schedule, SCHEDULES)
        if not 0 <= self.memory_headroom < 1:
            raise ValueError(f"memory_headroom={self.memory_headroom!r} must be in [0, 1); use 0.1")
