"""Layers per pipeline stage: the even split, and the one with lighter first and last stages that
balances the LM head (Megatron's decoder_first/last_pipeline_num_layers; Llama 3 405B trains 126
layers on 16 stages as 7, 8 x 14, 7: Dubey et al. 2024, Sec. 3.3.2)."""

from __future__ import annotations

from functools import lru_cache

from core.model import ModelSpec


def head_layers(model: ModelSpec, seq_len: int) -> float:
    """The LM head's forward FLOPs in layers' worth: 2 V h per token over one layer's forward."""
    layer = model.layer_forward_flops_per_token(seq_len) / model.num_layers
    return 2 * model.vocab_size * model.hidden_size / layer


@lru_cache(maxsize=4096)
def balanced_split(num_layers: int, pp: int, head: float) -> tuple[int, ...]:
    """First a, middle k each, last c layers (a + (PP − 2) k + c = L, every stage ≥ 1) minimising
    the heaviest stage, max(a, k, c + head) in layers; ties go to the smaller spread, then to
    the lighter first stage (it holds the most activations under 1F1B)."""
    L, p = num_layers, pp
    if p == 1:
        return (L,)
    best = None
    for k in range(1, L) if p > 2 else (0,):
        rest = L - (p - 2) * k
        for a in range(1, rest):
            c = rest - a
            ks = (k,) if p > 2 else ()
            top = max(a, *ks, c + head)
            spread = max(a, *ks, c) - min(a, *ks, c)
            key = (round(top, 9), spread, a)
            if best is None or key < best[0]:
                best = (key, (a, *(k,) * (p - 2), c))
        if rest < 2:
            break
    if best is None:
        raise ValueError(f"PP={p} exceeds the {L} layers: every stage needs a layer; use PP ≤ {L}")
    return best[1]


def split_options(model: ModelSpec, pp: int, seq_len: int) -> tuple[tuple[int, ...] | None, ...]:
    """The splits the search tries: even (None) when PP divides L, and the balanced one when it
    differs."""
    L = model.num_layers
    out: list[tuple[int, ...] | None] = [None] if L % pp == 0 else []
    split = balanced_split(L, pp, round(head_layers(model, seq_len), 3))
    if len(set(split)) > 1:
        out.append(split)
    return tuple(out)
