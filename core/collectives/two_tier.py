"""Alpha-beta-gamma all-reduce times on a two-tier Cluster (NVLink inside nodes, NICs between):
the two-level (hierarchical) all-reduce and one flat ring paced by its slowest link.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.collectives.busbw import check_nonnegative, check_positive
from core.collectives.cost import all_reduce_time_s
from core.hardware import Cluster


@dataclass(frozen=True, kw_only=True)
class HierarchicalCost:
    """The three phases of the two-level all-reduce (horovod PR #411), seconds."""

    intra_reduce_scatter_s: float
    inter_all_reduce_s: float
    intra_all_gather_s: float

    @property
    def time_s(self) -> float:
        return self.intra_reduce_scatter_s + self.inter_all_reduce_s + self.intra_all_gather_s

    @property
    def pipelined_time_s(self) -> float:
        return max(self.intra_reduce_scatter_s + self.intra_all_gather_s, self.inter_all_reduce_s)


def _tiers(cluster: Cluster, intra_latency_s, inter_latency_s):
    a_in = cluster.intra_link.latency_s if intra_latency_s is None else intra_latency_s
    a_net = cluster.inter_link.latency_s if inter_latency_s is None else inter_latency_s
    return (
        check_nonnegative(a_in, "intra_latency_s", "3.4e-6"),
        check_nonnegative(a_net, "inter_latency_s", "14e-6"),
    )


def hierarchical_all_reduce_cost(
    cluster: Cluster,
    message_bytes: float,
    *,
    intra_latency_s: float | None = None,
    inter_latency_s: float | None = None,
    gamma_s_per_byte: float = 0.0,
) -> HierarchicalCost:
    """Intra-node ring RS, inter-node ring AR of each GPU's n/g shard, intra-node ring AG.

    All g GPUs of a node run their inter-node rings at once, so each gets nics·B_nic/g of the
    network. Latencies default to the cluster's link presets.
    """
    g, m = cluster.gpus_per_node, cluster.num_nodes
    n = check_positive(message_bytes, "message_bytes", "1e9 (1 GB)")
    gamma = check_nonnegative(gamma_s_per_byte, "gamma_s_per_byte", "1e-12")
    a_in, a_net = _tiers(cluster, intra_latency_s, inter_latency_s)
    b_in, b_net = (
        cluster.intra_link.bandwidth_bytes_per_s,
        cluster.inter_bandwidth_per_gpu_bytes_per_s,
    )
    rs = (g - 1) * a_in + (g - 1) / g * n / b_in + (g - 1) / g * n * gamma
    ar = 2 * (m - 1) * a_net + 2 * (m - 1) / m * (n / g) / b_net + (m - 1) / m * (n / g) * gamma
    ag = (g - 1) * a_in + (g - 1) / g * n / b_in
    return HierarchicalCost(intra_reduce_scatter_s=rs, inter_all_reduce_s=ar, intra_all_gather_s=ag)


def hierarchical_all_reduce_time_s(
    cluster: Cluster,
    message_bytes: float,
    *,
    intra_latency_s: float | None = None,
    inter_latency_s: float | None = None,
    gamma_s_per_byte: float = 0.0,
    pipelined: bool = False,
) -> float:
    """Two-level all-reduce time on a Cluster (sequential phases, or overlapped if pipelined)."""
    c = hierarchical_all_reduce_cost(
        cluster,
        message_bytes,
        intra_latency_s=intra_latency_s,
        inter_latency_s=inter_latency_s,
        gamma_s_per_byte=gamma_s_per_byte,
    )
    return c.pipelined_time_s if pipelined else c.time_s


def flat_ring_bottleneck_bytes_per_s(cluster: Cluster) -> float:
    """Per-rank ring bandwidth across nodes: min(intra link, NICs per node x NIC bandwidth).

    NCCL runs one ring channel per NIC, each carrying 1/nics of the data, so a step's node-crossing
    traffic is spread over all NICs, so busbw ≈ min(NVLink, NICs/node x per-NIC) (DGX A100
    8x HDR measured 192 GB/s busbw, NVIDIA/nccl issue #812).
    """
    if cluster.num_nodes == 1:
        return cluster.intra_link.bandwidth_bytes_per_s
    return min(cluster.intra_link.bandwidth_bytes_per_s, cluster.node_injection_bytes_per_s)


def flat_ring_all_reduce_time_s(
    cluster: Cluster,
    message_bytes: float,
    *,
    intra_latency_s: float | None = None,
    inter_latency_s: float | None = None,
    gamma_s_per_byte: float = 0.0,
) -> float:
    """One flat ring over all GPUs, paced by its slowest link.

    Latency follows NCCL's ring tuner (NVIDIA/nccl src/graph/tuning.cc): NCCL pipelines chunks round
    the ring, so of the 2(p-1) steps only 2(m-1) pay the network latency and the rest the intra-node
    one — not every step the slowest link's alpha.
    """
    p, m = cluster.num_gpus, cluster.num_nodes
    a_in, a_net = _tiers(cluster, intra_latency_s, inter_latency_s)
    steps = 2 * (p - 1)
    alpha = 0.0 if steps == 0 else ((steps - 2 * (m - 1)) * a_in + 2 * (m - 1) * a_net) / steps
    return all_reduce_time_s(
        "ring",
        p,
        message_bytes,
        flat_ring_bottleneck_bytes_per_s(cluster),
        alpha,
        gamma_s_per_byte=gamma_s_per_byte,
    )
