"""Megatron tensor parallelism of self-attention, proved with arrays: heads split over ranks (Wq,
Wk, Wv by columns, Wo by rows); sharded forward and backward equal whole multi-head attention.
"""

from __future__ import annotations

import math

import numpy as np

from core.tensor_parallel.proof import (
    TpProof,
    all_reduce_partials,
    check_dims,
    check_tp,
    max_abs_difference,
)


def attention_forward(x, wq, wk, wv, wo, num_heads: int, causal: bool = True):
    """Multi-head self-attention over the heads in wq/wk/wv columns; returns Y = O Wo and a
    cache.
    """
    b, s, _ = x.shape
    d = wq.shape[1] // num_heads

    def heads(m):  # (b, s, k·d) -> (b, k, s, d)
        return m.reshape(b, s, num_heads, d).transpose(0, 2, 1, 3)

    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
    if causal:
        scores = np.where(np.tril(np.ones((s, s), dtype=bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(b, s, num_heads * d)
    return o @ wo, (x, wq, wk, wv, wo, q, k, v, p, o, d)


def attention_backward(dy, cache):
    """Gradients (dX, dWq, dWk, dWv, dWo) of attention_forward given dY, by hand."""
    x, wq, wk, wv, wo, q, k, v, p, o, d = cache
    b, s, _ = x.shape
    nh = q.shape[1]
    dwo = np.einsum("bsi,bsj->ij", o, dy)
    do = (dy @ wo.T).reshape(b, s, nh, d).transpose(0, 2, 1, 3)
    dv = p.transpose(0, 1, 3, 2) @ do
    dp = do @ v.transpose(0, 1, 3, 2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) / math.sqrt(d)  # softmax Jacobian
    dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q

    def flat(m):  # (b, k, s, d) -> (b, s, k·d)
        return m.transpose(0, 2, 1, 3).reshape(b, s, nh * d)

    dq, dk, dv = flat(dq), flat(dk), flat(dv)
    dx = dq @ wq.T + dk @ wk.T + dv @ wv.T
    return (
        dx,
        np.einsum("bsi,bsj->ij", x, dq),
        np.einsum("bsi,bsj->ij", x, dk),
        np.einsum("bsi,bsj->ij", x, dv),
        dwo,
    )


def check_heads(hidden: int, heads: int) -> None:
    """ValueError unless the heads split the hidden size into whole head dimensions."""
    if hidden % heads:
        raise ValueError(
            f"hidden={hidden} is not divisible by heads={heads}: each head needs a "
            "whole head dimension; pick heads dividing hidden"
        )


def prove_tp_attention(
    *,
    tp: int,
    batch: int = 2,
    seq: int = 5,
    hidden: int = 8,
    heads: int = 4,
    causal: bool = True,
    seed: int = 0,
) -> TpProof:
    """Heads split over ranks: Wq/Wk/Wv by columns, Wo by rows, vs whole multi-head attention."""
    batch, seq, hidden, heads = check_dims(batch=batch, seq=seq, hidden=hidden, heads=heads)
    check_heads(hidden, heads)
    tp = check_tp(tp, heads=heads)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, seq, hidden))
    wq, wk, wv, wo = (rng.standard_normal((hidden, hidden)) / math.sqrt(hidden) for _ in range(4))
    dy = rng.standard_normal((batch, seq, hidden))
    y_ref, cache = attention_forward(x, wq, wk, wv, wo, heads, causal)
    ref = attention_backward(dy, cache)
    cols = np.split(
        np.arange(hidden), tp
    )  # contiguous heads: rank i owns heads i·a/t .. (i+1)·a/t−1
    outs = [
        attention_forward(x, wq[:, c], wk[:, c], wv[:, c], wo[c, :], heads // tp, causal)
        for c in cols
    ]
    y = all_reduce_partials([o[0] for o in outs])
    grads = [attention_backward(dy, o[1]) for o in outs]
    dx = all_reduce_partials([g[0] for g in grads])
    diffs = {"Y": max_abs_difference(y, y_ref[None]), "dX": max_abs_difference(dx, ref[0][None])}
    for i, name in enumerate(("dWq", "dWk", "dWv"), start=1):
        diffs[name] = max_abs_difference(np.concatenate([g[i] for g in grads], axis=1), ref[i])
    diffs["dWo"] = max_abs_difference(np.concatenate([g[4] for g in grads], axis=0), ref[4])
    return TpProof(layer="attention", tp=tp, max_abs_diff=diffs)


def attention_ownership(*, tp: int, hidden: int = 8, heads: int = 4) -> dict[str, np.ndarray]:
    """Which TP rank holds each element of Wq|Wk|Wv (columns by head) and Wo (rows by head)."""
    tp = check_tp(tp, heads=heads)
    check_heads(hidden, heads)
    owner = np.repeat(np.arange(tp), hidden // tp)
    return {
        "Wq, Wk, Wv (split by heads = columns)": np.broadcast_to(owner, (hidden, hidden)).copy(),
        "Wo (split by heads = rows)": np.broadcast_to(owner[:, None], (hidden, hidden)).copy(),
    }
