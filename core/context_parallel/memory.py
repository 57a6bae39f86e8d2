"""Activation memory per GPU vs sequence length, with and without context parallelism.

CP cuts every activation by the sequence, so each linear-in-s term of the block's stored
activations (Korthikanti et al. 2022 Table 2 generalised per block type in core.memory,
docs/notes/memory.md) takes s/C; SP only splits the LayerNorm/dropout regions over TP
(`NVIDIA/Megatron-LM docs/user-guide/features/context_parallel.md`). The 1F1B first stage keeps PP
micro-batches in flight. Model states: weights and gradients split by TP × PP, the optimizer also
over the DP × CP ranks that hold the same shard (ZeRO-1, as Megatron's distributed optimizer does).
The activations are core.memory's first stage's for the same layout (tests/test_consistency.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import whole_number
from core.hardware import GpuSpec
from core.memory import model_state_bytes_per_gpu, stage_activations
from core.model import ModelSpec
from core.parallel import Layout
from core.training import Training


@dataclass(frozen=True, kw_only=True)
class CpMemoryPoint:
    """One GPU of the first pipeline stage at one sequence length."""

    seq_len: int
    cp: int
    sequence_parallel: bool
    activations_bytes: float
    states_bytes: float

    @property
    def total_bytes(self) -> float:
        return self.activations_bytes + self.states_bytes


def cp_memory(
    model: ModelSpec,
    *,
    seq_len: int,
    cp: int,
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
    sequence_parallel: bool = True,
    micro_batch: int = 1,
    recompute: str = "selective",
    flash_attention: bool = True,
) -> CpMemoryPoint:
    """Activations (S/C tokens per layer, ⌈L/PP⌉ layers, PP micro-batches in flight) and states."""
    s, c = whole_number("seq_len", seq_len), whole_number("CP", cp)
    tp, pp, dp = (whole_number(n, v) for n, v in (("TP", tp), ("PP", pp), ("DP", dp)))
    if s % c:
        raise ValueError(
            f"sequence length {s} does not divide by CP={c}: every CP rank holds S/C tokens; "
            f"use a sequence length divisible by {c}"
        )
    lay = Layout(
        dp=dp,
        tp=tp,
        pp=pp,
        cp=c,
        cp_kind="ring",
        zero_stage=1,
        sequence_parallel=sequence_parallel,
        micro_batch=micro_batch,
    )
    tr = Training(
        global_batch=dp * micro_batch * pp,  # PP micro-batches: the first stage holds PP in flight
        seq_len=s,
        recompute=recompute,
        flash_attention=flash_attention,
    )
    # core.memory's first stage (the memory page's numbers; no layer-split check here, so any PP
    # the CP page offers works: L / PP layers' worth per micro-batch in flight)
    layer, flight, extras = stage_activations(model, 0, lay, tr, pp)
    # States: the model split evenly over TP × PP (the CP page's hand-derived figure); core.memory
    # counts the first stage exactly (its embedding, not the average of embedding and head).
    states = model_state_bytes_per_gpu(-(-model.num_params // (tp * pp)), dp * c, 1)
    return CpMemoryPoint(
        seq_len=s,
        cp=c,
        sequence_parallel=sequence_parallel,
        activations_bytes=layer * flight + extras,
        states_bytes=float(states.total_bytes),
    )


def max_seq_len(model: ModelSpec, gpu: GpuSpec, *, cp: int, lo: int = 1024, **kw) -> int:
    """The longest power-of-two multiple of `lo` tokens that fits in HBM (0 if none); a length
    that C does not divide is padded up to a multiple of C."""
    best, s = 0, lo
    while s <= 2**24:
        padded = -(-s // cp) * cp
        if cp_memory(model, seq_len=padded, cp=cp, **kw).total_bytes > gpu.hbm_bytes:
            break
        best, s = s, s * 2
    return best
