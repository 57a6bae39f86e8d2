"""Which clusters a cost is drawn on: whole nodes of one node type; the ranks NCCL's tuner
prices."""

from __future__ import annotations

import dataclasses

from core.hardware import SCALE_OUT_LINKS, Cluster, link, make_cluster


def cluster_of(cluster: Cluster, num_ranks: int) -> Cluster | None:
    """num_ranks GPUs as whole nodes of `cluster`'s type (same GPUs, links, NICs); None when
    num_ranks is not a multiple of its GPUs per node (a partial node has no two-level shape).
    """
    if num_ranks % cluster.gpus_per_node:
        return None
    return dataclasses.replace(cluster, num_nodes=num_ranks // cluster.gpus_per_node)


def nccl_cluster(
    num_ranks: int, link_name: str, cluster: Cluster | None = None, *, gpu_name: str = "H100 SXM"
) -> Cluster:
    """The ranks the collectives page prices with NCCL's tuner: its two-tier cluster if one is set,
    else N ranks on one link type — one node of N GPUs on a scale-up link (NVLink, PCIe), or N
    nodes of one GPU each on a network link (every hop a NET hop)."""
    if cluster is not None:  # N as whole nodes of its type, else the cluster as drawn
        return cluster_of(cluster, num_ranks) or cluster
    if link(link_name).name in SCALE_OUT_LINKS:
        return make_cluster(
            num_nodes=num_ranks,
            gpus_per_node=1,
            gpu_name=gpu_name,
            inter_link_name=link_name,
            nics_per_node=1,
        )
    return make_cluster(
        num_nodes=1, gpus_per_node=num_ranks, gpu_name=gpu_name, intra_link_name=link_name
    )
