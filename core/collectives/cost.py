"""Alpha-beta-gamma times of flat collectives (one link per rank) and of a simulated trace.

t = a·alpha + b·n·beta + c·n·gamma, alpha = per-message latency, beta = 1/B (B = bytes/s per link
direction), gamma = seconds per byte reduced. Coefficients: Thakur, Rabenseifner & Gropp, IJHPCA
19(1) 2005, as in the pmodels/mpich src/mpi/coll/ comments (derivations: docs/notes/collectives.md).
Two-tier clusters (NVLink inside nodes, NICs between): core.collectives.two_tier.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_choice
from core.collectives.busbw import check_nonnegative, check_positive, check_ranks


@dataclass(frozen=True, kw_only=True)
class CostBreakdown:
    """The three terms of an alpha-beta-gamma time, in seconds."""

    latency_s: float
    bandwidth_s: float
    reduction_s: float

    @property
    def time_s(self) -> float:
        return self.latency_s + self.bandwidth_s + self.reduction_s


def _lg_floor(p: int) -> int:
    return p.bit_length() - 1


def _lg_ceil(p: int) -> int:
    return (p - 1).bit_length()


def _rabenseifner(p: int) -> tuple[float, float, float]:
    q = 1 << _lg_floor(p)
    if q == p:  # MPICH allreduce comments: 2 lg p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
        return 2 * _lg_floor(p), 2 * (p - 1) / p, (p - 1) / p
    # Non-power-of-two: fold + unfold steps of the whole vector around the pof2 = q core. MPICH's
    # comment writes (p-1)/p here; the exact schedule moves (q-1)/q (equal when p is a power of
    # two).
    return 2 * _lg_floor(p) + 2, 2 * (q - 1) / q + 2, 1 + (q - 1) / q


def _recursive_doubling(p: int) -> tuple[float, float, float]:
    k = _lg_floor(p) + (
        0 if p & (p - 1) == 0 else 2
    )  # fold/unfold steps when p is not a power of 2
    return k, k, k - (0 if p & (p - 1) == 0 else 1)


# name -> (label, formula, coefficients(p) -> (alpha count, beta factor, gamma factor))
ALL_REDUCE_MODELS = {
    "ring": (
        "Ring",
        "2(p−1)·α + 2(p−1)/p·n·β + (p−1)/p·n·γ",
        lambda p: (2 * (p - 1), 2 * (p - 1) / p, (p - 1) / p),
    ),
    "halving_doubling": (
        "Recursive halving-doubling (Rabenseifner)",
        "2·lg p·α + 2(p−1)/p·n·β + (p−1)/p·n·γ (p a power of 2)",
        _rabenseifner,
    ),
    "recursive_doubling": (
        "Recursive doubling",
        "lg p·α + lg p·n·β + lg p·n·γ (p a power of 2)",
        _recursive_doubling,
    ),
    "tree": (
        "Binomial tree reduce + broadcast (MPICH)",
        "2⌈lg p⌉·α + 2⌈lg p⌉·n·β + ⌈lg p⌉·n·γ",
        lambda p: (2 * _lg_ceil(p), 2 * _lg_ceil(p), _lg_ceil(p)),
    ),
    # NCCL's tree: two complementary binary trees each carry half the data, reduce up then
    # broadcast down, pipelined in chunks; per rank ~n up and ~n down whatever p, and a chunk
    # crosses ⌈lg p⌉ levels each way (NVIDIA/nccl src/graph/trees.cc; docs/notes/collectives.md §6).
    "double_binary_tree": (
        "Double binary tree, pipelined (NCCL)",
        "2⌈lg p⌉·α + 2·n·β + n·γ (pipelined; fill ignored)",
        lambda p: (2 * _lg_ceil(p), 2.0, 1.0),
    ),
    "naive": (
        "Naive (gather to root, broadcast)",
        "2(p−1)·α + 2(p−1)·n·β + (p−1)·n·γ",
        lambda p: (2 * (p - 1), 2 * (p - 1), p - 1),
    ),
}


def all_reduce_coefficients(algorithm: str, num_ranks: int) -> tuple[float, float, float]:
    """(alpha count, beta factor, gamma factor) of an all-reduce algorithm on num_ranks ranks."""
    model = ALL_REDUCE_MODELS[check_choice("algorithm", algorithm, ALL_REDUCE_MODELS)]
    return model[2](check_ranks(num_ranks))


def all_reduce_cost(
    algorithm: str,
    num_ranks: int,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float = 0.0,
    *,
    gamma_s_per_byte: float = 0.0,
) -> CostBreakdown:
    """Latency, bandwidth and reduction terms of one all-reduce of message_bytes per rank."""
    a, b, c = all_reduce_coefficients(algorithm, num_ranks)
    n = check_positive(message_bytes, "message_bytes", "1e9 (1 GB)")
    bw = check_positive(
        bandwidth_bytes_per_s, "bandwidth_bytes_per_s", "450e9 (NVLink 4, per direction)"
    )
    alpha = check_nonnegative(latency_s, "latency_s", "5e-6 (5 µs)")
    gamma = check_nonnegative(gamma_s_per_byte, "gamma_s_per_byte", "1e-12")
    return CostBreakdown(latency_s=a * alpha, bandwidth_s=b * n / bw, reduction_s=c * n * gamma)


def all_reduce_time_s(
    algorithm: str,
    num_ranks: int,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float = 0.0,
    *,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Alpha-beta(-gamma) time of one all-reduce (message_bytes = each rank's buffer)."""
    return all_reduce_cost(
        algorithm,
        num_ranks,
        message_bytes,
        bandwidth_bytes_per_s,
        latency_s,
        gamma_s_per_byte=gamma_s_per_byte,
    ).time_s


