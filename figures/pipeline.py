"""Plotly figure builders (plain dict specs) for simulated pipeline schedules."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.pipeline import BubbleSweep, PipelineResult

# F blue, B orange, I teal, W green, overlapped F&B purple, as in pytorch/pytorch
# torch/distributed/pipelining/_schedule_visualizer.py; a later chunk: lighter shade, same hue.
KIND_COLORS = {"F": "#1f77b4", "B": "#ff7f0e", "I": "#17becf", "W": "#2ca02c", "F&B": "#9467bd"}
KIND_NAMES = {
    "F": "forward",
    "B": "backward",
    "I": "input grad",
    "W": "weight grad",
    "F&B": "overlapped F&B",
}
IDLE_COLOR = "#ececec"
MAX_BARS = 2000  # above this, bars get slow in the browser: draw a heatmap raster instead
MAX_LABELS = 300  # micro-batch labels only when boxes are few (and wide)
MIN_LABEL_SHARE = 1 / 70  # a box shorter than this share of the step has no room for "12"
RASTER_COLUMNS = 1200


# One colour per schedule, shared by the bubble-vs-M and peak-memory charts.
SCHEDULE_COLORS = {
    "gpipe": "#1f77b4",
    "1f1b": "#ff7f0e",
    "interleaved_1f1b": "#2ca02c",
    "zb_h1": "#d62728",
    "zb_v": "#9467bd",
    "dualpipe_v": "#8c564b",
    "looped_bfs": "#e377c2",
}
_PALETTE = list(SCHEDULE_COLORS.values())


def schedule_color(schedule: str, index: int = 0) -> str:
    """A schedule's colour; unknown names cycle through the palette by position."""
    return SCHEDULE_COLORS.get(schedule, _PALETTE[index % len(_PALETTE)])


def shade(color: str, chunk: int, num_chunks: int) -> str:
    """Mix a hex colour toward white: chunk 0 full colour, the last chunk ~55% lighter."""
    frac = 0.55 * chunk / max(num_chunks - 1, 1)
    rgb = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * frac):02x}" for c in rgb)


def gantt_title(result: PipelineResult) -> str:
    """Title carrying the key parameters, e.g. '1F1B · P=4 · M=8' (browser tests wait on it)."""
    v = f" · v={result.num_chunks}" if result.num_chunks > 1 else ""
    return f"{result.label} · P={result.num_stages} · M={result.num_microbatches}{v}"


def _subtitle(result: PipelineResult) -> str:
    peak, v = max(result.peak_activations), result.num_chunks
    held = (
        f"{peak} chunk activations ({peak / v:g} stage-equivalents)"
        if v > 1
        else f"{peak} activations"
    )
    return (
        f"makespan {result.makespan_s:.4g} s · bubble {result.bubble_fraction:.1%} "
        f"(Σ idle / P·T) · peak {held}"
    )


def _layout(result: PipelineResult, title: str | None) -> dict:
    p = result.num_stages
    return {
        "title": {"text": title or gantt_title(result), "subtitle": {"text": _subtitle(result)}},
        "xaxis": {
            "title": {"text": "time (s)"},
            "range": [0, result.makespan_s],
            "zeroline": False,
        },
        "yaxis": {
            "title": {"text": ""},
            "autorange": "reversed",
            "tickmode": "array",
            "tickvals": list(range(p)),
            "ticktext": [f"rank {r}" for r in range(p)],
        },
        "plot_bgcolor": IDLE_COLOR,  # idle time shows as the grey background between boxes
        "margin": {"l": 60, "r": 20, "t": 70, "b": 40},
        # Rows tall enough to read a micro-batch label at small P, still one screen at P = 32.
        "height": 130 + p * (44 if p <= 8 else 26 if p <= 16 else 16),
    }


