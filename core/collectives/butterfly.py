"""Butterfly all-reduces (partners at rank XOR 1, 2, 4, ...), moving real numpy data step by step:
Rabenseifner's recursive halving-doubling and recursive doubling.

Schedules follow MPICH (pmodels/mpich src/mpi/coll/allreduce/) as described by Thakur, Rabenseifner
& Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005.
"""

from __future__ import annotations

from core.collectives.trace import CollectiveTrace, Executor, as_rank_inputs, chunk_offsets


def _fold(ex: Executor, p: int, phase: str) -> tuple[int, list[int]]:
    """MPICH's non-power-of-two step: among ranks < 2*rem, even ranks hand their vector to rank + 1.

    Returns pof2 (largest power of two ≤ p) and the real rank behind each of the pof2 new ranks.
    """
    pof2 = 1 << (p.bit_length() - 1)
    rem = p - pof2
    if rem:
        ex.step(phase, [(2 * i, 2 * i + 1, 0, ex.off.size - 1, True) for i in range(rem)])
    return pof2, [2 * i + 1 if i < rem else i + rem for i in range(pof2)]


def _unfold(ex: Executor, p: int) -> None:
    """Odd ranks < 2*rem return the result to the even ranks that sat out."""
    rem = p - (1 << (p.bit_length() - 1))
    if rem:
        ex.step("unfold", [(2 * i + 1, 2 * i, 0, ex.off.size - 1, False) for i in range(rem)])


def halving_doubling_all_reduce(inputs) -> CollectiveTrace:
    """Rabenseifner: recursive-halving reduce-scatter then recursive-doubling all-gather.

    Blocks: the vector is cut into pof2 blocks; at distance mask = 1, 2, 4, ... the lower rank of
    each pair keeps the lower half of its block range (pmodels/mpich
    src/mpi/coll/allreduce/allreduce_intra_reduce_scatter_allgather.c).
    Non-power-of-two N: one extra fold step before and one unfold step after (same file).
    """
    x = as_rank_inputs(inputs)
    p, e = x.shape
    pof2 = 1 << (p.bit_length() - 1)
    ex = Executor(x, chunk_offsets(e, pof2), algorithm="halving_doubling", collective="all_reduce")
    pof2, real = _fold(ex, p, "fold")
    lo, hi = [0] * pof2, [pof2] * pof2
    mask = 1
    while mask < pof2:
        moves, keep = [], []
        for nr in range(pof2):
            mid = (lo[nr] + hi[nr]) // 2
            low_side = nr < nr ^ mask
            moves.append(
                (real[nr], real[nr ^ mask], *((mid, hi[nr]) if low_side else (lo[nr], mid)), 1)
            )
            keep.append((lo[nr], mid) if low_side else (mid, hi[nr]))
        ex.step("reduce_scatter", moves)
        lo, hi = [k[0] for k in keep], [k[1] for k in keep]
        mask <<= 1
    mask >>= 1
    while mask >= 1:
        ex.step(
            "all_gather", [(real[nr], real[nr ^ mask], lo[nr], hi[nr], 0) for nr in range(pof2)]
        )
        lo = [min(lo[nr], lo[nr ^ mask]) for nr in range(pof2)]
        hi = [max(hi[nr], hi[nr ^ mask]) for nr in range(pof2)]
        mask >>= 1
    _unfold(ex, p)
    return ex.finish()


def recursive_doubling_all_reduce(inputs) -> CollectiveTrace:
    """Recursive doubling: at distance 1, 2, 4, ... partners swap whole vectors and both add.

    MPICH (pmodels/mpich allreduce_intra_recursive_doubling.c), same fold/unfold for non-pof2 N.
    """
    x = as_rank_inputs(inputs)
    p, _ = x.shape
    ex = Executor(x, [0, x.shape[1]], algorithm="recursive_doubling", collective="all_reduce")
    pof2, real = _fold(ex, p, "fold")
    mask = 1
    while mask < pof2:
        ex.step("exchange", [(real[nr], real[nr ^ mask], 0, 1, 1) for nr in range(pof2)])
        mask <<= 1
    _unfold(ex, p)
    return ex.finish()
