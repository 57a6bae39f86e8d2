"""Megatron tensor parallelism, proved with arrays: sharded forward and backward equal unsharded."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.collectives import ring_all_gather, ring_all_reduce, ring_reduce_scatter, shard

REPLICATED = -1  # ownership value for a tensor every TP rank holds whole

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


def check_tp(tp: int, **divisible: int) -> None:
    """Raise ValueError unless tp is a whole number ≥ 1 dividing every named size."""
    if isinstance(tp, bool) or not isinstance(tp, (int, np.integer)) or tp < 1:
        raise ValueError(f"TP={tp!r} must be a whole number ≥ 1; use e.g. 1, 2, 4 or 8")
    for name, size in divisible.items():
        if size % tp:
            divisors = [d for d in range(1, size + 1) if size % d == 0]
            raise ValueError(
                f"TP={tp} does not divide {name}={size}: each GPU must hold a whole "
                f"share of the {name}; use TP in {divisors}"
            )


def _all_reduce(partials: list[np.ndarray]) -> np.ndarray:
    """Sum per-rank partial tensors with the ring simulator; returns every rank's copy (t, ...)."""
    shape = partials[0].shape
    out = np.asarray(ring_all_reduce(np.stack([p.ravel() for p in partials])).outputs)
    return out.reshape((len(partials),) + shape)


@dataclass(frozen=True, kw_only=True)
class TpProof:
    """Max |sharded − unsharded| for the output and every gradient, over all TP ranks' copies."""

    layer: str  # "mlp", "attention" or "mlp + sequence parallel"
    tp: int
    max_abs_diff: dict[str, float]  # "Y", "dX", "dW1", ... -> max |difference|
    forward_collectives: tuple[str, ...] = ("all-reduce",)  # g: sum the partial outputs
    backward_collectives: tuple[str, ...] = ("all-reduce",)  # f: sum the partial input gradients

    @property
    def worst(self) -> float:
        return max(self.max_abs_diff.values())

    @property
    def forward_max_abs_diff(self) -> float:
        """The output Y."""
        return self.max_abs_diff["Y"]

    @property
    def backward_max_abs_diff(self) -> float:
        """Every gradient: dX and the weight (and bias) gradients."""
        return max(v for k, v in self.max_abs_diff.items() if k != "Y")


def _diff(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def _check_dims(**dims: int) -> None:
    for name, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}={v!r} must be a whole number ≥ 1; use e.g. 8")


def _mlp_case(tokens: int, hidden: int, ffn: int, seed: int):
    _check_dims(tokens=tokens, hidden=hidden, ffn=ffn)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, hidden))
    w1, b1 = rng.standard_normal((hidden, ffn)) / math.sqrt(hidden), 0.1 * rng.standard_normal(ffn)
    w2, b2 = rng.standard_normal((ffn, hidden)) / math.sqrt(ffn), 0.1 * rng.standard_normal(hidden)
    return x, w1, b1, w2, b2, rng.standard_normal((tokens, hidden))


def prove_tp_mlp(
    *, tp: int, tokens: int = 6, hidden: int = 8, ffn: int = 32, seed: int = 0
) -> TpProof:
    """Column-split W1, row-split W2 (Shoeybi et al. 2019, Megatron-LM §3) vs the whole MLP."""
    check_tp(tp, ffn=ffn)
    x, w1, b1, w2, b2, dy = _mlp_case(
        tokens, hidden, ffn, seed
    )  # dy: upstream grad of L = Σ Y ⊙ dY
    y_ref, cache = mlp_forward(x, w1, b1, w2)
    y_ref = y_ref + b2
    dx_ref, dw1_ref, db1_ref, dw2_ref = mlp_backward(dy, cache)
    cols = np.split(np.arange(ffn), tp)
    outs = [mlp_forward(x, w1[:, c], b1[c], w2[c, :]) for c in cols]
    y = _all_reduce([o[0] for o in outs]) + b2  # g: all-reduce forward
    grads = [mlp_backward(dy, o[1]) for o in outs]  # g backward = identity: dY as is
    dx = _all_reduce([g[0] for g in grads])  # f backward: all-reduce dX partials
    return TpProof(
        layer="mlp",
        tp=tp,
        max_abs_diff={
            "Y": _diff(y, y_ref[None]),
            "dX": _diff(dx, dx_ref[None]),
            "dW1": _diff(np.concatenate([g[1] for g in grads], axis=1), dw1_ref),
            "db1": _diff(np.concatenate([g[2] for g in grads]), db1_ref),
            "dW2": _diff(np.concatenate([g[3] for g in grads], axis=0), dw2_ref),
        },
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
    _check_dims(batch=batch, seq=seq, hidden=hidden, heads=heads)
    if hidden % heads:
        raise ValueError(
            f"hidden={hidden} is not divisible by heads={heads}: each head needs a "
            "whole head dimension; pick heads dividing hidden"
        )
    check_tp(tp, heads=heads)
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
    y = _all_reduce([o[0] for o in outs])
    grads = [attention_backward(dy, o[1]) for o in outs]
    dx = _all_reduce([g[0] for g in grads])
    diffs = {"Y": _diff(y, y_ref[None]), "dX": _diff(dx, ref[0][None])}
    for i, name in enumerate(("dWq", "dWk", "dWv"), start=1):
        diffs[name] = _diff(np.concatenate([g[i] for g in grads], axis=1), ref[i])
    diffs["dWo"] = _diff(np.concatenate([g[4] for g in grads], axis=0), ref[4])
    return TpProof(layer="attention", tp=tp, max_abs_diff=diffs)


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
    check_tp(tp, ffn=ffn, tokens=tokens)
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
            "Y": max(_diff(ys[i], y_ref[r] + b2) for i, r in enumerate(rows)),
            "dX": max(_diff(dxs[i], dx_ref[r]) for i, r in enumerate(rows)),
            "dW1": _diff(np.concatenate([g[1] for g in grads], axis=1), dw1_ref),
            "db1": _diff(np.concatenate([g[2] for g in grads]), db1_ref),
            "dW2": _diff(np.concatenate([g[3] for g in grads], axis=0), dw2_ref),
        },
    )


def mlp_ownership(
    *, tp: int, tokens: int = 8, hidden: int = 8, ffn: int = 32, sequence_parallel: bool = False
) -> dict[str, np.ndarray]:
    """Which TP rank holds each element of the MLP's weights and activations (REPLICATED = all)."""
    check_tp(tp, ffn=ffn)
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


def attention_ownership(*, tp: int, hidden: int = 8, heads: int = 4) -> dict[str, np.ndarray]:
    """Which TP rank holds each element of Wq|Wk|Wv (columns by head) and Wo (rows by head)."""
    check_tp(tp, heads=heads)
    if hidden % heads:
        raise ValueError(
            f"hidden={hidden} is not divisible by heads={heads}: each head needs a "
            "whole head dimension; pick heads dividing hidden"
        )
    owner = np.repeat(np.arange(tp), hidden // tp)
    return {
        "Wq, Wk, Wv (split by heads = columns)": np.broadcast_to(owner, (hidden, hidden)).copy(),
        "Wo (split by heads = rows)": np.broadcast_to(owner[:, None], (hidden, hidden)).copy(),
    }
