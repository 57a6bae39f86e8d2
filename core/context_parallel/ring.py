"""Ring attention on real numpy data: Q, K, V cut by sequence over C ranks, K/V blocks travel
round the ring, each rank folds every block into an online softmax; the result is compared with
full attention.

Loop and updates: Liu, Zaharia, Abbeel 2023 (arXiv:2310.01889) §3 and Algorithm 1; the
max / denominator / numerator recurrence of `haoliuhl/ringattention
ringattention/ringattention_jax.py`. At step t rank r holds the K/V block of rank (r − t) mod C
(`NVIDIA/TransformerEngine
transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py`). Zig-zag: 2C
chunks, rank r keeps chunks r and 2C − 1 − r (`NVIDIA/Megatron-LM megatron/core/utils.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_choice, whole_number

LAYOUTS = {
    "contiguous": "contiguous chunks: rank r holds tokens [r·S/C, (r+1)·S/C)",
    "zigzag": "zig-zag: 2C chunks, rank r holds chunks r and 2C − 1 − r",
}


def check_cp(seq_len: int, cp: int, layout: str) -> tuple[int, int]:
    """(S, C) when C ranks can split S tokens in this layout, else a ValueError with the fix."""
    s, c = whole_number("seq_len", seq_len), whole_number("CP", cp)
    check_choice("layout", layout, LAYOUTS)
    parts = 2 * c if layout == "zigzag" else c
    if s % parts:
        what = f"2·CP = {parts} chunks" if layout == "zigzag" else f"CP = {c} chunks"
        ok = [k for k in range(1, s + 1) if s % (2 * k if layout == "zigzag" else k) == 0]
        raise ValueError(
            f"sequence length {s} does not split into {what}: context parallelism gives every "
            f"rank an equal share of the tokens; use CP in {{{', '.join(map(str, ok[:12]))}}} "
            f"or a sequence length divisible by {parts}"
        )
    return s, c


def token_owner_positions(seq_len: int, cp: int, layout: str) -> list[np.ndarray]:
    """The token positions each rank holds (its Q and its own K/V), in order."""
    s, c = check_cp(seq_len, cp, layout)
    if layout == "contiguous":
        n = s // c
        return [np.arange(r * n, (r + 1) * n) for r in range(c)]
    m = s // (2 * c)
    chunk = [np.arange(i * m, (i + 1) * m) for i in range(2 * c)]
    return [np.concatenate([chunk[r], chunk[2 * c - 1 - r]]) for r in range(c)]


def full_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, causal: bool) -> np.ndarray:
    """softmax(Q Kᵀ/√d + mask) V over the whole sequence, the reference (shapes [S, d])."""
    z = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        z = np.where(np.tril(np.ones(z.shape, dtype=bool)), z, -np.inf)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


@dataclass(frozen=True, kw_only=True)
class RingAttentionResult:
    """The ring's output beside full attention's, and who did how much work at each step."""

    cp: int
    layout: str
    causal: bool
    output: np.ndarray  # [S, d] in the original token order
    reference: np.ndarray  # full attention on the same Q, K, V
    pairs: np.ndarray  # [step, rank]: query-key pairs inside the mask computed at that step
    source: np.ndarray  # [step, rank]: whose K/V block the rank holds at that step
    hops_per_rank: int  # K/V blocks each rank sends (C − 1: the last block is not passed on)

    @property
    def max_abs_error(self) -> float:
        return float(np.max(np.abs(self.output - self.reference)))


def ring_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, *, cp: int, causal: bool, layout: str
) -> RingAttentionResult:
    """Blockwise attention with K/V rotating round C ranks and an online softmax per query row."""
    s = q.shape[0]
    owned = token_owner_positions(s, cp, layout)
    c = len(owned)
    out = np.zeros_like(q, dtype=float)
    pairs, source = np.zeros((c, c), dtype=np.int64), np.zeros((c, c), dtype=np.int64)
    for r, pos_q in enumerate(owned):
        qr = q[pos_q] / np.sqrt(q.shape[1])
        m = np.full(len(pos_q), -np.inf)  # running row max
        den = np.zeros(len(pos_q))  # running Σ exp(z − m)
        num = np.zeros((len(pos_q), v.shape[1]))  # running Σ exp(z − m) v (un-normalised output)
        for t in range(c):
            src = (r - t) % c  # forward ring: the block arrived from rank r − 1, t hops ago
            pos_k = owned[src]
            source[t, r] = src
            z = qr @ k[pos_k].T
            if causal:
                keep = pos_k[None, :] <= pos_q[:, None]
                pairs[t, r] = int(keep.sum())
                if not keep.any():
                    continue  # a fully masked block is skipped: no work, no change
                z = np.where(keep, z, -np.inf)
            else:
                pairs[t, r] = z.size
            m_new = np.maximum(m, z.max(axis=1))
            m_safe = np.where(np.isfinite(m_new), m_new, 0.0)  # rows with nothing seen yet
            p = np.exp(z - m_safe[:, None])
            scale = np.exp(np.where(np.isfinite(m), m - m_safe, -np.inf))
            den = scale * den + p.sum(axis=1)
            num = scale[:, None] * num + p @ v[pos_k]
            m = m_new
        out[pos_q] = num / den[:, None]
    return RingAttentionResult(
        cp=c,
        layout=layout,
        causal=causal,
        output=out,
        reference=full_attention(q, k, v, causal=causal),
        pairs=pairs,
        source=source,
        hops_per_rank=c - 1,
    )


def example_qkv(seq_len: int, head_dim: int = 8, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Seeded Gaussian Q, K, V of shape [S, d] (one attention head)."""
    s, d = whole_number("seq_len", seq_len), whole_number("head_dim", head_dim)
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((s, d)) for _ in range(3))
