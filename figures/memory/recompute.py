"""Activation recompute: the memory it saves beside the extra compute it costs."""

from __future__ import annotations

from core.memory import RecomputeOption
from core.training import RECOMPUTE
from core.units import format_bytes, gib_or_gb
from figures.memory.stacks import AXIS_FONT, TICK_FONT, exact_bytes
from figures.style import COLOURS

# Why selective recompute can save nothing: it drops exactly the s² attention tensors (softmax
# output, dropout mask and output; Korthikanti et al. 2022 Sec. 5), which flash attention never
# writes to memory in the first place (docs/notes/memory.md §3).
ZERO_SAVING_REASON = (
    "Selective saves 0 here: it drops only the s² attention scores, which flash attention never "
    "stores"
)


def recompute_tradeoff_figure(options: list[RecomputeOption], units: str = "binary") -> dict:
    """Activation memory (left) next to the extra compute it costs (right), per recompute mode."""
    unit_name, unit = gib_or_gb(units)
    x = [RECOMPUTE[o.recompute].label for o in options]
    mem_hover = [
        f"<b>{label}</b><br>activations {exact_bytes(o.activations_bytes, units)}"
        f"<br>saved vs none {exact_bytes(o.saved_bytes, units)}"
        for label, o in zip(x, options)
    ]
    flop_hover = [
        f"<b>{label}</b><br>extra FLOPs = {100 * o.extra_compute_fraction:.2f}% of model FLOPs"
        " (6N + 12 L h s per token)"
        for label, o in zip(x, options)
    ]
    data = [
        {
            "type": "bar",
            "name": "Activations",
            "x": x,
            "y": [o.activations_bytes / unit for o in options],
            "marker": {"color": COLOURS["activations"]},
            "customdata": mem_hover,
            "textposition": "outside",
            "text": [format_bytes(o.activations_bytes, units) for o in options],
            "cliponaxis": False,
            "hovertemplate": "%{customdata}<extra></extra>",
            "xaxis": "x",
            "yaxis": "y",
        },
        {
            "type": "bar",
            "name": "Extra compute",
            "x": x,
            "y": [100 * o.extra_compute_fraction for o in options],
            "marker": {"color": COLOURS["recompute"]},
            "text": [f"+{100 * o.extra_compute_fraction:.1f}%" for o in options],
            "textposition": "outside",
            "cliponaxis": False,
            "customdata": flop_hover,
            "hovertemplate": "%{customdata}<extra></extra>",
            "xaxis": "x2",
            "yaxis": "y2",
        },
    ]
    # The reason goes in the subtitle, not over the bar: a note there collided with the bar's
    # value label once presenter mode enlarged both (tests/e2e/test_presenter_browser.py).
    zero = any(o.recompute == "selective" and o.saved_bytes == 0 for o in options)
    title = {"text": "Activation recompute: memory saved vs extra compute"}
    if zero:
        title["subtitle"] = {"text": ZERO_SAVING_REASON}
    layout = {
        "title": title,
        "showlegend": False,
        "grid": {"rows": 1, "columns": 2, "pattern": "independent"},
        "xaxis": {"domain": [0, 0.45], "tickfont": TICK_FONT},
        "xaxis2": {"domain": [0.55, 1], "tickfont": TICK_FONT},
        "yaxis": {
            "title": {"text": f"Activations per GPU ({unit_name})", "font": AXIS_FONT},
            "tickfont": TICK_FONT,
        },
        "yaxis2": {
            "title": {"text": "Extra compute per step (%)", "font": AXIS_FONT},
            "anchor": "x2",
            "tickfont": TICK_FONT,
        },
        "margin": {"t": 90 if zero else 60, "b": 40},
        "font": {"size": 14},
    }
    return {"data": data, "layout": layout}
