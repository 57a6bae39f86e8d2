"""Megatron tensor parallelism of the MLP, proved with arrays: W1 split by columns, W2 by rows, and
sequence parallelism around them; sharded forward and backward equal the unsharded MLP.
"""

from __future__ import annotations

import math

import numpy as np

from core.collectives import ring_all_gather, ring_reduce_scatter, shard
from core.tensor_parallel.proof import (
    REPLICATED,
    TpProof,
    all_reduce_partials,
    check_dims,
    check_tp,
    max_abs_difference,
)

_C = math.sqrt(2.0 / math.pi)


def gelu(a: np.ndarray) -> np.ndarray:
    """GeLU, tanh form (Hendrycks & Gimpel 2016; GPT-2 / Megatron `bias_gelu`)."""
    return 0.5 * a * (1.0 + np.tanh(_C * (a + 0.044715 * a**3)))


def gelu_grad(a: np.ndarray) -> np.ndarray:
    """d gelu / d a of the tanh form, written out by hand."""
    t = np.tanh(_C * (a + 0.044715 * a**3))
    return 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * _C * (1.0 + 3 * 0.044715 * a * a)


def mlp_forward(x, w1, b1, w2):
    """Y = GeLU(X W1 + b1) W2 (bias b2 is added after the all-reduce); returns Y and a cache."""
    a = x @ w1 + b1
    return gelu(a) @ w2, (x, a, w1, w2)


def mlp_backward(dy, cache):
    """Gradients (dX, dW1, db1, dW2) of mlp_forward given dY."""
    x, a, w1, w2 = cache
    dw2 = gelu(a).T @ dy
    da = (dy @ w2.T) * gelu_grad(a)
    return da @ w1.T, x.T @ da, da.sum(axis=0), dw2


def _mlp_case(tokens: int, hidden: int, ffn: int, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, hidden))
    w1, b1 = rng.standard_normal((hidden, ffn)) / math.sqrt(hidden), 0.1 * rng.standard_normal(ffn)
    w2, b2 = rng.standard_normal((ffn, hidden)) / math.sqrt(ffn), 0.1 * rng.standard_normal(hidden)
    return x, w1, b1, w2, b2, rng.standard_normal((tokens, hidden))


def prove_tp_mlp(
    *, tp: int, tokens: int = 6, hidden: int = 8, ffn: int = 32, seed: int = 0
) -> TpProof:
    """Column-split W1, row-split W2 (Shoeybi et al. 2019, Megatron-LM §3) vs the whole MLP."""
    tp = check_tp(tp, ffn=ffn)
    tokens, hidden, ffn = check_dims(tokens=tokens, hidden=hidden, ffn=ffn)
    x, w1, b1, w2, b2, dy = _mlp_case(
        tokens, hidden, ffn, seed
    )  # dy: upstream grad of L = Σ Y ⊙ dY
    y_ref, cache = mlp_forward(x, w1, b1, w2)
    y_ref = y_ref + b2
    dx_ref, dw1_ref, db1_ref, dw2_ref = mlp_backward(dy, cache)
    cols = np.split(np.arange(ffn), tp)
    outs = [mlp_forward(x, w1[:, c], b1[c], w2[c, :]) for c in cols]
    y = all_reduce_partials([o[0] for o in outs]) + b2  # g: all-reduce forward
    grads = [mlp_backward(dy, o[1]) for o in outs]  # g backward = identity: dY as is
    dx = all_reduce_partials([g[0] for g in grads])  # f backward: all-reduce dX partials
    return TpProof(
        layer="mlp",
        tp=tp,
        max_abs_diff={
            "Y": max_abs_difference(y, y_ref[None]),
            "dX": max_abs_difference(dx, dx_ref[None]),
            "dW1": max_abs_difference(np.concatenate([g[1] for g in grads], axis=1), dw1_ref),
            "db1": max_abs_difference(np.concatenate([g[2] for g in grads]), db1_ref),
            "dW2": max_abs_difference(np.concatenate([g[3] for g in grads], axis=0), dw2_ref),
        },
    )


def _gather_rows(blocks: list[np.ndarray]) -> np.ndarray:
    """All-gather token blocks with the ring simulator; returns every rank's assembled copy."""
    t, (n, h) = len(blocks), blocks[0].shape
    buf = np.zeros((t, t * n * h))
    for r, b in enumerate(blocks):  # rank r supplies chunk r = its own token block
        buf[r, r * n * h : (r + 1) * n * h] = b.ravel()
    return np.asarray(ring_all_gather(buf).outputs).reshape(t, t * n, h)


