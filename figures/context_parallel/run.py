"""The context-parallel page's computation in one call: the ring on real data, the balance of
both layouts, traffic, overlap and memory sweeps, and the figures (plain values in and out)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import context_parallel as cp
from core.hardware import gpu as gpu_spec
from core.hardware import link
from core.model import preset
from figures.context_parallel.blocks import block_grid_figure, gantt_figure
from figures.context_parallel.curves import memory_figure, overlap_figure, traffic_figure

TOY_HEADS = 16  # Ulysses' toy: 16 heads of dimension 4, so C = 1, 2, 4, 8, 16 split them
TOY_CHUNK = 6  # tokens per zig-zag chunk in the real-data ring: S = 12·C
CP_SWEEP = (1, 2, 4, 8, 16, 32)
SEQ_SWEEP = tuple(2**k for k in range(12, 21))  # 4K … 1M tokens
OVERLAP_SWEEP = tuple(2**k for k in range(9, 21))  # 512 … 1M: NVLink crosses below 4K
LINKS = ("NVLink 4", "InfiniBand NDR")


@dataclass(frozen=True, kw_only=True)
class CpRun:
    degree: int  # the CP degree C
    layout: str
    causal: bool
    model: str
    gpu: str
    seq_len: int
    tp: int
    pp: int
    units: str


def padded(seq_len: int, c: int) -> int:
    """S rounded up to a multiple of 2C: zig-zag needs 2C equal chunks, so a run pads the
    sequence (Megatron-LM asserts S % 2C == 0)."""
    return -(-seq_len // (2 * c)) * 2 * c


def toy(c: int, layout: str, causal: bool) -> dict:
    s = 2 * TOY_CHUNK * c
    q, k, v = cp.example_qkv(s, 8, seed=c)
    ring = cp.ring_attention(q, k, v, cp=c, causal=causal, layout=layout)
    both = [cp.ring_balance(s, c, layout=lay, causal=causal) for lay in ("contiguous", "zigzag")]
    rank, step = cp.chunk_grid(c, layout=layout, causal=causal)
    heads = np.random.default_rng(c).standard_normal((3, s, TOY_HEADS, 4))
    try:  # the same sequence cut by heads instead: Ulysses needs C to divide them
        uly, uly_error = cp.ulysses_attention(*heads, cp=c, causal=causal), ""
    except ValueError as err:
        uly, uly_error = None, str(err)
    return dict(
        ulysses=uly,
        ulysses_error=uly_error,
        seq_len=s,
        ring=ring,
        balance=dict(zip(("contiguous", "zigzag"), both)),
        grid=block_grid_figure(rank, step, cp=c, layout=layout, causal=causal),
        gantt=gantt_figure(both),
    )


def long_context(r: CpRun) -> dict:
    """Traffic vs CP, overlap vs S on NVLink and InfiniBand, memory vs S, for the chosen model."""
    m, g = preset(r.model), gpu_spec(r.gpu)
    seq = padded(r.seq_len, r.degree)
    rows = []
    for c in CP_SWEEP[1:]:  # CP = 1 sends nothing
        t = cp.cp_traffic(m, seq_len=padded(r.seq_len, c), cp=c, tp=r.tp)
        rows.append(
            dict(
                cp=c,
                ring_bytes=t.ring_bytes,
                ulysses_bytes=None if t.ulysses_error else t.ulysses_bytes,
            )
        )
    here = cp.cp_traffic(m, seq_len=seq, cp=r.degree, tp=r.tp)
    sweep = [padded(s, r.degree) for s in SEQ_SWEEP]
    kw = dict(cp=r.degree, tp=r.tp, causal=r.causal)
    wide = [padded(s, r.degree) for s in OVERLAP_SWEEP]
    points = {n: [cp.step_times(m, g, link(n), seq_len=s, **kw) for s in wide] for n in LINKS}
    local = {n: cp.overlap_threshold_local_tokens(m, g, link(n), causal=r.causal) for n in LINKS}
    crossings = {n: s_c * r.degree for n, s_c in local.items()}
    mem_kw = dict(tp=r.tp, pp=r.pp)
    lines = {
        f"TP={r.tp}, no SP, CP=1": [
            cp.cp_memory(m, seq_len=s, cp=1, sequence_parallel=False, **mem_kw) for s in sweep
        ],
        f"TP={r.tp} + SP, CP=1": [cp.cp_memory(m, seq_len=s, cp=1, **mem_kw) for s in sweep],
        f"TP={r.tp} + SP, CP={r.degree}": [
            cp.cp_memory(m, seq_len=s, cp=r.degree, **mem_kw) for s in sweep
        ],
    }
    at = cp.cp_memory(m, seq_len=seq, cp=r.degree, **mem_kw)
    return dict(
        degree=r.degree,
        seq_len=seq,
        tp=r.tp,
        pp=r.pp,
        traffic=here,
        traffic_fig=traffic_figure(rows, model=r.model, seq_len=r.seq_len, tp=r.tp, units=r.units),
        local=local,
        crossings=crossings,
        overlap_fig=overlap_figure(points, cp=r.degree, crossings=crossings),
        memory=at,
        hbm=g.hbm_bytes,
        longest={c: cp.max_seq_len(m, g, cp=c, **mem_kw) for c in (1, r.degree)},
        memory_fig=memory_figure(lines, hbm_bytes=g.hbm_bytes, units=r.units, gpu=r.gpu),
    )
