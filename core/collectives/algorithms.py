"""All-reduce algorithms to compare with the ring, each moving real numpy data step by step.

Schedules follow MPICH (pmodels/mpich src/mpi/coll/allreduce/, reduce/, bcast/) as described by
Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH",
IJHPCA 19(1), 2005; the two-level one is Horovod's hierarchical all-reduce (horovod PR #411).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.collectives.ring import ring_all_reduce
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
    one
    link), rank 0 sums, then sends the sum back to each rank: 2(N-1) steps, root moves (N-1)·S each
    way.
    """
    x = as_rank_inputs(inputs)
    p, _ = x.shape
    ex = Executor(x, [0, x.shape[1]], algorithm="naive", collective="all_reduce")
    for r in range(1, p):
        ex.step("gather", [(r, 0, 0, 1, 1)])
    for r in range(1, p):
        ex.step("broadcast", [(0, r, 0, 1, 0)])
    return ex.finish()


def hierarchical_all_reduce(inputs, *, gpus_per_node: int) -> CollectiveTrace:
    """Two-level: ring reduce-scatter inside each node, ring all-reduce of each GPU's 1/g shard
    across
    nodes (one ring per local GPU index), ring all-gather inside each node (Horovod PR #411).

    Ranks are node-major (rank = node * g + local). Chunk c*m + j is piece j (of m nodes) of
    intra-node
    chunk c (of g); both levels use the ring indexing of core.collectives.ring.
    """
    x = as_rank_inputs(inputs)
    p, e = x.shape
    g = gpus_per_node
    if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1:
        raise ValueError(f"gpus_per_node={g!r} must be a whole number ≥ 1; use e.g. 8")
    if p % g:
        raise ValueError(
            f"{p} ranks are not a whole number of nodes of {g} GPUs: the two-level "
            f"algorithm needs num_ranks divisible by gpus_per_node; use a multiple of {g}"
        )
    m = p // g
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


@dataclass(frozen=True, kw_only=True)
class AllReduceAlgorithm:
    """A simulator in the comparison: its name (the cost model's key), label and source."""

    name: str
    label: str  # short and stable: pages write it into the URL (e.g. ?alg_b=Binomial+tree)
    simulate: Callable[..., CollectiveTrace]
    source: str
    two_level: bool = False  # needs gpus_per_node


ALGORITHMS: dict[str, AllReduceAlgorithm] = {
    a.name: a
    for a in [
        AllReduceAlgorithm(
            name="ring",
            label="Ring",
            simulate=ring_all_reduce,
            source="Gibiansky 2017; pmodels/mpich src/mpi/coll/allreduce/allreduce_intra_ring.c",
        ),
        AllReduceAlgorithm(
            name="halving_doubling",
            label="Halving-doubling",
            simulate=halving_doubling_all_reduce,
            source="Thakur et al. 2005; pmodels/mpich allreduce_intra_reduce_scatter_allgather.c",
        ),
        AllReduceAlgorithm(
            name="recursive_doubling",
            label="Recursive doubling",
            simulate=recursive_doubling_all_reduce,
            source="pmodels/mpich src/mpi/coll/allreduce/allreduce_intra_recursive_doubling.c",
        ),
        AllReduceAlgorithm(
            name="tree",
            label="Binomial tree",
            simulate=tree_all_reduce,
            source="pmodels/mpich reduce_intra_binomial.c, bcast_intra_binomial.c (src/mpi/coll/)",
        ),
        AllReduceAlgorithm(
            name="naive",
            label="Naive",
            simulate=naive_all_reduce,
            source="parameter-server pattern",
        ),
        AllReduceAlgorithm(
            name="hierarchical",
            label="Hierarchical",
            two_level=True,
            simulate=hierarchical_all_reduce,
            source="Horovod PR #411 (2018)",
        ),
    ]
}


def simulate_all_reduce(
    algorithm: str, inputs, *, gpus_per_node: int | None = None
) -> CollectiveTrace:
    """Run one registered all-reduce simulator by name."""
    if algorithm not in ALGORITHMS:
        raise ValueError(
            f"unknown all-reduce algorithm {algorithm!r}: choose one of {', '.join(ALGORITHMS)}"
        )
    entry = ALGORITHMS[algorithm]
    if entry.two_level:
        if gpus_per_node is None:
            raise ValueError(
                f"{algorithm} needs gpus_per_node (GPUs per node); pass e.g. gpus_per_node=8"
            )
        return entry.simulate(inputs, gpus_per_node=gpus_per_node)
    return entry.simulate(inputs)


@dataclass(frozen=True, kw_only=True)
class BytesScan:
    """Bytes per rank measured by simulation, scaled to a message of message_bytes per rank."""

    num_ranks: np.ndarray
    message_bytes: float
    max_bytes_sent: dict[str, np.ndarray]  # per algorithm: the busiest rank's bytes sent
    max_bytes_received: dict[str, np.ndarray]


def scan_bytes_per_rank(
    rank_counts, message_bytes: float, algorithms: tuple[str, ...] = ("ring", "naive")
) -> BytesScan:
    """Simulate each algorithm on N float32 elements per rank (one per ring chunk) and scale the
    measured bytes by message_bytes / (4 N): exact whenever S splits evenly into the same chunks."""
    counts = np.asarray(rank_counts, dtype=np.int64)
    if counts.ndim != 1 or counts.size == 0 or (counts < 1).any():
        raise ValueError(
            f"rank_counts={rank_counts!r} must be a non-empty list of whole numbers ≥ 1"
        )
    if not message_bytes > 0:
        raise ValueError(f"message_bytes={message_bytes!r} must be > 0; use e.g. 1e9")
    sent = {a: np.zeros(counts.size) for a in algorithms}
    received = {a: np.zeros(counts.size) for a in algorithms}
    for i, n in enumerate(counts.tolist()):
        x = np.ones((n, n), dtype=np.float32)
        for a in algorithms:
            t = simulate_all_reduce(a, x)
            scale = message_bytes / t.message_bytes
            sent[a][i] = t.bytes_sent.max() * scale
            received[a][i] = t.bytes_received.max() * scale
    return BytesScan(
        num_ranks=counts,
        message_bytes=float(message_bytes),
        max_bytes_sent=sent,
        max_bytes_received=received,
    )
