"""DeepSpeed-Ulysses on real numpy data: Q, K, V arrive cut by sequence ([S/C tokens, all heads] on
each rank); one all-to-all re-cuts them by heads ([all S tokens, H/C heads]), each rank runs
ordinary attention on its heads, and a second all-to-all returns the output to sequence sharding
(Jacobs et al. 2023, arXiv:2309.14509 §3; docs/notes/cp_ep.md). It needs C to divide the heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.collectives import all_to_all
from core.context_parallel.ring import full_attention
from core.context_parallel.traffic import check_ulysses


@dataclass(frozen=True, kw_only=True)
class UlyssesResult:
    cp: int
    output: np.ndarray  # [S, H, d] back in sequence order
    reference: np.ndarray  # full attention per head on one device
    sent_bytes_per_rank: np.ndarray  # both all-to-alls (Q, K, V in; O out)

    @property
    def max_abs_error(self) -> float:
        return float(np.max(np.abs(self.output - self.reference)))


def ulysses_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, *, cp: int, causal: bool
) -> UlyssesResult:
    """q, k, v: [S, H, d] (MHA). Returns the output gathered back to [S, H, d]."""
    s, h, _ = q.shape
    check_ulysses(cp, h, h)
    if s % cp:
        raise ValueError(
            f"sequence length {s} does not split over CP={cp}: every rank starts with S/C "
            f"tokens; use a length divisible by {cp}"
        )
    n, g = s // cp, h // cp
    seq = [slice(r * n, (r + 1) * n) for r in range(cp)]
    heads = [slice(j * g, (j + 1) * g) for j in range(cp)]
    # rank r holds tokens seq[r] of every head; it sends head group j of them to rank j
    qkv = np.stack([q, k, v])  # [3, S, H, d]
    first = all_to_all([[qkv[:, seq[r], heads[j]] for j in range(cp)] for r in range(cp)])
    outs = []
    for j in range(cp):  # rank j: all S tokens (in rank order) of its g heads
        full = np.concatenate(first.received[j], axis=1)  # [3, S, g, d]
        o = np.stack(
            [full_attention(*full[:, :, i], causal=causal) for i in range(g)], axis=1
        )  # [S, g, d]
        outs.append([o[seq[r]] for r in range(cp)])
    second = all_to_all(outs)  # back: rank r gets its tokens of every head group
    out = np.concatenate([np.concatenate(second.received[r], axis=1) for r in range(cp)])
    ref = np.stack([full_attention(q[:, i], k[:, i], v[:, i], causal=causal) for i in range(h)], 1)
    return UlyssesResult(
        cp=cp,
        output=out,
        reference=ref,
        sent_bytes_per_rank=first.sent_bytes_per_rank + second.sent_bytes_per_rank,
    )
