"""All-reduces through one root, moving real numpy data step by step: binomial tree (reduce to rank
0, then broadcast) and the naive gather-to-root.

The tree follows MPICH (pmodels/mpich src/mpi/coll/reduce/, bcast/) as described by Thakur,
Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1),
2005.
"""

from __future__ import annotations

from core.collectives.trace import CollectiveTrace, Executor, as_rank_inputs


def tree_all_reduce(inputs) -> CollectiveTrace:
    """Binomial-tree reduce to rank 0, then binomial-tree broadcast: 2·ceil(lg N) steps of the whole
    vector.

    pmodels/mpich reduce_intra_binomial.c, bcast_intra_binomial.c: at distance mask, rank r, lowest
    set bit mask, sends to r - mask (reduce); the broadcast replays the tree top-down.
    """
    x = as_rank_inputs(inputs)
    p, _ = x.shape
    ex = Executor(x, [0, x.shape[1]], algorithm="tree", collective="all_reduce")
    mask = 1
    while mask < p:
        ex.step("reduce", [(r, r - mask, 0, 1, 1) for r in range(mask, p, 2 * mask)])
        mask <<= 1
    mask >>= 1
    while mask >= 1:
        ex.step("broadcast", [(r, r + mask, 0, 1, 0) for r in range(0, p - mask, 2 * mask)])
        mask >>= 1
    return ex.finish()


def naive_all_reduce(inputs) -> CollectiveTrace:
    """Parameter-server style: every rank sends its vector to rank 0 (one at a time over rank 0's
    one link), rank 0 sums, then sends the sum back to each rank: 2(N-1) steps, root moves (N-1)·S
    each way.
    """
    x = as_rank_inputs(inputs)
    p, _ = x.shape
    ex = Executor(x, [0, x.shape[1]], algorithm="naive", collective="all_reduce")
    for r in range(1, p):
        ex.step("gather", [(r, 0, 0, 1, 1)])
    for r in range(1, p):
        ex.step("broadcast", [(0, r, 0, 1, 0)])
    return ex.finish()