def gantt_figure(
    result: PipelineResult, *, title: str | None = None, max_bars: int = MAX_BARS
) -> dict:
    """Ranks on y, time on x: bars per op (base = start), or a raster heatmap when too many."""
    if len(result.ops) > max_bars:
        return gantt_raster_figure(result, title=title)
    ops, v = result.ops, result.num_chunks
    label = len(ops) <= MAX_LABELS
    traces = []
    # One trace per (kind, chunk): a single colour each, and numpy columns (sent as typed arrays)
    # instead of per-box lists, which Plotly validates element by element on every rerun.
    for code, kind in enumerate(("F", "B", "I", "W")):
        for chunk in range(v):
            sel = np.flatnonzero((ops.kind == code) & (ops.chunk == chunk))
            if not len(sel):
                continue
            pair = ops.overlapped[sel]
            start, end = ops.start_s[sel], ops.end_s[sel]
            traces.append(
                {
                    "type": "bar",
                    "orientation": "h",
                    "name": f"{kind} ({KIND_NAMES[kind]})",
                    "legendgroup": kind,
                    "showlegend": chunk == 0,
                    "y": ops.rank[sel].astype(np.int16),
                    "base": np.round(start, 6).tolist(),
                    "x": (end - start).astype(np.float32),
                    # An overlapped pair shares one slot: F on the upper half of the row, B the
                    # lower.
                    "width": np.where(pair, 0.4, 0.8).astype(np.float32) if pair.any() else 0.8,
                    "offset": (
                        np.where(pair, -0.4 if kind == "F" else 0.0, -0.4).astype(np.float32)
                        if pair.any()
                        else -0.4
                    ),
                    "marker": {
                        "color": shade(KIND_COLORS[kind], chunk, v),
                        "line": {"width": 0.5 if label else 0, "color": "white"},
                    },
                    "customdata": np.column_stack(
                        [ops.stage[sel], ops.microbatch[sel], start, end]
                    ).astype(np.float32),
                    "hovertemplate": (
                        f"stage %{{customdata[0]}} (rank %{{y}}, chunk {chunk}), {kind},"
                        " mb %{customdata[1]}<br>t = [%{customdata[2]:.4g}, "
                        "%{customdata[3]:.4g}) s<extra></extra>"
                    ),
                }
            )
    if label:
        traces += _labels(result)
    layout = _layout(result, title)
    layout.update({"barmode": "overlay", "bargap": 0.2})
    return {"data": traces, "layout": layout}


def _labels(result: PipelineResult) -> list[dict]:
    """Micro-batch numbers on wide-enough boxes, as one text trace.

    Bar text that Plotly must fit inside each bar (uniformtext) costs a text measurement per box:
    drawing the labels as a scatter text layer halved the Gantt's draw time in Chromium.
    """
    ops = result.ops
    wide = np.flatnonzero(ops.end_s - ops.start_s >= result.makespan_s * MIN_LABEL_SHARE)
    if not len(wide):
        return []
    pair, kind = ops.overlapped[wide], ops.kind[wide]
    # Centre of the box: an overlapped pair draws F on the upper half of the row, B the lower.
    y = ops.rank[wide] + np.where(pair, np.where(kind == 0, -0.2, 0.2), 0.0)
    light = 0.55 * ops.chunk[wide] / max(result.num_chunks - 1, 1) > 0.3  # see shade()
    size = np.where(pair, 9, 10).tolist() if pair.any() else 10
    color = np.where(light, "#333333", "white").tolist() if light.any() else "white"
    return [
        {
            "type": "scatter",
            "mode": "text",
            "name": "micro-batch",
            "showlegend": False,
            "x": ((ops.start_s[wide] + ops.end_s[wide]) / 2).astype(np.float32),
            "y": y.astype(np.float32),
            "text": ops.microbatch[wide].tolist(),
            "textfont": {"size": size, "color": color},
            "hoverinfo": "skip",
        }
    ]


def raster(result: PipelineResult, columns: int = RASTER_COLUMNS) -> tuple[np.ndarray, list]:
    """Sample each rank's timeline at column centres: code 0 idle, else 1 + kind·v + chunk."""
    ops, p, v = result.ops, result.num_stages, result.num_chunks
    dt = result.makespan_s / columns
    centres = (np.arange(columns) + 0.5) * dt
    # Ops are sorted by (rank, start): shift each rank by 2T so one searchsorted covers all ranks.
    shift = 2.0 * result.makespan_s
    keys = ops.rank * shift + ops.start_s
    probe = (np.arange(p)[:, None] * shift + centres[None, :]).ravel()
    idx = np.searchsorted(keys, probe, side="right") - 1
    rows = np.repeat(np.arange(p), columns)
    ok = (idx >= 0) & (ops.rank[idx] == rows) & (ops.end_s[idx] > np.tile(centres, p))
    kind = np.where(ops.overlapped[idx], 4, ops.kind[idx])  # 4 = overlapped F&B slot
    code = np.where(ok, 1 + kind * v + ops.chunk[idx], 0).reshape(p, columns)
    colors = [IDLE_COLOR] + [shade(KIND_COLORS[k], c, v) for k in KIND_COLORS for c in range(v)]
    return code.astype(np.int8), colors


