"""Collective and point-to-point times of the planner's groups, on the links a placement gives
them, at the achievable link efficiencies.
"""

from __future__ import annotations

from dataclasses import replace

from core.collectives import (
    all_gather_time_s,
    all_reduce_time_s,
    hierarchical_all_reduce_time_s,
    reduce_scatter_time_s,
)
from core.hardware import Cluster
from core.parallel import GroupSpan
from core.training import Efficiency, Recipe


def _tiers(cluster: Cluster, eff: Efficiency) -> tuple[tuple[float, float], tuple[float, float]]:
    """(bandwidth, latency) inside a node and per GPU off-node, scaled by achievable efficiency."""
    return (
        (cluster.intra_link.bandwidth_bytes_per_s * eff.intra_link, cluster.intra_link.latency_s),
        (
            cluster.inter_bandwidth_per_gpu_bytes_per_s * eff.inter_link,
            cluster.inter_link.latency_s,
        ),
    )


def _group_cluster(span: GroupSpan, cluster: Cluster, eff: Efficiency) -> Cluster:
    """One group's GPUs (g per node) as a Cluster, for core.collectives' hierarchical all-reduce."""
    # Every GPU of a real node runs its own group's inter-node phase at once, so each keeps its
    # 1/gpus_per_node share of the node's NICs.
    (b_in, _), (b_net, _) = _tiers(cluster, eff)
    g = span.ranks_per_node
    return replace(
        cluster,
        num_nodes=span.size // g,
        gpus_per_node=g,
        nics_per_node=g,
        intra_link=replace(cluster.intra_link, bandwidth_bytes_per_s=b_in),
        inter_link=replace(cluster.inter_link, bandwidth_bytes_per_s=b_net),
    )


def group_collective_s(
    kind: str, span: GroupSpan, message_bytes: float, cluster: Cluster, eff: Efficiency
) -> float:
    """Time of one all_reduce / reduce_scatter / all_gather over each group of a kind."""
    # Inside a node: ring on NVLink. One member per node (or uneven): ring on the NICs. Several per
    # node: two-level (intra-node reduce-scatter, inter-node phase on a 1/g shard, intra all-gather;
    # docs/notes/collectives.md §3); for reduce-scatter / all-gather the matching two halves of it.
    if span.size == 1 or message_bytes <= 0:
        return 0.0
    intra, inter = _tiers(cluster, eff)
    one = {
        "all_reduce": lambda p, n, tier: all_reduce_time_s("ring", p, n, *tier),
        "reduce_scatter": lambda p, n, tier: reduce_scatter_time_s(p, n, *tier),
        "all_gather": lambda p, n, tier: all_gather_time_s(p, n, *tier),
    }[kind]
    if span.nodes_per_group == 1:
        return one(span.size, message_bytes, intra)
    g = span.ranks_per_node
    if g == 1 or not span.even:
        return one(span.size, message_bytes, inter)
    if kind == "all_reduce":
        return hierarchical_all_reduce_time_s(_group_cluster(span, cluster, eff), message_bytes)
    return one(g, message_bytes, intra) + one(span.size // g, message_bytes / g, inter)


def p2p_s(span: GroupSpan, message_bytes: float, cluster: Cluster, eff: Efficiency) -> float:
    """One send between neighbouring stages: alpha + bytes / bandwidth on the slowest hop."""
    if span.size == 1:
        return 0.0
    bw, lat = _tiers(cluster, eff)[span.nodes_per_group > 1]
    return lat + message_bytes / bw


def dp_sync_s(
    zero_stage: int, span: GroupSpan, params: int, recipe: Recipe, cluster: Cluster, eff: Efficiency
) -> tuple[float, float]:
    """(after the last backward, before the next forward) gradient / parameter sync of one step."""
    if zero_stage == 0:  # DDP all-reduce of the gradients
        return group_collective_s("all_reduce", span, params * recipe.grad_bytes, cluster, eff), 0.0
    if zero_stage in (1, 2):  # reduce-scatter grads, all-gather updated params (ZeRO paper Sec. 7)
        return (
            group_collective_s("reduce_scatter", span, params * recipe.grad_bytes, cluster, eff),
            group_collective_s("all_gather", span, params * recipe.param_bytes, cluster, eff),
        )
    return 0.0, 0.0  # ZeRO-3 syncs layer by layer inside each micro-batch (stage_times)
