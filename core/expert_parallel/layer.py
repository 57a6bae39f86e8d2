"""One MoE layer on real numpy data, split over EP ranks: route, dispatch the token rows with an
all-to-all to the ranks owning their experts, run each expert, combine the outputs back to the
tokens' own ranks, and compare with the same layer computed on one device.

Layout as Megatron's all-to-all dispatcher (`NVIDIA/Megatron-LM
megatron/core/transformer/moe/token_dispatcher.py`): rank j holds tokens [j·T/R, (j+1)·T/R) and
the contiguous experts [j·E/R, (j+1)·E/R); one row per kept (token, expert) pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_divides, positive, whole_number
from core.collectives import AllToAllResult, all_to_all
from core.expert_parallel.router import capacity, keep_within_capacity, route, token_batch


@dataclass(frozen=True, kw_only=True)
class MoeLayerResult:
    tokens: int
    experts: int
    top_k: int
    ep: int
    capacity: int | None  # rows per expert; None = dropless
    idx: np.ndarray  # [T, k] chosen experts
    weights: np.ndarray  # [T, k] combine weights
    kept: np.ndarray  # [T, k] pair kept within capacity
    dispatch: AllToAllResult  # token rows, origin → expert owner
    combine: AllToAllResult  # expert outputs, owner → origin
    output: np.ndarray  # [T, h] after combine
    reference: np.ndarray  # the same layer on one device (same drops)
    rows_bytes: int  # bytes of one token row

    @property
    def max_abs_error(self) -> float:
        return float(np.max(np.abs(self.output - self.reference))) if self.output.size else 0.0

    @property
    def routed(self) -> np.ndarray:
        """Pairs routed to each expert, before capacity."""
        return np.bincount(self.idx.ravel(), minlength=self.experts)

    @property
    def processed(self) -> np.ndarray:
        """Pairs each expert computes (within capacity)."""
        return np.bincount(self.idx[self.kept], minlength=self.experts)

    @property
    def dropped(self) -> int:
        return int((~self.kept).sum())

    @property
    def rank_rows(self) -> np.ndarray:
        """Rows each EP rank computes: the sum over the experts it owns."""
        return self.processed.reshape(self.ep, -1).sum(axis=1)

    @property
    def slowdown(self) -> float:
        """Busiest rank's rows over the mean: the step waits for the slowest rank."""
        mean = self.rank_rows.mean()
        return float(self.rank_rows.max() / mean) if mean else 1.0

    @property
    def traffic_rows(self) -> np.ndarray:
        """[origin, owner] rows dispatched (the diagonal: rows that stay on their rank)."""
        return _pair_matrix(self.idx, self.kept, self.tokens, self.experts, self.ep)


