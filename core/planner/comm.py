"""Collective and point-to-point times of the planner's groups, on the links a placement gives
them, at the achievable link efficiencies: each collective priced as NCCL's tuner would run it
(core.collectives.nccl_choice: ring or double binary tree × LL / LL128 / Simple).
"""

from __future__ import annotations

import functools
from dataclasses import replace

from core.collectives import (
    all_gather_time_s,
    all_reduce_time_s,
    nccl_choice,
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


def group_cluster(span: GroupSpan, cluster: Cluster) -> Cluster:
    """One group's GPUs as a Cluster: nodes_per_group nodes of g = ranks_per_node members each.

    Every GPU of a real node runs its own group's inter-node traffic at once, so a group keeps
    g / gpus_per_node of the node's NIC bandwidth (g NICs at the per-GPU share). Links at line rate:
    NCCL's model applies the achievable efficiency.
    """
    return _sub_cluster(span.size, span.ranks_per_node, cluster)


@functools.lru_cache(maxsize=1024)
def _sub_cluster(size: int, g: int, cluster: Cluster) -> Cluster:
    if size == g:  # one node: the group's GPUs on NVLink
        return replace(
            cluster, num_nodes=1, gpus_per_node=g, nics_per_node=min(cluster.nics_per_node, g)
        )
    return replace(
        cluster,
        num_nodes=size // g,
        gpus_per_node=g,
        nics_per_node=g,
        inter_link=replace(
            cluster.inter_link, bandwidth_bytes_per_s=cluster.inter_bandwidth_per_gpu_bytes_per_s
        ),
    )


@functools.lru_cache(maxsize=8192)
def _nccl_time_s(kind, message_bytes, size, g, cluster, eff) -> float:
    # memoised: a layout search asks for the same group shape and message many times
    return nccl_choice(kind, message_bytes, _sub_cluster(size, g, cluster), efficiency=eff).time_s


def group_collective_s(
    kind: str, span: GroupSpan, message_bytes: float, cluster: Cluster, eff: Efficiency
) -> float:
    """Time of one all_reduce / reduce_scatter / all_gather over each group of a kind.

    Even groups (the same members on each node): NCCL's pick on the group's cluster, inside a node
    on NVLink, across nodes ring or tree over both tiers (docs/notes/collectives.md §6). Uneven
    groups: an alpha-beta ring on the network tier.
    """
    if span.size == 1 or message_bytes <= 0:
        return 0.0
    if span.nodes_per_group == 1 or (span.even and span.size % span.ranks_per_node == 0):
        g = span.size if span.nodes_per_group == 1 else span.ranks_per_node
        return _nccl_time_s(kind, float(message_bytes), span.size, g, cluster, eff)
    _, inter = _tiers(cluster, eff)
    one = {
        "all_reduce": lambda p, n, tier: all_reduce_time_s("ring", p, n, *tier),
        "reduce_scatter": lambda p, n, tier: reduce_scatter_time_s(p, n, *tier),
        "all_gather": lambda p, n, tier: all_gather_time_s(p, n, *tier),
    }[kind]
    return one(span.size, message_bytes, inter)


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
