"""Where the experts sit and what crosses the NICs: EP inside one node vs across nodes, and
DeepSeek-V3's node-limited routing (each token to at most M nodes; one copy crosses InfiniBand per
target node, then NVLink forwards it to the GPUs holding its experts: arXiv:2412.19437 §2.1.2,
§3.2.2).

Without a node limit, a token's K experts drawn uniformly from E touch on average
N (1 − C(E − E/N, K) / C(E, K)) of N nodes (docs/notes/cp_ep.md); the simulation below counts it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_divides, whole_number
from core.expert_parallel.router import route, token_batch


@dataclass(frozen=True, kw_only=True)
class NodeTraffic:
    """Per token of a layer: remote copies (one per remote expert) and remote nodes reached."""

    node_limit: int  # 0 = unlimited
    nodes: int
    remote_experts_per_token: float  # copies if every remote expert gets its own
    remote_nodes_per_token: float  # copies with one per target node (DeepSeek-V3, DeepEP)
    nodes_per_token: float  # distinct nodes, the token's own included
    max_nodes_per_token: int


def node_stats(idx: np.ndarray, *, experts: int, nodes: int, token_node: np.ndarray) -> dict:
    """Distinct nodes and remote copies per token from expert choices [T, k]."""
    per = experts // nodes
    node = idx // per  # [T, k] node of each chosen expert
    hit = np.zeros((idx.shape[0], nodes), dtype=bool)
    np.put_along_axis(hit, node, True, axis=1)
    own = hit[np.arange(idx.shape[0]), token_node]
    return dict(
        nodes_per_token=hit.sum(axis=1),
        remote_nodes=hit.sum(axis=1) - own,
        remote_experts=(node != token_node[:, None]).sum(axis=1),
    )


def node_traffic(
    *,
    tokens: int,
    experts: int,
    top_k: int,
    nodes: int,
    node_limit: int = 0,
    skew: float = 0.0,
    seed: int = 0,
) -> NodeTraffic:
    """Route a seeded batch (sigmoid affinities) with or without the node limit; tokens spread
    evenly over the nodes; experts in contiguous blocks, E/N per node."""
    n = whole_number("nodes", nodes)
    check_divides("nodes", n, experts, "experts", "each node holds the same number of experts")
    _, logits = token_batch(tokens, experts, skew=skew, seed=seed)
    idx, _ = route(logits, top_k, router="sigmoid", node_limit=node_limit, groups=n)
    token_node = np.arange(tokens) * n // tokens
    st = node_stats(idx, experts=experts, nodes=n, token_node=token_node)
    return NodeTraffic(
        node_limit=node_limit,
        nodes=n,
        remote_experts_per_token=float(st["remote_experts"].mean()),
        remote_nodes_per_token=float(st["remote_nodes"].mean()),
        nodes_per_token=float(st["nodes_per_token"].mean()),
        max_nodes_per_token=int(st["nodes_per_token"].max()),
    )


def nic_bytes_per_gpu(
    traffic: NodeTraffic, *, tokens_per_gpu: int, hidden: int, bytes_per_element: float
) -> float:
    """Dispatch bytes one GPU sends over its NIC per MoE layer, one copy per remote node."""
    return traffic.remote_nodes_per_token * tokens_per_gpu * hidden * bytes_per_element
