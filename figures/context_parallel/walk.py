"""The context-parallel page's guided walk: five steps that set its controls (widget keys, select
labels as in the URL) and say one true thing each, every number computed with the core for the
values that step sets (app_pages/common/walk.py plays it)."""

from __future__ import annotations

from core import context_parallel as cp
from core.hardware import gpu, link
from core.model import preset
from core.units import format_bytes
from figures.context_parallel.run import TOY_CHUNK
from figures.walks.step import WalkStep, steps

BASE = dict(
    c=4,
    lay="contiguous",
    causal=True,
    model="Llama-3.1 70B",
    gpu="H100 SXM",
    seq="128K",
    tp=8,
    pp=4,
    lcp="8",
    t=0,
)


def walk(units: str = "decimal") -> tuple[WalkStep, ...]:
    c, s = 4, 2 * TOY_CHUNK * 4
    q, k, v = cp.example_qkv(s, 8, seed=c)
    err = cp.ring_attention(q, k, v, cp=c, causal=True, layout="contiguous").max_abs_error
    idle = {lay: cp.ring_balance(s, c, layout=lay).idle_share for lay in ("contiguous", "zigzag")}
    small = preset("Llama-3.1 8B")
    t8 = cp.cp_traffic(small, seq_len=32768, cp=8, tp=1)
    m70, h100 = preset("Llama-3.1 70B"), gpu("H100 SXM")
    nv = cp.overlap_threshold_local_tokens(m70, h100, link("NVLink 4"))
    ib = cp.overlap_threshold_local_tokens(m70, h100, link("InfiniBand NDR"))
    mem = {n: cp.cp_memory(m70, seq_len=131072, cp=n, tp=8, pp=4).total_bytes for n in (1, 8)}

    def b(x: float) -> str:
        return format_bytes(x, units)

    return steps(
        BASE,
        (
            f"Four ranks each keep 12 query tokens; the K/V blocks travel round the ring and every "
            f"rank folds each block into a running softmax. The result equals full attention to "
            f"{err:.0e}: the first metric.",
            {},
        ),
        (
            "Ring step 2: rank r now holds the K/V block of rank r − 2. With contiguous chunks "
            "and a causal mask, rank 0's queries need none of the later blocks, so it idles while "
            f"rank 3 works: the Gantt shows {idle['contiguous']:.0%} of rank-time idle.",
            {"t": 2},
        ),
        (
            "Zig-zag: 2C chunks, rank r keeps chunk r and chunk 2C − 1 − r, one early and one "
            f"late. Every rank does the same work at every step: {idle['zigzag']:.0%} idle.",
            {"lay": "zig-zag"},
        ),
        (
            "Ring or Ulysses? Llama-3.1 8B at S = 32K, TP 1, CP 8: the ring sends "
            f"{b(t8.ring_bytes)} per rank per layer, Ulysses {b(t8.ulysses_bytes)}. Ulysses needs "
            "CP to divide the K/V heads of each TP rank: 70B at TP 8 has 1 left.",
            {"lay": "zig-zag", "model": "Llama-3.1 8B", "tp": 1, "pp": 1, "seq": "32K"},
        ),
        (
            f"Why CP: Llama-3.1 70B at 128K tokens needs {b(mem[1])} per GPU with CP = 1 and "
            f"{b(mem[8])} with CP = 8 (set now). The K/V hop hides behind a causal block from "
            f"{nv:,.0f} tokens per rank on NVLink and {ib:,.0f} on InfiniBand.",
            {"lay": "zig-zag"},
        ),
    )
