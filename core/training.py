"""How a model is trained: batch, sequence, precision recipe, recompute, and the hardware
efficiencies it runs at. A shared noun of memory, planner, scenarios and pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.checks import check_choice, whole_number
from core.parallel import Layout


@dataclass(frozen=True, kw_only=True)
class RecomputeMode:
    """One activation-recompute mode: display label, the words for it in a sentence, and source."""

    label: str
    phrase: str
    source: str


# Korthikanti et al. 2022 (arXiv:2205.05198) Table 2 and Sec. 5; Megatron-LM's
# --recompute-granularity selective | full.
RECOMPUTE: dict[str, RecomputeMode] = {
    "none": RecomputeMode(
        label="No recompute", phrase="no recompute", source="every activation stored (Table 2)"
    ),
    "selective": RecomputeMode(
        label="Selective",
        phrase="selective recompute",
        source="attention scores recomputed (Korthikanti Sec. 5)",
    ),
    "full": RecomputeMode(
        label="Full",
        phrase="full recompute",
        source="each layer recomputed from its input (Table 2)",
    ),
}
RECOMPUTE_MODES = tuple(RECOMPUTE)  # the names, for callers that only check or list them


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """Bytes per parameter of weights, gradients and optimizer state."""

    name: str
    short: str  # what the label calls it after the byte count
    param_bytes: int
    grad_bytes: int
    optimizer_bytes: int
    source: str

    @property
    def bytes_per_param(self) -> int:
        return self.param_bytes + self.grad_bytes + self.optimizer_bytes

    @property
    def label(self) -> str:
        """Display label, e.g. "16 B mixed Adam" (the planner's select writes it into the URL)."""
        return f"{self.bytes_per_param} B {self.short}"


RECIPES: dict[str, Recipe] = {
    n: Recipe(name=n, short=short, param_bytes=p, grad_bytes=g, optimizer_bytes=o, source=src)
    for n, short, p, g, o, src in [
        (
            "mixed_adam",
            "mixed Adam",
            2,
            2,
            12,
            "ZeRO paper Sec. 3.1: fp16 weights + grads, fp32 master + m + v (K = 12)",
        ),
        (
            "megatron_fp32_grads",
            "Megatron",
            2,
            4,
            12,
            "NVIDIA/Megatron-LM megatron/training/theoretical_memory_usage.py; fp32 grads (#654)",
        ),
        (
            "fp32_adam",
            "fp32 Adam",
            4,
            4,
            8,
            "fp32 weights + grads + m + v (Playbook); FSDP MixedPrecision's sharded fp32",
        ),
        (
            "bf16_no_master",
            "bf16 no master",
            2,
            2,
            8,
            "bf16 weights + grads, fp32 m + v, no master (Playbook charts)",
        ),
        (
            "sgd_momentum",
            "SGD",
            2,
            2,
            8,
            "SGD: fp32 master + momentum = 8 B (EleutherAI Transformer Math 101)",
        ),
    ]
}


def get_recipe(name: str) -> Recipe:
    """Recipe by name, with a clear error for unknown names."""
    check_choice("recipe", name, RECIPES)
    return RECIPES[name]


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """Achievable fractions of hardware peaks; one default set serves every model and cluster."""

    matmul: float = 0.70  # of dense peak for GEMMs: the one value set against Narayanan Table 1
    # (all rows at once); folds in kernel gaps (Calculon: 0.9-0.95 raw)
    hbm: float = 0.85  # of HBM bandwidth, for memory-bound elementwise kernels (Calculon: 0.9)
    intra_link: float = 0.77  # busbw / NVLink: 8x A100 231.6 of 300 GB/s in
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


# The one reserve every page keeps free on each GPU: HBM a training process cannot give to model
# states and activations. Three parts: the CUDA context with its kernel images (~0.5-1 GB per
# process), NCCL's communicator buffers (NCCL_BUFFSIZE, 4 MiB by default, per channel, peer and
# protocol, more with NVLS; NCCL user guide, "Environment Variables") and the caching allocator's
# fragmentation (reserved minus allocated; pytorch/pytorch docs/source/notes/cuda.rst).
# docs/notes/memory.md §4 sums them to 5-10 % of an 80 GB card; the app takes the cautious end.
# Shown as one "Reserve" slice in every memory bar, metric and warning (core.memory.budget).
RESERVE_FRACTION = 0.10
RESERVE_PARTS = "CUDA context + NCCL buffers + allocator fragmentation"


@dataclass(frozen=True, kw_only=True)
class Training:
    """What is trained and how: batch, sequence, precision recipe, recompute and efficiency."""

    global_batch: int  # sequences per optimizer step
    seq_len: int = 2048
    recipe: str = "mixed_adam"
    recompute: str = "none"
    flash_attention: bool = True  # modern practice: no s² attention scores stored
    overlap_dp: bool = True  # gradient sync hidden behind the last micro-batch's backward
    memory_headroom: float = RESERVE_FRACTION  # share of HBM kept free (RESERVE_PARTS)
    efficiency: Efficiency = field(default_factory=Efficiency)
    # Megatron-Core DistributedDataParallelConfig names: overlap_dp is its overlap_grad_reduce;
    # this one hides ZeRO-1/2's parameter all-gather behind the next step's forward, layer by layer.
    overlap_param_gather: bool = True

    def __post_init__(self) -> None:
        for f in ("global_batch", "seq_len"):  # store ints even when given integral floats
            object.__setattr__(self, f, whole_number(f, getattr(self, f)))
        get_recipe(self.recipe)
        check_choice("recompute", self.recompute, RECOMPUTE_MODES)
        if not 0 <= self.memory_headroom < 1:
            raise ValueError(f"memory_headroom={self.memory_headroom!r} must be in [0, 1); use 0.1")

    def num_microbatches(self, layout: Layout) -> int:
        """Micro-batches per pipeline per step: global batch / (DP x micro-batch)."""
        layout.check_batch(self.global_batch)
        return self.global_batch // (layout.dp * layout.micro_batch)
