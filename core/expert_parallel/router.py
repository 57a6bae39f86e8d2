"""Routers on real numpy scores: softmax top-k (Mixtral, Qwen3-MoE: the chosen weights
renormalised) and sigmoid top-k with a balancing bias that only decides selection (DeepSeek-V3,
arXiv:2412.19437 §2.1.2 Eqs. 12-16), plus node-limited routing (each token to at most M node
groups; a group's score is the sum of its top K/M affinities: `deepseek-ai/DeepSeek-V3
inference/model.py`, class Gate).
"""

from __future__ import annotations

import numpy as np

from core.checks import check_choice, check_divides, whole_number

ROUTERS = {
    "softmax": "softmax over the experts, top-k, weights renormalised (Mixtral, Qwen3-MoE)",
    "sigmoid": "sigmoid affinity per expert, top-k of affinity + bias (DeepSeek-V3)",
}


def token_batch(
    tokens: int,
    experts: int,
    *,
    hidden: int = 8,
    skew: float = 1.0,
    seed: int = 0,
    token_seed: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded tokens X [T, h] and router logits [T, E] = X W + skew · popularity: with skew > 0
    some experts are hot for every token, the imbalance an untrained router shows."""
    t, e, h = (
        whole_number(n, v)
        for n, v in (("tokens", tokens), ("experts", experts), ("hidden", hidden))
    )
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((h, e)) / np.sqrt(h)
    popularity = rng.standard_normal(e)
    x = np.random.default_rng(seed + 1 if token_seed is None else token_seed)
    x = x.standard_normal((t, h))
    return x, x @ w + skew * popularity


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices [T, k] of each row's k largest scores, largest first (ties: lower index first)."""
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def route(
    logits: np.ndarray,
    k: int,
    *,
    router: str = "softmax",
    bias: np.ndarray | None = None,
    node_limit: int = 0,
    groups: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """(expert indices [T, k], combine weights [T, k]); node_limit M > 0 keeps each token's
    experts inside its best M of `groups` contiguous expert groups (the nodes)."""
    check_choice("router", router, ROUTERS)
    e = logits.shape[1]
    k = whole_number("top_k", k)
    if k > e:
        raise ValueError(
            f"top_k={k} exceeds the {e} experts: a token picks distinct experts; use top_k ≤ {e}"
        )
    if router == "softmax":
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        score = z / z.sum(axis=1, keepdims=True)
    else:
        score = 1 / (1 + np.exp(-logits))
    pick = score + (0 if bias is None else bias)
    if node_limit:
        pick = _node_limited(pick, k, node_limit, groups)
    idx = top_k(pick, k)
    w = np.take_along_axis(score, idx, axis=1)
    return idx, w / w.sum(axis=1, keepdims=True)


def _node_limited(pick: np.ndarray, k: int, m: int, groups: int) -> np.ndarray:
    t, e = pick.shape
    check_divides("nodes", groups, e, "experts", "each node holds the same number of experts")
    if not 1 <= m <= groups:
        raise ValueError(f"node limit M={m} must be from 1 to the {groups} nodes; use e.g. 4")
    per = e // groups
    if m * per < k:
        raise ValueError(
            f"node limit M={m} leaves {m * per} experts (M × {per} per node) for top-{k}: "
            f"a token needs k distinct experts; use M ≥ {-(-k // per)}"
        )
    g = pick.reshape(t, groups, per)
    take = max(k // m, 1)  # DeepSeek-V3: top K/M = 2 of each group's affinities
    group_score = -np.sort(-g, axis=2)[:, :, :take].sum(axis=2)
    keep = top_k(group_score, m)
    mask = np.zeros((t, groups), dtype=bool)
    np.put_along_axis(mask, keep, True, axis=1)
    return np.where(np.repeat(mask, per, axis=1), pick, -np.inf)


def capacity(tokens: int, experts: int, k: int, factor: float) -> int:
    """Rows an expert takes: ⌈T·K/E · CF⌉ (Megatron `get_capacity`; Switch Eq. 3 for K = 1)."""
    return int(np.ceil(tokens * k / experts * factor))


def keep_within_capacity(idx: np.ndarray, experts: int, cap: int | None) -> np.ndarray:
    """Mask [T, k] of the (token, expert) pairs kept: each expert takes its first `cap` pairs in
    token order (Megatron's "position" drop policy); None = dropless."""
    if cap is None:
        return np.ones(idx.shape, dtype=bool)
    flat = idx.ravel()
    order = np.argsort(flat, kind="stable")  # pairs grouped by expert, token order inside
    starts = np.searchsorted(flat[order], np.arange(experts))
    rank = np.empty(flat.size, dtype=np.int64)
    rank[order] = np.arange(flat.size) - starts[flat[order]]
    return (rank < cap).reshape(idx.shape)