def gantt_raster_figure(
    result: PipelineResult, *, title: str | None = None, columns: int = RASTER_COLUMNS
) -> dict:
    """Heatmap raster of the timeline (fast for tens of thousands of ops)."""
    code, colors = raster(result, columns)
    n = len(colors)
    # Stepwise colour scale: value k maps to colors[k] for k = 0..n-1.
    scale = [[pos, c] for k, c in enumerate(colors) for pos in (k / n, (k + 1) / n)]
    dt = result.makespan_s / columns
    heat = {
        "type": "heatmap",
        "z": code,
        "x0": dt / 2,
        "dx": dt,
        "y0": 0,
        "dy": 1,
        "zmin": -0.5,
        "zmax": n - 0.5,
        "colorscale": scale,
        "showscale": False,
        "hovertemplate": "rank %{y}, t ≈ %{x:.4g} s<extra></extra>",
    }
    ops = result.ops
    present = {"FBIW"[k] for k in np.unique(ops.kind[~ops.overlapped]).tolist()}
    present |= {"F&B"} if ops.overlapped.any() else set()
    legend = [
        {
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "markers",
            "marker": {"color": KIND_COLORS[k], "symbol": "square", "size": 10},
            "name": f"{k} ({KIND_NAMES[k]})",
        }
        for k in KIND_COLORS
        if k in present
    ]
    layout = _layout(result, title)
    layout["title"]["subtitle"]["text"] += f" · raster of {len(result.ops):,} ops"
    return {"data": [heat, *legend], "layout": layout}


def bubble_vs_m_figure(
    sweeps: Sequence[BubbleSweep],
    labels: dict[str, str] | None = None,
    *,
    title: str | None = None,
    highlight: str | None = None,
    here: tuple[int, float] | None = None,
) -> dict:
    """Metric A against M: the closed-form curve per schedule with simulated points on it.

    `highlight` draws one schedule bold (the others thinner); `here` = (M, A) marks the current run.
    """
    # Several schedules share a curve (GPipe = 1F1B, interleaved = looped BFS): dashes and marker
    # symbols keep the overlapping ones distinguishable.
    dashes = ["dot", "dash", "longdash", "dashdot", "longdashdot"]
    symbols = ["circle", "diamond", "square", "triangle-up", "x", "cross", "triangle-down"]
    traces = []
    for k, sw in enumerate(sweeps):
        name = (labels or {}).get(sw.schedule, sw.schedule)
        name += f" (v={sw.num_chunks})" if sw.num_chunks > 1 else ""
        color = schedule_color(sw.schedule, k)
        bold = highlight is None or sw.schedule == highlight
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": name,
                "legendrank": k,
                "legendgroup": sw.schedule,
                "x": list(sw.curve_microbatches),
                "y": list(sw.curve),
                "connectgaps": False,
                "opacity": 1.0 if bold else 0.55,
                "line": {
                    "color": color,
                    "width": 3.5 if highlight and bold else 1.8,
                    "dash": "solid" if bold and (highlight or k == 0) else dashes[k % len(dashes)],
                },
                "hovertemplate": f"{name} formula<br>M=%{{x}}: %{{y:.2%}}<extra></extra>",
            }
        )
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"{name} simulated",
                "legendgroup": sw.schedule,
                "showlegend": False,
                "x": list(sw.microbatches),
                "y": list(sw.simulated),
                "opacity": 1.0 if bold else 0.55,
                "marker": {"color": color, "size": 9, "symbol": symbols[k % len(symbols)]},
                "hovertemplate": f"{name} simulated<br>M=%{{x}}: %{{y:.2%}}<extra></extra>",
            }
        )
    # Paint the highlighted schedule last (on top); legendrank keeps the legend in input order.
    traces.sort(key=lambda t: t["legendgroup"] == highlight)
    if here is not None:
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"this run (M={here[0]})",
                "x": [here[0]],
                "y": [here[1]],
                "marker": {"color": "black", "size": 16, "symbol": "star"},
                "hovertemplate": "this run<br>M=%{x}: %{y:.2%}<extra></extra>",
            }
        )
    p = sweeps[0].num_stages if sweeps else "?"
    top = max((max(sw.curve_microbatches, default=1) for sw in sweeps), default=1)
    ticks = [2**k for k in range(top.bit_length())]
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": title or f"Bubble vs M · P={p}",
                "subtitle": {"text": "lines: closed form · dots: simulated"},
            },
            "xaxis": {
                "title": {"text": "micro-batches M"},
                "type": "log",
                "tickmode": "array",
                "tickvals": ticks,
                "ticktext": [str(t) for t in ticks],
            },
            "yaxis": {
                "title": {"text": "bubble fraction A = Σ idle / (P · T)"},
                "tickformat": ".0%",
                "rangemode": "tozero",
            },
            "legend": {"orientation": "h", "y": -0.25},
            "margin": {"l": 60, "r": 20, "t": 80, "b": 40},
        },
    }