def crossover_message_bytes(
    algorithm_a: str,
    algorithm_b: str,
    num_ranks: int,
    bandwidth_bytes_per_s: float,
    latency_s: float,
) -> float | None:
    """Message size where two all-reduce algorithms take equal time (gamma = 0), or None if
    never.
    """
    a1, b1, _ = all_reduce_coefficients(algorithm_a, num_ranks)
    a2, b2, _ = all_reduce_coefficients(algorithm_b, num_ranks)
    beta = 1 / check_positive(bandwidth_bytes_per_s, "bandwidth_bytes_per_s", "50e9")
    alpha = check_nonnegative(latency_s, "latency_s", "10e-6")
    if b1 == b2:
        return None
    n = (a1 - a2) * alpha / ((b2 - b1) * beta)
    return n if n > 0 else None


def _rs_ag_coefficients(algorithm: str, p: int) -> tuple[float, float]:
    if check_choice("algorithm", algorithm, ("ring", "recursive")) == "ring":
        return p - 1, (p - 1) / p
    if p & (p - 1):
        raise ValueError(
            f"recursive halving/doubling needs a power-of-two rank count, got {p}; "
            "use algorithm='ring' or a power of two"
        )
    return _lg_floor(p), (p - 1) / p


def reduce_scatter_time_s(
    num_ranks: int,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float = 0.0,
    *,
    algorithm: str = "ring",
    gamma_s_per_byte: float = 0.0,
) -> float:
    """Reduce-scatter time; message_bytes = the whole vector (the NVIDIA/nccl-tests convention)."""
    a, b = _rs_ag_coefficients(algorithm, check_ranks(num_ranks))
    n = check_positive(message_bytes, "message_bytes", "1e9 (1 GB)")
    bw = check_positive(bandwidth_bytes_per_s, "bandwidth_bytes_per_s", "450e9")
    return (
        a * check_nonnegative(latency_s, "latency_s", "5e-6")
        + b * n / bw
        + b * n * check_nonnegative(gamma_s_per_byte, "gamma_s_per_byte", "1e-12")
    )


def all_gather_time_s(
    num_ranks: int,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float = 0.0,
    *,
    algorithm: str = "ring",
) -> float:
    """All-gather time; message_bytes = the whole gathered vector (nccl-tests convention)."""
    a, b = _rs_ag_coefficients(algorithm, check_ranks(num_ranks))
    n = check_positive(message_bytes, "message_bytes", "1e9 (1 GB)")
    bw = check_positive(bandwidth_bytes_per_s, "bandwidth_bytes_per_s", "450e9")
    return a * check_nonnegative(latency_s, "latency_s", "5e-6") + b * n / bw


def step_times_s(
    trace,
    bandwidth_bytes_per_s: float,
    latency_s: float = 0.0,
    *,
    gamma_s_per_byte: float = 0.0,
    inter_bandwidth_bytes_per_s: float | None = None,
    inter_latency_s: float | None = None,
    bytes_scale: float = 1.0,
) -> np.ndarray:
    """Seconds per step of a simulated trace: alpha + largest message·beta + largest
    reduction·gamma.

    All of a step's transfers run at once on separate links, so the largest one sets its pace.
    Steps on the "inter" tier use the inter_* values (default: the same link). bytes_scale > 1 lets
    a
    small simulated tensor stand for a message bytes_scale times larger.
    """
    bw = check_positive(bandwidth_bytes_per_s, "bandwidth_bytes_per_s", "450e9")
    alpha = check_nonnegative(latency_s, "latency_s", "5e-6")
    gamma = check_nonnegative(gamma_s_per_byte, "gamma_s_per_byte", "1e-12")
    scale = check_positive(bytes_scale, "bytes_scale", "message_bytes / trace.message_bytes")
    bw_net = (
        bw
        if inter_bandwidth_bytes_per_s is None
        else check_positive(inter_bandwidth_bytes_per_s, "inter_bandwidth_bytes_per_s", "50e9")
    )
    a_net = (
        alpha
        if inter_latency_s is None
        else check_nonnegative(inter_latency_s, "inter_latency_s", "14e-6")
    )
    return np.array(
        [
            (a_net if s.tier == "inter" else alpha)
            + scale * s.max_bytes / (bw_net if s.tier == "inter" else bw)
            + scale * s.max_reduced_bytes * gamma
            for s in trace.steps
        ],
        dtype=float,
    )
