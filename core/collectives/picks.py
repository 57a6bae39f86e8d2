"""Which clusters a two-level cost curve is drawn on: whole nodes of one node type."""

from __future__ import annotations

import dataclasses

from core.hardware import Cluster


def cluster_of(cluster: Cluster, num_ranks: int) -> Cluster | None:
    """num_ranks GPUs as whole nodes of `cluster`'s type (same GPUs, links, NICs); None when
    num_ranks is not a multiple of its GPUs per node (a partial node has no two-level shape).
    """
    if num_ranks % cluster.gpus_per_node:
        return None
    return dataclasses.replace(cluster, num_nodes=num_ranks // cluster.gpus_per_node)