def peak_activations_figure(results: Sequence[PipelineResult], *, title: str | None = None) -> dict:
    """Grouped bars: peak activations per rank, in full-stage micro-batch equivalents."""
    traces = []
    for k, res in enumerate(results):
        ranks = list(range(res.num_stages))
        name = res.label + (f" (v={res.num_chunks})" if res.num_chunks > 1 else "")
        traces.append(
            {
                "type": "bar",
                "name": name,
                "legendgroup": res.schedule,
                "x": ranks,
                "marker": {"color": schedule_color(res.schedule, k)},
                "y": list(res.peak_activation_stages),
                "customdata": list(res.peak_activations),
                "hovertemplate": (
                    f"{res.label}, rank %{{x}}: %{{y:.3g}} stage-equivalents"
                    " (%{customdata} chunk activations)<extra></extra>"
                ),
            }
        )
    head = results[0] if results else None
    default = (
        f"Peak activations per rank · P={head.num_stages} · M={head.num_microbatches}"
        if head
        else "Peak activations per rank"
    )
    return {
        "data": traces,
        "layout": {
            "title": {"text": title or default},
            "barmode": "group",
            "xaxis": {
                "title": {"text": "rank"},
                "tickmode": "linear",
                "dtick": 1 if head is None or head.num_stages <= 16 else 4,
            },
            "yaxis": {"title": {"text": "peak activations (mb of one stage)"}},
            "legend": {"orientation": "h", "y": -0.25},
            "margin": {"l": 60, "r": 20, "t": 50, "b": 40},
        },
    }


def side_by_side(left: dict, right: dict, *, gap: float = 0.12, height: int = 470) -> dict:
    """Two single-plot figure dicts as one figure: two subplots with their titles, one legend.

    One Plotly chart instead of two is drawn noticeably faster by the browser (each chart pays its
    own mount, theme and layout passes), which matters when both change on every slider move.
    The right traces join the left plot's legend through their legendgroup (same colours; a click
    toggles both); the shared legend runs across the bottom, so it fits narrow screens too.
    """
    half = (1 - gap) / 2
    out = {"data": [dict(t) for t in left["data"]], "layout": {"height": height}}
    lay, right_lay = out["layout"], right["layout"]
    out["data"] += [dict(t, xaxis="x2", yaxis="y2", showlegend=False) for t in right["data"]]
    lay["legend"] = {
        "orientation": "h",
        "x": 0,
        "xanchor": "left",
        "y": -0.18,
        "yanchor": "top",
        "font": {"size": 11},
    }
    notes = []
    for n, (src, x0) in enumerate(((left["layout"], 0.0), (right_lay, half + gap))):
        suffix = "" if n == 0 else "2"
        lay[f"xaxis{suffix}"] = dict(
            src.get("xaxis", {}), domain=[x0, x0 + half], anchor=f"y{suffix}"
        )
        lay[f"yaxis{suffix}"] = dict(src.get("yaxis", {}), anchor=f"x{suffix}")
        title = src.get("title", {})
        sub = title.get("subtitle", {}).get("text")
        sub = "colours as in the legend" + (f" · {sub}" if sub else "") if n else sub
        notes.append(
            {
                "text": f"<b>{title.get('text', '')}</b>",
                "x": x0,
                "y": 1.0,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "left",
                "yanchor": "bottom",
                "yshift": 28,
                "showarrow": False,
                "font": {"size": 15, "color": "#31333f"},
            }
        )
        notes += (
            [
                {
                    "text": sub,
                    "x": x0,
                    "y": 1.0,
                    "xref": "paper",
                    "yref": "paper",
                    "xanchor": "left",
                    "yanchor": "bottom",
                    "yshift": 8,
                    "showarrow": False,
                    "font": {"size": 11, "color": "#777777"},
                }
            ]
            if sub
            else []
        )
    for key in ("barmode", "bargap"):
        if key in right_lay:
            lay[key] = right_lay[key]
    lay.update(annotations=notes, margin={"l": 60, "r": 20, "t": 70, "b": 40})
    return out
