"""The two-level (hierarchical) all-reduce on node-major ranks, moving real numpy data step by step:
Horovod's hierarchical all-reduce (horovod PR #411).
"""

from __future__ import annotations

import numpy as np

from core.checks import whole_number
from core.collectives.trace import CollectiveTrace, Executor, as_rank_inputs, chunk_offsets

# Transfers simulated (steps × ranks): each is a Python-level copy of real data. 274,432 at 1,024
# ranks take ~1.5 s here; 4,096 ranks would be 4.2 M transfers and ~40 s.
MAX_TRANSFERS = 300_000


def hierarchical_all_reduce(inputs, *, gpus_per_node: int) -> CollectiveTrace:
    """Two-level: ring reduce-scatter inside each node, ring all-reduce of each GPU's 1/g shard
    across nodes (one ring per local GPU index), ring all-gather inside each node (Horovod PR #411).

    Ranks are node-major (rank = node * g + local). Chunk c*m + j is piece j (of m nodes) of
    intra-node chunk c (of g); both levels use the reference ring indexing of core.collectives.ring.
    """
    x = as_rank_inputs(inputs)
    p, e = x.shape
    g = whole_number("gpus_per_node", gpus_per_node, fix="use e.g. 8")
    if p % g:
        raise ValueError(
            f"{p} ranks are not a whole number of nodes of {g} GPUs: the two-level "
            f"algorithm needs num_ranks divisible by gpus_per_node; use a multiple of {g}"
        )
    m = p // g
    steps = 2 * (g - 1) + 2 * (m - 1)
    if (moves := steps * p) > MAX_TRANSFERS:
        raise ValueError(
            f"a two-level all-reduce of {p:,} ranks in nodes of {g} is {steps:,}"
            f" steps × {p:,} ranks = {moves:,} transfers of real data, more than "
            f"{MAX_TRANSFERS:,} (the bound on one simulation's time): simulate ≤ 1,024 ranks, "
            "or use the α-β cost model (core.collectives.cost) for a larger cluster"
        )
    intra = chunk_offsets(e, g)
    off = np.concatenate(
        [[0]] + [intra[c] + chunk_offsets(intra[c + 1] - intra[c], m)[1:] for c in range(g)]
    )
    ex = Executor(x, off, algorithm="hierarchical", collective="all_reduce")

    def rank(node: int, local: int) -> int:
        return (node % m) * g + local % g

    for k in range(g - 1):  # ring over local GPUs; chunk (loc - k) carries the whole intra chunk
        ex.step(
            "intra_reduce_scatter",
            [
                (rank(j, loc), rank(j, loc + 1), (loc - k) % g * m, (loc - k) % g * m + m, 1)
                for j in range(m)
                for loc in range(g)
            ],
            tier="intra",
        )
    for phase, shift, red in (("inter_reduce_scatter", 0, 1), ("inter_all_gather", 1, 0)):
        for k in range(
            m - 1
        ):  # local GPU loc now owns intra chunk (loc + 1) mod g; ring over nodes
            ex.step(
                phase,
                [
                    (
                        rank(j, loc),
                        rank(j + 1, loc),
                        (loc + 1) % g * m + (j + shift - k) % m,
                        (loc + 1) % g * m + (j + shift - k) % m + 1,
                        red,
                    )
                    for j in range(m)
                    for loc in range(g)
                ],
                tier="inter",
            )
    for k in range(g - 1):
        ex.step(
            "intra_all_gather",
            [
                (
                    rank(j, loc),
                    rank(j, loc + 1),
                    (loc + 1 - k) % g * m,
                    (loc + 1 - k) % g * m + m,
                    0,
                )
                for j in range(m)
                for loc in range(g)
            ],
            tier="intra",
        )
    return ex.finish()