def _scatter_rows(partials: list[np.ndarray]) -> list[np.ndarray]:
    """Reduce-scatter partial sums by token block: rank r keeps the summed block r."""
    trace = ring_reduce_scatter(np.stack([p.ravel() for p in partials]))
    h = partials[0].shape[1]
    return [shard(trace, r).reshape(-1, h) for r in range(len(partials))]


def prove_sequence_parallel_mlp(
    *, tp: int, tokens: int = 8, hidden: int = 8, ffn: int = 32, seed: int = 0
) -> TpProof:
    """SP (Korthikanti et al. 2022): tokens sharded outside the block; all-gather in, reduce-scatter
    out; backward swaps them. Every rank's token block of Y and dX matches the unsharded MLP."""
    tp = check_tp(tp, ffn=ffn, tokens=tokens)
    tokens, hidden, ffn = check_dims(tokens=tokens, hidden=hidden, ffn=ffn)
    x, w1, b1, w2, b2, dy = _mlp_case(tokens, hidden, ffn, seed)
    y_ref, cache = mlp_forward(x, w1, b1, w2)
    dx_ref, dw1_ref, db1_ref, dw2_ref = mlp_backward(dy, cache)
    rows, cols = np.split(np.arange(tokens), tp), np.split(np.arange(ffn), tp)
    xs = _gather_rows([x[r] for r in rows])  # forward: all-gather X
    outs = [mlp_forward(xs[i], w1[:, c], b1[c], w2[c, :]) for i, c in enumerate(cols)]
    ys = [y + b2 for y in _scatter_rows([o[0] for o in outs])]  # forward: reduce-scatter Y
    dys = _gather_rows([dy[r] for r in rows])  # backward: all-gather dY
    grads = [mlp_backward(dys[i], o[1]) for i, o in enumerate(outs)]
    dxs = _scatter_rows([g[0] for g in grads])  # backward: reduce-scatter dX
    return TpProof(
        layer="mlp + sequence parallel",
        tp=tp,
        forward_collectives=("all-gather", "reduce-scatter"),
        backward_collectives=("all-gather", "reduce-scatter"),
        max_abs_diff={
            "Y": max(max_abs_difference(ys[i], y_ref[r] + b2) for i, r in enumerate(rows)),
            "dX": max(max_abs_difference(dxs[i], dx_ref[r]) for i, r in enumerate(rows)),
            "dW1": max_abs_difference(np.concatenate([g[1] for g in grads], axis=1), dw1_ref),
            "db1": max_abs_difference(np.concatenate([g[2] for g in grads]), db1_ref),
            "dW2": max_abs_difference(np.concatenate([g[3] for g in grads], axis=0), dw2_ref),
        },
    )


def mlp_ownership(
    *, tp: int, tokens: int = 8, hidden: int = 8, ffn: int = 32, sequence_parallel: bool = False
) -> dict[str, np.ndarray]:
    """Which TP rank holds each element of the MLP's weights and activations (REPLICATED = all)."""
    tp = check_tp(tp, ffn=ffn)
    if sequence_parallel:
        check_tp(tp, tokens=tokens)
    col_owner = np.repeat(np.arange(tp), ffn // tp)  # ffn column j lives on rank j // (f/t)
    by_token = np.repeat(np.arange(tp), tokens // tp) if sequence_parallel else None

    def rows_or_all(shape):  # input/output of the block: whole on every rank, or token-sharded (SP)
        if by_token is None:
            return np.full(shape, REPLICATED)
        return np.broadcast_to(by_token[:, None], shape).copy()

    return {
        "X (block input)": rows_or_all((tokens, hidden)),
        "W1 (split by columns)": np.broadcast_to(col_owner, (hidden, ffn)).copy(),
        "GeLU(X W1) (split by columns)": np.broadcast_to(col_owner, (tokens, ffn)).copy(),
        "W2 (split by rows)": np.broadcast_to(col_owner[:, None], (ffn, hidden)).copy(),
        "Y (after all-reduce)" if by_token is None else "Y (after reduce-scatter)": rows_or_all(
            (tokens, hidden)
        ),
    }