def _pair_matrix(idx, kept, tokens, experts, ep) -> np.ndarray:
    origin = np.repeat(np.arange(tokens) // (tokens // ep), idx.shape[1])[kept.ravel()]
    owner = (idx.ravel() // (experts // ep))[kept.ravel()]
    return np.bincount(origin * ep + owner, minlength=ep * ep).reshape(ep, ep)


def _experts(experts: int, hidden: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed + 2)
    w1 = rng.standard_normal((experts, hidden, 2 * hidden)) / np.sqrt(hidden)
    w2 = rng.standard_normal((experts, 2 * hidden, hidden)) / np.sqrt(2 * hidden)
    return w1, w2


def _ffn(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    a = x @ w1
    return (a / (1 + np.exp(-a))) @ w2  # SiLU MLP


def check_ep(experts: int, ep: int, tokens: int | None = None) -> None:
    """EP must divide the experts (each rank owns whole experts) and the tokens."""
    check_divides(
        "EP",
        whole_number("EP", ep),
        experts,
        "experts",
        "each EP rank owns the same whole number of experts",
    )
    if tokens is not None:
        check_divides("EP", ep, tokens, "tokens", "each EP rank starts with the same tokens")


def moe_layer(
    *,
    tokens: int,
    experts: int,
    top_k: int,
    ep: int,
    capacity_factor: float | None = None,
    skew: float = 1.0,
    router: str = "softmax",
    hidden: int = 8,
    seed: int = 0,
) -> MoeLayerResult:
    """Simulate one MoE layer across `ep` ranks (dropless when capacity_factor is None)."""
    check_ep(experts, ep, tokens)
    x, logits = token_batch(tokens, experts, hidden=hidden, skew=skew, seed=seed)
    idx, w = route(logits, top_k, router=router)
    cap = None
    if capacity_factor is not None:
        cap = capacity(
            tokens,
            experts,
            top_k,
            positive("capacity factor", capacity_factor, fix="use e.g. 1.25"),
        )
    kept = keep_within_capacity(idx, experts, cap)
    tok, slot = np.nonzero(kept)  # one row per kept pair, in token order
    exp = idx[tok, slot]
    per_tok, per_exp = tokens // ep, experts // ep
    origin, owner = tok // per_tok, exp // per_exp
    # dispatch: rows grouped by (origin, owner); the token and expert ids travel with them
    order = np.lexsort((exp, owner, origin))
    tok, exp, origin, owner, slot = tok[order], exp[order], origin[order], owner[order], slot[order]
    cuts = np.searchsorted(origin * ep + owner, np.arange(ep * ep + 1))
    blocks = [[slice(cuts[s * ep + d], cuts[s * ep + d + 1]) for d in range(ep)] for s in range(ep)]
    sent = all_to_all([[x[tok[b]] for b in row] for row in blocks])
    ids = all_to_all([[np.stack([tok[b], exp[b]]) for b in row] for row in blocks])
    w1, w2 = _experts(experts, hidden, seed)
    back = []
    for d in range(ep):  # each owner runs its experts on every row it received, expert by expert
        rows = np.concatenate(sent.received[d])
        e_ids = np.concatenate([i[1] for i in ids.received[d]])
        y = np.empty_like(rows)
        order = np.argsort(e_ids, kind="stable")
        bounds = np.searchsorted(e_ids[order], np.arange(d * per_exp, (d + 1) * per_exp + 1))
        for j in range(per_exp):
            sel = order[bounds[j] : bounds[j + 1]]
            y[sel] = _ffn(rows[sel], w1[d * per_exp + j], w2[d * per_exp + j])
        sizes = np.cumsum([len(b) for b in sent.received[d]])[:-1]
        back.append(np.split(y, sizes))
    combined = all_to_all(back)  # owner → origin, the reverse exchange
    t_all, g_all, y_all = [], [], []
    for s in range(ep):  # each origin weights what came back by the gate of that expert
        for d in range(ep):
            t_ids, e_ids = ids.received[d][s]
            t_all.append(t_ids)
            g_all.append(w[t_ids, np.argmax(idx[t_ids] == e_ids[:, None], axis=1)])
            y_all.append(combined.received[s][d])
    t_cat, contrib = np.concatenate(t_all), np.concatenate(g_all)[:, None] * np.concatenate(y_all)
    out = np.stack(
        [np.bincount(t_cat, weights=contrib[:, j], minlength=tokens) for j in range(hidden)], 1
    )
    ref = np.zeros_like(x)
    for e in range(experts):  # one device, no exchange: every kept pair of expert e at once
        t_ids, k_ids = np.nonzero(kept & (idx == e))  # a token picks e at most once
        ref[t_ids] += w[t_ids, k_ids][:, None] * _ffn(x[t_ids], w1[e], w2[e])
    return MoeLayerResult(
        tokens=tokens,
        experts=experts,
        top_k=top_k,
        ep=ep,
        capacity=cap,
        idx=idx,
        weights=w,
        kept=kept,
        dispatch=sent,
        combine=combined,
        output=out,
        reference=ref,
        rows_bytes=x[0].nbytes,
    )
