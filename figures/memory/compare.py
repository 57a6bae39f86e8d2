"""Layout A vs layout B: the chart, B's metrics with deltas against A, and the verdict sentence."""

from __future__ import annotations

from core.memory import MemoryResult, fits
from core.units import format_bytes
from figures.memory.stacks import compare_layouts_figure, layout_label


def compare_layouts(
    a: MemoryResult,
    b: MemoryResult,
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    units: str = "binary",
    gpu: str = "the GPU",
) -> dict:
    """Everything the page shows for A vs B: the chart, B's metrics with deltas, the verdict
    sentence.
    """
    metrics, sentence = compare_summary(a, b, capacity_bytes, reserve_bytes, units, gpu)
    return {
        "fig": compare_layouts_figure(a, b, capacity_bytes, reserve_bytes, units, gpu),
        "metrics": metrics,
        "sentence": sentence,
    }


def compare_summary(
    a: MemoryResult,
    b: MemoryResult,
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    units: str = "binary",
    capacity_label: str = "the GPU",
) -> tuple[list[dict], str]:
    """B's st.metric arguments with deltas against A, and one sentence: which layout fits, by how
    much.
    """

    def gpus(r):
        return r.layout.world_size

    def metric(label, vb, va, fmt, tip, colour="inverse"):  # more memory is worse: a rise shows red
        d = vb - va
        return {
            "label": label,
            "value": fmt(vb),
            "delta": f"{'-' if d < 0 else '+'}{fmt(abs(d))} vs A" if d else "same as A",
            "delta_color": colour if d else "off",
            "delta_arrow": "auto" if d else "off",
            "help": tip,
        }

    def b_(x):
        return format_bytes(x, units)

    def verdict(name, r):
        used, ok = r.total_bytes + reserve_bytes, fits(r.total_bytes, capacity_bytes, reserve_bytes)
        return (
            f"**{name}** ({layout_label(r)}) {'fits' if ok else '**does not fit (OOM)**'}: "
            f"{b_(used)}, {b_(abs(capacity_bytes - used))} {'to spare' if ok else 'over'}"
        )

    rows = [
        metric(
            "B per GPU",
            b.total_bytes + reserve_bytes,
            a.total_bytes + reserve_bytes,
            b_,
            "B's fullest GPU: model states + activations + reserve.",
        ),
        metric(
            "B states / GPU",
            b.states_bytes,
            a.states_bytes,
            b_,
            "Parameters + gradients + optimizer states.",
        ),
        metric(
            "B activations / GPU",
            b.activations_bytes,
            a.activations_bytes,
            b_,
            "Activations stored on B's fullest GPU.",
        ),
        metric("B GPUs", gpus(b), gpus(a), lambda n: f"{n:,}", "DP × TP × PP", colour="off"),
    ]
    d = b.total_bytes - a.total_bytes
    more = f"{b_(abs(d))} {'more' if d > 0 else 'less'}" if d else "the same memory"
    on = (
        f"the same {gpus(a):,} GPUs"
        if gpus(a) == gpus(b)
        else f"{gpus(b):,} GPUs instead of {gpus(a):,}"
    )
    return rows, (
        f"On {capacity_label} ({b_(capacity_bytes)}): {verdict('A', a)}; {verdict('B', b)}. "
        f"B needs {more} per GPU than A, on {on}."
    )
