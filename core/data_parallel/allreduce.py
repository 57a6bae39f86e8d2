"""Which all-reduce a data-parallel job runs and what it costs: NCCL's tuned pick (default), or
one of the textbook alpha-beta models (a flat ring, or the two-level hierarchical one) at line
rate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from core.collectives import (
    bus_bandwidths_bytes_per_s,
    flat_ring_all_reduce_time_s,
    flat_ring_bottleneck_bytes_per_s,
    hierarchical_all_reduce_time_s,
    nccl_choice,
)
from core.hardware import Cluster
from core.training import Efficiency


class AllReduceKind(str, Enum):
    """How the gradient all-reduce is priced."""

    # NCCL's tuner: ring or double binary tree × LL / LL128 / Simple, the cheapest per message
    # (NVIDIA/nccl src/graph/tuning.cc), at the app's achievable link efficiencies
    NCCL = "NCCL"
    FLAT_RING = "flat ring"  # textbook: one ring over all GPUs, NCCL's ring/Simple hop latencies
    HIERARCHICAL = "hierarchical"  # textbook: intra RS -> inter AR of 1/g shard -> intra AG


@dataclass(frozen=True, kw_only=True)
class Pick:
    """One all-reduce: its time, the latency part of it, and which algorithm/protocol ran."""

    time_s: float
    latency_s: float
    label: str


def achievable(cluster: Cluster, efficiency: Efficiency) -> Cluster:
    """The cluster with each link at its achievable share (NVLink and NICs as Efficiency says)."""
    intra, inter = cluster.intra_link, cluster.inter_link
    return replace(
        cluster,
        intra_link=replace(
            intra, bandwidth_bytes_per_s=intra.bandwidth_bytes_per_s * efficiency.intra_link
        ),
        inter_link=replace(
            inter, bandwidth_bytes_per_s=inter.bandwidth_bytes_per_s * efficiency.inter_link
        ),
    )


def all_reduce_pick(
    cluster: Cluster,
    message_bytes: float,
    kind: AllReduceKind,
    *,
    efficiency: Efficiency | None = None,
) -> Pick:
    """One gradient all-reduce over every GPU of the cluster, and what ran.

    efficiency: NCCL's pick always runs at the achievable efficiency (None: the defaults); the
    textbook kinds run at line rate unless one is given (a fitted trace's bus bandwidth already is
    achieved), so a page that passes Efficiency() compares all three on one basis.
    """
    kind = AllReduceKind(kind)
    if cluster.num_gpus == 1:
        return Pick(time_s=0.0, latency_s=0.0, label="none (1 GPU)")
    if kind is AllReduceKind.NCCL:
        o = nccl_choice("all_reduce", message_bytes, cluster, efficiency=efficiency).chosen
        return Pick(time_s=o.time_s, latency_s=o.latency_s, label=o.label)
    fn = (
        hierarchical_all_reduce_time_s
        if kind is AllReduceKind.HIERARCHICAL
        else flat_ring_all_reduce_time_s
    )
    rate = "line rate" if efficiency is None else "achievable"
    cluster = cluster if efficiency is None else achievable(cluster, efficiency)
    t = fn(cluster, message_bytes)
    bare = fn(cluster, message_bytes, intra_latency_s=0.0, inter_latency_s=0.0)
    label = (
        f"Hierarchical (α-β, {rate})"
        if kind is AllReduceKind.HIERARCHICAL
        else f"Flat ring (α-β, {rate})"
    )
    return Pick(time_s=t, latency_s=t - bare, label=label)


def all_reduce_s(
    cluster: Cluster, message_bytes: float, kind: AllReduceKind, *, with_latency: bool = True
) -> float:
    """One gradient all-reduce's time; with_latency=False keeps only its bytes-over-bandwidth
    part."""
    p = all_reduce_pick(cluster, message_bytes, kind)
    return p.time_s if with_latency else p.time_s - p.latency_s


def bottleneck(
    cluster: Cluster, kind: AllReduceKind, efficiency: Efficiency | None = None
) -> tuple[str, float]:
    """Name and per-direction bandwidth of the link that paces the all-reduce's network phase."""
    if cluster.num_gpus == 1:
        return "none (1 GPU, no all-reduce)", float("inf")
    kind = AllReduceKind(kind)
    if kind is not AllReduceKind.NCCL and efficiency is not None:
        cluster = achievable(cluster, efficiency)  # the textbook kinds on the same basis
    intra = cluster.intra_link
    nic = f"{cluster.nics_per_node}× {cluster.inter_link.name}"
    if kind is AllReduceKind.NCCL:
        eff = Efficiency() if efficiency is None else efficiency
        bw = bus_bandwidths_bytes_per_s(cluster, eff)["ring"]
        if cluster.num_nodes == 1:
            return f"{intra.name} (inside the node, at {eff.intra_link:.0%})", bw
        if bw < intra.bandwidth_bytes_per_s * eff.intra_link:
            return f"{nic} per node (node's NICs, at {eff.inter_link:.0%})", bw
        return f"{intra.name} (NICs are faster; at {eff.intra_link:.0%})", bw
    if cluster.num_nodes == 1:
        return f"{intra.name} (inside the node)", intra.bandwidth_bytes_per_s
    if kind is AllReduceKind.HIERARCHICAL:
        return (
            f"{nic} per node, shared by {cluster.gpus_per_node} GPUs",
            cluster.inter_bandwidth_per_gpu_bytes_per_s,
        )
    bw = flat_ring_bottleneck_bytes_per_s(cluster)
    if bw < intra.bandwidth_bytes_per_s:
        return f"{nic} per node (node's NICs)", bw
    return f"{intra.name} (NICs are faster)", bw
