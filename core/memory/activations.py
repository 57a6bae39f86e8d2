"""Stored activations per GPU: Korthikanti et al. 2022's per-layer forms and the pipeline in-flight
factor.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import check_choice, check_divides, whole_number
from core.model import ModelSpec
from core.parallel import Layout
from core.training import RECOMPUTE_MODES, Training

# The schedules of core.schedule_names.SCHEDULES whose activations in flight this module counts
# (layers_in_flight); the simulator runs more. Order: the planner tries them in this order.
SIZED_SCHEDULES = ("1f1b", "gpipe", "interleaved_1f1b")


@dataclass(frozen=True, kw_only=True)
class Block:
    """What a transformer block's stored activations depend on: its widths in elements per token
    (query heads a·d_head, KV heads g·d_head, MLP f), a gated (SwiGLU) MLP, and dropout.
    """

    q_width: int
    kv_width: int
    ffn_width: int
    gated: bool
    dropout: bool

    def coefficients(self, hidden: int) -> tuple[int, int, int]:
        """(bytes per token kept whole on every TP rank, bytes per token split over TP, bytes per
        a·s²·b of attention scores) — docs/notes/memory.md §3 derives each term.
        """
        whole = (8 + 2 * self.dropout) * hidden  # 2 norm inputs, QKV and MLP inputs (+ 2 masks)
        mlp = (6 if self.gated else 4) * self.ffn_width  # SwiGLU: gate|up input + down input
        split = 4 * self.q_width + 4 * self.kv_width + mlp  # Q, K, V, output-projection input
        return whole, split, 2 + 3 * self.dropout  # softmax output (+ dropout mask and output)


def gpt_block(hidden: int) -> Block:
    """Korthikanti et al. 2022's block: MHA, 4h GELU MLP, dropout — 34 sbh + 5 a s² b."""
    return Block(q_width=hidden, kv_width=hidden, ffn_width=4 * hidden, gated=False, dropout=True)


def block_of(model: ModelSpec) -> Block:
    """The block a model's layers use (GQA, SwiGLU and dropout as its config says)."""
    return Block(
        q_width=model.q_width,
        kv_width=model.num_kv_heads * model.d_head,
        ffn_width=model.ffn_hidden_size,
        gated=model.gated_mlp,
        dropout=model.dropout,
    )


def activation_bytes_per_layer(
    seq_len,
    micro_batch,
    hidden,
    heads,
    tp=1,
    sequence_parallel=False,
    recompute="none",
    flash_attention=False,
    block: Block | None = None,
) -> float:
    """Stored activation bytes of one layer and micro-batch on one TP rank: Korthikanti et al.
    2022 Table 2 for the GPT block (the default), the same accounting for any other `block`.
    """
    # 2-byte activations, 1-byte dropout masks; flash attention stores none of the s^2 tensors.
    # Full recompute keeps the 2sbh layer input: the table does not shard it, but under SP it is
    # already split over TP ranks (2sbh/t), as Megatron checkpoints it.
    s, b, h, a, t = (
        whole_number(n, v)
        for n, v in (
            ("seq_len", seq_len),
            ("micro_batch", micro_batch),
            ("hidden", hidden),
            ("heads", heads),
            ("tp", tp),
        )
    )
    check_divides("TP", t, a, "attention heads", "each TP rank must own whole heads")
    check_choice("recompute", recompute, RECOMPUTE_MODES)
    sbh, sb = s * b * h, s * b
    if recompute == "full":
        return float(2 * sbh / t if sequence_parallel else 2 * sbh)
    whole, split, score = (block or gpt_block(h)).coefficients(h)  # GPT: 10h, 24h, 5
    stored = sb * (whole + split) / t if sequence_parallel else sb * whole + sb * split / t
    if recompute == "none" and not flash_attention:
        stored += score * a * s * s * b / t  # softmax output 2 (+ dropout mask 1, its output 2)
    return float(stored)


def layers_in_flight(
    stage: int,
    num_layers: int,
    pp: int,
    num_microbatches: int,
    schedule: str = "1f1b",
    num_chunks: int = 1,
) -> float:
    """Layers' worth of activations stage `stage` holds at its peak (docs/notes/memory.md §2)."""
    r, L, p, m, v = stage, num_layers, pp, num_microbatches, num_chunks
    check_choice("schedule", schedule, SIZED_SCHEDULES)
    if schedule == "gpipe":
        return m * L / p  # every forward runs before the first backward
    if schedule == "1f1b":
        return min(p - r, m) * L / p  # warm-up of p - 1 - r forwards, then one more
    chunks = min(2 * (p - 1 - r) + (v - 1) * p + 1, v * m)  # Megatron warm-up + 1, group size p
    return chunks * L / (p * v)  # rank 0: L (1 + (p - 1)/(p v)) (Korthikanti et al.)


def edge_activation_bytes(
    stage: int,
    pp: int,
    seq_len: int,
    micro_batch: int,
    hidden: int,
    vocab: int,
    tp: int = 1,
    sequence_parallel: bool = False,
    dropout: bool = True,
) -> float:
    """Embedding / logits activation bytes of one micro-batch on a stage's GPU (Korthikanti et
    al. 2022, Sec. 4; docs/notes/memory.md §2).
    """
    s, b, t = seq_len, micro_batch, tp
    sbh = s * b * hidden / (t if sequence_parallel else 1)
    extras = sbh if stage == 0 and dropout else 0.0  # embedding dropout mask, 1 B
    if stage == pp - 1:  # final-norm input 2sbh, LM-head input 2sbh, fp32 logits 4sbV/t
        extras += 4 * sbh + 4 * s * b * vocab / t
    return extras


def stage_activations(
    model, stage: int, layout: Layout, training: Training, num_microbatches: int
) -> tuple[float, float, float]:
    """(bytes per layer and micro-batch, layers in flight, embedding/logits bytes) of one stage's
    GPU.
    """
    if not isinstance(model, ModelSpec):
        return 0.0, 0.0, 0.0  # a bare parameter count has no layer shape, hence no activations
    lay, tr, h = layout, training, model.hidden_size
    tp, pp, sp, b = lay.tp, lay.pp, lay.sequence_parallel, lay.micro_batch
    # CP: each rank stores S / CP tokens of every activation (`NVIDIA/Megatron-LM
    # docs/user-guide/features/context_parallel.md`); Ulysses holds S tokens of a / CP heads
    # inside attention: the same bytes but for the s² scores, which flash attention (what CP
    # implementations use) never stores.
    s = tr.seq_len // lay.cp
    layer = activation_bytes_per_layer(
        s, b, h, model.num_heads, tp, sp, tr.recompute, tr.flash_attention, block_of(model)
    )
    flight = layers_in_flight(
        stage, model.num_layers, pp, num_microbatches, lay.schedule, lay.num_chunks
    )
    extras = edge_activation_bytes(stage, pp, s, b, h, model.vocab_size, tp, sp, model.dropout)
    return layer, flight, extras * flight * pp / model.num_layers  # x micro-batches in flight


@dataclass(frozen=True, kw_only=True)
class RecomputeOption:
    """One recompute setting: the fullest stage's activations and the extra compute they cost."""

    recompute: str
    activations_bytes: float
    saved_bytes: float  # activations saved relative to no recompute
    extra_compute_fraction: float  # extra FLOPs / model FLOPs
