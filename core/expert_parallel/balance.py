"""Auxiliary-loss-free load balancing (DeepSeek-V3, arXiv:2412.19437 §2.1.2; Wang et al. 2024,
arXiv:2408.15664): a per-expert bias b_i is added to the affinity only to choose the top-k; after
every step b_i falls by γ if expert i was overloaded and rises by γ if underloaded
(`NVIDIA/Megatron-LM megatron/core/transformer/moe/moe_utils.py`, get_updated_expert_bias:
b += γ · sign(mean load − load)). Simulated here on fresh seeded batches from one skewed router.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import positive, whole_number
from core.expert_parallel.router import route, token_batch


@dataclass(frozen=True, kw_only=True)
class BiasRun:
    """Max-over-mean expert load per step, without and with the bias update."""

    gamma: float
    plain: np.ndarray  # [steps] max load / mean load, bias never updated
    balanced: np.ndarray  # [steps] with b += γ·sign(mean − load) after each step
    final_bias: np.ndarray  # [E]
    final_loads: np.ndarray  # [E] pairs per expert at the last balanced step
    first_loads: np.ndarray  # [E] pairs per expert at step 0 (no bias yet)


def bias_balancing(
    *,
    tokens: int,
    experts: int,
    top_k: int,
    steps: int = 60,
    gamma: float = 0.01,
    skew: float = 1.0,
    seed: int = 0,
) -> BiasRun:
    """Route `steps` fresh batches with sigmoid affinities; update the bias after each."""
    steps = whole_number("steps", steps)
    g = positive("gamma", gamma, fix="use e.g. 0.01 (DeepSeek-V3: 0.001 over many more steps)")
    bias = np.zeros(experts)
    plain, balanced = np.empty(steps), np.empty(steps)
    loads = first = np.zeros(experts)
    mean = tokens * top_k / experts
    for step in range(steps):
        # the same router (weights and popularity) every step, a fresh token draw
        logits = token_batch(tokens, experts, skew=skew, seed=seed, token_seed=seed + step + 1)[1]
        for target, b in ((plain, None), (balanced, bias)):
            idx, _ = route(logits, top_k, router="sigmoid", bias=b)
            load = np.bincount(idx.ravel(), minlength=experts)
            target[step] = load.max() / mean
            if b is not None:
                loads = load
                if step == 0:
                    first = load
                bias = bias + g * np.sign(mean - load)
    return BiasRun(
        gamma=g,
        plain=plain,
        balanced=balanced,
        final_bias=bias,
        final_loads=loads,
        first_loads=first,
    )
