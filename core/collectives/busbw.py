"""nccl-tests bus bandwidth (algbw, busbw, per-collective factor) and the cost model's input
checks.
"""

from __future__ import annotations

from core.checks import check_choice, positive, whole_number


def check_ranks(num_ranks, name: str = "num_ranks") -> int:
    """A rank count as an int ≥ 1, or a ValueError naming the rule and the fix."""
    return whole_number(
        name, num_ranks, fix="a collective needs at least one rank (one per GPU); use e.g. 8"
    )


def check_positive(value, name: str, example: str) -> float:
    """A finite number > 0 (sizes, bandwidths, times)."""
    return positive(name, value, fix=f"use e.g. {example}")


def check_nonnegative(value, name: str, example: str) -> float:
    """A finite number ≥ 0 (latencies, gamma)."""
    return positive(name, value, fix=f"0 ignores the term; use e.g. {example}", allow_zero=True)


# busbw = algbw x factor (NVIDIA/nccl-tests doc/PERFORMANCE.md, src/*.cu *GetBw()).
BUS_BANDWIDTH_FACTORS = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "gather": lambda n: (n - 1) / n,
    "scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "send_recv": lambda n: 1.0,
}


def bus_bandwidth_factor(collective: str, num_ranks: int) -> float:
    """nccl-tests busbw/algbw factor, e.g. 2(n-1)/n for all_reduce."""
    factor = BUS_BANDWIDTH_FACTORS[check_choice("collective", collective, BUS_BANDWIDTH_FACTORS)]
    return factor(check_ranks(num_ranks))


def algbw_bytes_per_s(message_bytes: float, time_s: float) -> float:
    """nccl-tests algorithm bandwidth S / t."""
    return check_positive(message_bytes, "message_bytes", "1e9") / check_positive(
        time_s, "time_s", "6.26e-3 (a measured time)"
    )


def busbw_bytes_per_s(
    collective: str, num_ranks: int, message_bytes: float, time_s: float
) -> float:
    """nccl-tests bus bandwidth: algbw x the collective's factor (comparable with link speed)."""
    return algbw_bytes_per_s(message_bytes, time_s) * bus_bandwidth_factor(collective, num_ranks)
