"""All-to-all on real data: every rank sends a different block to every other rank.

The pairwise-exchange schedule (p − 1 steps; at step i rank r sends to r + i and receives from
r − i, mod p) follows `pmodels/mpich src/mpi/coll/alltoall/alltoall_intra_pairwise.c`; its α-β cost
is T = (p − 1) α + n / B with n = the bytes a rank sends to the others. nccl-tests prints the
per-rank buffer S (its own block included) and busbw = S / t × (p − 1)/p
(`NVIDIA/nccl-tests src/alltoall.cu`, `doc/PERFORMANCE.md`). The MoE dispatch and the Ulysses
head split are both this collective (docs/notes/cp_ep.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.collectives.busbw import bus_bandwidth_factor, check_nonnegative, check_positive
from core.hardware import Cluster


@dataclass(frozen=True, kw_only=True)
class AllToAllResult:
    """What each rank received (received[dst][src] is src's block for dst) and the traffic."""

    received: tuple[tuple[np.ndarray, ...], ...]
    # step_bytes[i][src, dst]: bytes moved at pairwise step i + 1 (the self block never moves)
    step_bytes: tuple[np.ndarray, ...]
    traffic_bytes: np.ndarray  # [src, dst] total over the steps; the diagonal is zero

    @property
    def num_ranks(self) -> int:
        return len(self.received)

    @property
    def sent_bytes_per_rank(self) -> np.ndarray:
        return self.traffic_bytes.sum(axis=1)

    @property
    def received_bytes_per_rank(self) -> np.ndarray:
        return self.traffic_bytes.sum(axis=0)


def all_to_all(send: list[list[np.ndarray]]) -> AllToAllResult:
    """Pairwise-exchange all-to-all: send[src][dst] is the block src holds for dst (any sizes)."""
    p = len(send)
    if p < 1 or any(len(row) != p for row in send):
        raise ValueError(
            f"all_to_all needs a square p × p list of blocks (send[src][dst]); got {p} rows "
            f"of lengths {[len(r) for r in send]}; give every rank one block per destination"
        )
    inbox: list[list[np.ndarray | None]] = [[None] * p for _ in range(p)]
    for r in range(p):
        inbox[r][r] = np.array(send[r][r], copy=True)  # the own block stays on the rank
    steps = []
    for i in range(1, p):
        moved = np.zeros((p, p))
        for src in range(p):
            dst = (src + i) % p
            block = np.asarray(send[src][dst])
            inbox[dst][src] = block.copy()
            moved[src, dst] = block.nbytes
        steps.append(moved)
    traffic = np.sum(steps, axis=0) if steps else np.zeros((p, p))
    return AllToAllResult(
        received=tuple(tuple(row) for row in inbox),  # type: ignore[arg-type]
        step_bytes=tuple(steps),
        traffic_bytes=traffic,
    )


def all_to_all_time_s(
    buffer_bytes: float, num_ranks: int, *, bandwidth_bytes_per_s: float, latency_s: float = 0.0
) -> float:
    """Pairwise α-β time for a uniform all-to-all of a per-rank buffer S (nccl-tests "size"):
    (p − 1) α + S (p − 1)/p / B."""
    s = check_nonnegative(buffer_bytes, "buffer_bytes", "1e8")
    b = check_positive(bandwidth_bytes_per_s, "bandwidth_bytes_per_s", "450e9")
    a = check_nonnegative(latency_s, "latency_s", "3.4e-6")
    factor = bus_bandwidth_factor("all_to_all", num_ranks)
    return (num_ranks - 1) * a + s * factor / b


def all_to_all_busbw_bytes_per_s(buffer_bytes: float, num_ranks: int, time_s: float) -> float:
    """nccl-tests: algbw = S / t, busbw = algbw × (p − 1)/p (tends to the link rate)."""
    s = check_positive(buffer_bytes, "buffer_bytes", "1e8")
    t = check_positive(time_s, "time_s", "1e-3")
    return s / t * bus_bandwidth_factor("all_to_all", num_ranks)


@dataclass(frozen=True, kw_only=True)
class TwoTierAllToAll:
    """A uniform all-to-all over nodes: the NVLink leg and the NIC leg, seconds."""

    intra_bytes_per_gpu: float  # sent to peers in the same node
    inter_bytes_per_gpu: float  # sent to peers on other nodes
    intra_s: float
    inter_s: float

    @property
    def time_s(self) -> float:
        """Both legs run at once (the NIC leg usually dominates)."""
        return max(self.intra_s, self.inter_s)


def two_tier_all_to_all(buffer_bytes: float, cluster: Cluster) -> TwoTierAllToAll:
    """A uniform all-to-all over every GPU of the cluster: each GPU sends S/p to each peer; the
    g − 1 node peers over NVLink, the p − g others through the node's NICs (shared by its g GPUs).
    """
    s = check_nonnegative(buffer_bytes, "buffer_bytes", "1e8")
    p, g = cluster.num_gpus, cluster.gpus_per_node
    intra, inter = s * (g - 1) / p, s * (p - g) / p
    intra_s = (
        g - 1
    ) * cluster.intra_link.latency_s + intra / cluster.intra_link.bandwidth_bytes_per_s
    inter_s = (
        (p - g) * cluster.inter_link.latency_s + inter / cluster.inter_bandwidth_per_gpu_bytes_per_s
        if p > g
        else 0.0
    )
    return TwoTierAllToAll(
        intra_bytes_per_gpu=intra, inter_bytes_per_gpu=inter, intra_s=intra_s, inter_s=inter_s
    )
