"""The all-reduce simulators compared with the ring, by name, and the bytes each moves per rank.

Schedules follow MPICH (pmodels/mpich src/mpi/coll/allreduce/, reduce/, bcast/) as described by
Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH",
IJHPCA 19(1), 2005; the two-level one is Horovod's hierarchical all-reduce (horovod PR #411).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.checks import check_choice
from core.collectives.busbw import check_positive
from core.collectives.butterfly import halving_doubling_all_reduce, recursive_doubling_all_reduce
from core.collectives.hierarchical import hierarchical_all_reduce
from core.collectives.ring import ring_all_reduce
from core.collectives.rooted import naive_all_reduce, tree_all_reduce
from core.collectives.trace import CollectiveTrace


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
    entry = ALGORITHMS[check_choice("algorithm", algorithm, ALGORITHMS)]
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
    message_bytes = check_positive(message_bytes, "message_bytes", "1e9")
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
