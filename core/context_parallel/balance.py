"""Causal load balance of ring attention at any sequence length, without the data: the query-key
pairs inside the mask that each rank computes at each ring step (proportional to its FLOPs), the
step-by-step Gantt it implies, and the idle share.

Contiguous chunks leave late ranks with full blocks while early ranks skip theirs; zig-zag (2C
chunks, rank r holds r and 2C − 1 − r; Llama 3, arXiv:2407.21783 §3.3.2; `NVIDIA/Megatron-LM
megatron/core/utils.py`) gives every rank the same work at every step (docs/notes/cp_ep.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_choice, whole_number
from core.context_parallel.ring import check_cp


def _intervals(seq_len: int, cp: int, layout: str) -> list[list[tuple[int, int]]]:
    """The token intervals [start, end) each rank holds."""
    s, c = check_cp(seq_len, cp, layout)
    if layout == "contiguous":
        n = s // c
        return [[(r * n, (r + 1) * n)] for r in range(c)]
    m = s // (2 * c)
    return [[(r * m, (r + 1) * m), ((2 * c - 1 - r) * m, (2 * c - r) * m)] for r in range(c)]


def _below(n: int, c: int, w: int) -> int:
    """Σ_{i < n} clip(i − c + 1, 0, w): causal pairs of queries 0..n−1 with keys [c, c + w)."""
    k = min(max(n - c, 0), w)
    return k * (k + 1) // 2 + w * max(n - c - w, 0)


def causal_pairs(q: tuple[int, int], k: tuple[int, int]) -> int:
    """Pairs (i, j), i in the query interval, j in the key interval, with j ≤ i (closed form)."""
    (a, b), (c, d) = q, k
    return _below(b, c, d - c) - _below(a, c, d - c)


@dataclass(frozen=True, kw_only=True)
class BalanceResult:
    """Pairs per ring step and rank; each step lasts as long as its busiest rank."""

    seq_len: int
    cp: int
    layout: str
    causal: bool
    pairs: np.ndarray  # [step, rank]

    @property
    def per_rank(self) -> np.ndarray:
        return self.pairs.sum(axis=0)

    @property
    def step_pairs(self) -> np.ndarray:
        """Each step's length in pairs: the slowest rank of the step."""
        return self.pairs.max(axis=1)

    @property
    def critical_pairs(self) -> int:
        return int(self.step_pairs.sum())

    @property
    def idle_share(self) -> float:
        """Share of rank-time spent waiting for the slowest rank of each step."""
        busy = self.pairs.sum()
        return float(1 - busy / (self.cp * self.critical_pairs)) if busy else 0.0

    @property
    def balanced_pairs(self) -> float:
        """The critical path if every rank had the same share: total / C."""
        return float(self.pairs.sum() / self.cp)


def ring_balance(seq_len: int, cp: int, *, layout: str, causal: bool = True) -> BalanceResult:
    """Pairs each rank computes at each ring step (the K/V of rank (r − t) mod C at step t)."""
    held = _intervals(seq_len, cp, layout)
    c = len(held)
    pairs = np.zeros((c, c), dtype=np.int64)
    for t in range(c):
        for r in range(c):
            src = held[(r - t) % c]
            if causal:
                pairs[t, r] = sum(causal_pairs(qi, ki) for qi in held[r] for ki in src)
            else:
                pairs[t, r] = sum((b - a) * (d - c_) for a, b in held[r] for c_, d in src)
    return BalanceResult(seq_len=seq_len, cp=c, layout=layout, causal=causal, pairs=pairs)


def gantt_blocks(result: BalanceResult, *, pairs_per_s: float = 1.0) -> list[dict]:
    """One box per (step, rank) with work: start, duration and the K/V block it used; steps start
    together (a rank cannot use the next block before the ring delivers it)."""
    out, start = [], 0.0
    c = result.cp
    for t in range(c):
        for r in range(c):
            if result.pairs[t, r]:
                out.append(
                    dict(
                        step=t,
                        rank=r,
                        source=(r - t) % c,
                        start_s=start,
                        duration_s=result.pairs[t, r] / pairs_per_s,
                        pairs=int(result.pairs[t, r]),
                    )
                )
        start += result.step_pairs[t] / pairs_per_s
    return out


def chunk_grid(cp: int, *, layout: str, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """Over the 2C sequence chunks (query chunk × key chunk): the rank that computes each block
    and the ring step at which it does (−1 where the causal mask hides the whole block)."""
    c = whole_number("CP", cp)
    if layout == "zigzag":
        owner = np.array([min(i, 2 * c - 1 - i) for i in range(2 * c)])
    else:
        check_choice("layout", layout, ("contiguous", "zigzag"))
        owner = np.arange(2 * c) // 2
    rank = np.repeat(owner[:, None], 2 * c, axis=1)
    step = (owner[:, None] - owner[None, :]) % c
    if causal:
        hidden = np.triu(np.ones((2 * c, 2 * c), dtype=bool), k=1)
        rank, step = np.where(hidden, -1, rank), np.where(hidden, -1, step)
    return rank, step
