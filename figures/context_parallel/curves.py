"""Ring vs Ulysses bytes per rank, block compute vs the K/V hop, and memory per GPU vs sequence
length (plain dict specs built from core.context_parallel results)."""

from __future__ import annotations

from core.units import bytes_in, format_count, gib_or_gb
from figures.style import (
    COLOURS,
    CP_SCHEME_COLOURS,
    SERIES_COLOURS,
    bottom_legend,
    decade_ticks,
    margin,
    ticks_125,
)


def _log_axes(xs: list[float], ys: list[float], x_title: str, y_title: str) -> dict:
    """Log x and y labelled only at round values (x at 1, 2, 5 × 10^k, y at the decades), so
    Plotly's minor labels (2 … 9 between decades) never crowd a decade's label."""
    return {
        "xaxis": {"type": "log", "title": {"text": x_title}, **ticks_125(xs, format_count)},
        "yaxis": {"type": "log", "title": {"text": y_title}, **decade_ticks(ys, format_count)},
    }


def traffic_figure(
    rows: list[dict], *, model: str, seq_len: int, tp: int, units: str = "decimal"
) -> dict:
    """rows: cp, ring_bytes, ulysses_bytes (None when Ulysses cannot split the heads)."""
    x = [f"CP={r['cp']}" for r in rows]
    unit = "MiB" if units == "binary" else "MB"
    mib = bytes_in(1, unit) ** -1
    bars = [
        ("ring (and all-gather): (C − 1) K/V blocks", "ring", "ring_bytes"),
        ("Ulysses: all-to-all of Q, K, V in and O out", "ulysses", "ulysses_bytes"),
    ]
    data = [
        {
            "type": "bar",
            "name": name,
            "x": x,
            "y": [None if r[key] is None else round(r[key] / mib, 3) for r in rows],
            "marker": {"color": CP_SCHEME_COLOURS[colour]},
            "hovertemplate": "%{x}: %{y:,.1f} " + unit + "<extra>" + colour + "</extra>",
        }
        for name, colour, key in bars
    ]
    gone = [f"CP={r['cp']}" for r in rows if r["ulysses_bytes"] is None]
    note = f"; Ulysses impossible at {', '.join(gone)} (too few heads per TP rank)" if gone else ""
    return {
        "data": data,
        "layout": {
            "title": {
                "text": f"Context parallel · {model} · S={seq_len:,} · TP={tp} · bytes each rank "
                "sends per layer (forward)",
                "subtitle": {"text": "the backward pass about doubles both" + note},
            },
            "barmode": "group",
            "yaxis": {"title": {"text": f"{unit} per rank per layer"}},
            "legend": bottom_legend(),
            "height": 380,
            "margin": margin(l=70, t=90, b=60),
        },
    }


def overlap_figure(points: dict[str, list], *, cp: int, crossings: dict[str, float]) -> dict:
    """points: link name -> OverlapPoints vs sequence length; crossings: link -> S where the
    block compute starts to cover the hop."""
    first = next(iter(points.values()))
    xs = [p.seq_len for p in first]
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "attention on one block (compute)",
            "x": xs,
            "y": [p.compute_s * 1e6 for p in first],
            "line": {"color": COLOURS["compute"], "width": 3},
        }
    ]
    for i, (name, pts) in enumerate(points.items()):
        colour = SERIES_COLOURS[(i + 1) % len(SERIES_COLOURS)]
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"K/V hop on {name}",
                "x": xs,
                "y": [p.transfer_s * 1e6 for p in pts],
                "line": {"color": colour, "dash": "dash"},
            }
        )
        s = crossings[name]
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": [s],
                "y": [next(p.transfer_s for p in pts) * 1e6 * s / xs[0]],
                "text": [f"hidden from S ≈ {s:,.0f}"],
                "textposition": "top left" if i == 0 else "bottom right",
                "marker": {"color": colour, "size": 10},
                "showlegend": False,
                "hoverinfo": "skip",
            }
        )
    return {
        "data": data,
        "layout": {
            "title": {
                "text": f"Context parallel · CP={cp} · does the K/V hop hide behind the block?",
                "subtitle": {"text": "per ring step: compute grows with (S/C)², the hop with S/C"},
            },
            **_log_axes(
                xs,
                [y for t in data for y in t["y"]],
                "sequence length S (tokens)",
                "µs per ring step",
            ),
            "legend": bottom_legend(y=-0.25),
            "height": 420,
            "margin": margin(l=70, t=90, b=80),
        },
    }


def memory_figure(lines: dict[str, list], *, hbm_bytes: float, units: str, gpu: str) -> dict:
    """lines: label -> CpMemoryPoints vs sequence length; the HBM line on top."""
    unit, size = gib_or_gb(units)
    data, xs = [], []
    for i, (name, pts) in enumerate(lines.items()):
        xs = [p.seq_len for p in pts]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": xs,
                "y": [round(p.total_bytes / size, 3) for p in pts],
                "line": {"color": SERIES_COLOURS[i % len(SERIES_COLOURS)]},
                "hovertemplate": "S=%{x:,}: %{y:.1f} " + unit + "<extra>" + name + "</extra>",
            }
        )
    data.append(
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"{gpu} HBM",
            "x": [xs[0], xs[-1]],
            "y": [hbm_bytes / size] * 2,
            "line": {"color": COLOURS["capacity"], "dash": "dot", "width": 2},
        }
    )
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "Context parallel · memory per GPU vs sequence length",
                "subtitle": {
                    "text": "activations of the first pipeline stage (1F1B, PP micro-batches in "
                    "flight) + model states; above the dotted line is out of memory"
                },
            },
            **_log_axes(
                xs,
                [y for t in data for y in t["y"]],
                "sequence length S (tokens)",
                f"{unit} per GPU",
            ),
            "legend": bottom_legend(y=-0.25),
            "height": 420,
            "margin": margin(l=70, t=90, b=80),
        },
    }
