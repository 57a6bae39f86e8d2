"""Matmul time by shape: a roofline per GEMM (FLOPs at the matmul rate vs bytes at the HBM rate)
plus a fixed per-kernel cost, so small GEMMs run far below peak (docs/notes/planner.md §5).
"""

from __future__ import annotations

from functools import lru_cache

from core.model import ModelSpec

# Per-GEMM fixed cost (launch gap, prologue, epilogue, last partial wave): read off XLA's measured
# H100 (sm_90) bf16 table, tensorflow/tensorflow
# third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h: 2048³ runs at 632 TFLOP/s
# (27.2 µs) where 0.8 x 989 TFLOP/s would take 21.7 µs; 1024 x 2048 x 2048 at 524 TFLOP/s (16.4 µs
# vs 10.9 µs); 256 x 2048 x 256 at 41.8 TFLOP/s (6.4 µs vs 0.3 µs compute, 0.7 µs memory): each
# leaves 5.5-6 µs. The same constant is assumed on A100 [assumption, docs/notes/planner.md §5].
GEMM_OVERHEAD_S = 5.5e-6
BF16 = 2  # bytes per operand element


def gemm_time_s(
    m: int, n: int, k: int, flop_s: float, hbm_bytes_per_s: float, batch: int = 1
) -> float:
    """One (batched) bf16 GEMM [m x k] @ [k x n]: max(compute, memory) + the per-kernel cost."""
    flops = 2.0 * batch * m * n * k
    moved = BF16 * batch * (m * k + k * n + m * n)  # read both operands, write the product once
    return max(flops / flop_s, moved / hbm_bytes_per_s) + GEMM_OVERHEAD_S


def layer_gemms(model: ModelSpec, tokens: int, tp: int) -> tuple[tuple[int, int, int], ...]:
    """(m, n, k) of one layer's forward weight GEMMs on one TP rank (Megatron column/row split)."""
    h, t = model.hidden_size, tp
    kv = 2 * model.num_kv_heads * model.d_head
    up = (2 if model.gated_mlp else 1) * model.ffn_hidden_size  # SwiGLU: gate and up fused
    return (
        (tokens, (model.q_width + kv) // t, h),  # QKV, column-parallel
        (tokens, h, model.q_width // t),  # attention output, row-parallel
        (tokens, up // t, h),  # MLP up (and gate), column-parallel
        (tokens, h, model.ffn_hidden_size // t),  # MLP down, row-parallel
    )


@lru_cache(maxsize=4096)
def matmul_forward_s(
    model: ModelSpec, tokens: int, tp: int, seq_len: int, flop_s: float, hbm_bytes_per_s: float
) -> tuple[float, float]:
    """(one layer, the LM head) forward matmul seconds on one GPU of a TP group.

    The layer's weight GEMMs by shape; the attention core (QK^T, AV: 4 s d per token per head,
    FlashAttention-fused) at the matmul rate; the head is [tokens x h] @ [h x V/t]. Backward runs
    each GEMM twice with the same three dimensions permuted (input and weight gradients), so at
    the same time each: backward = 2 x forward.
    """
    layer = sum(
        gemm_time_s(m, n, k, flop_s, hbm_bytes_per_s) for m, n, k in layer_gemms(model, tokens, tp)
    )
    core = model.attention_core_forward_flops_per_token(seq_len) / model.num_layers * tokens / tp
    head = gemm_time_s(
        tokens, -(-model.vocab_size // tp), model.hidden_size, flop_s, hbm_bytes_per_s
    )
    return layer + core / flop_s, head
