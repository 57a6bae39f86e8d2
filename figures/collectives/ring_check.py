"""What the ring animation can draw: a ring all-reduce trace of 2 … 32 GPUs, and a timing trace
of the same ring (figures/collectives/ring.py)."""

from __future__ import annotations

from core.collectives import CollectiveTrace

MAX_ANIMATED_RANKS = 32


def check_ring(trace: CollectiveTrace, timing: CollectiveTrace | None) -> None:
    n = trace.num_ranks
    if trace.collective != "all_reduce" or trace.algorithm != "ring":
        raise ValueError(
            f"the ring animation needs a ring all-reduce trace, got {trace.algorithm} "
            f"{trace.collective}; use ring_all_reduce(inputs)"
        )
    if n > MAX_ANIMATED_RANKS or trace.contributions is None:
        raise ValueError(f"N={n} ranks is too many to animate: use N ≤ {MAX_ANIMATED_RANKS}")
    if n < 2:
        raise ValueError("a ring of N=1 GPU sends nothing: use N ≥ 2")
    if timing is not None and (
        timing.num_ranks != n or timing.num_steps != trace.num_steps or timing.algorithm != "ring"
    ):
        raise ValueError(
            f"the timing trace must be a ring all-reduce on the same {n} ranks "
            f"({trace.num_steps} steps); simulate it with the same N"
        )
