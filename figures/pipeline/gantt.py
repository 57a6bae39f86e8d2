"""The pipeline Gantt chart: one box per simulated op, idle time as the grey background."""

from __future__ import annotations

import numpy as np

from core.pipeline import PipelineResult
from figures.pipeline.frame import KIND_NAMES, gantt_layout
from figures.pipeline.labels import label_items
from figures.pipeline.raster import gantt_raster_figure
from figures.style import COLOURS, KIND_COLOURS, ink_on, shade

MAX_BARS = 2000  # above this, bars get slow in the browser: draw a heatmap raster instead


def gantt_figure(
    result: PipelineResult,
    *,
    title: str | None = None,
    max_bars: int = MAX_BARS,
    time_range_s: float | None = None,
) -> dict:
    """Ranks on y, time on x: bars per op (base = start), or a raster heatmap when too many.

    time_range_s: a shared time axis (compared schedules). The page's time cursor (fill and
    drain) covers what has not happened yet: figures.pipeline.playback.at_time.
    """
    if len(result.ops) > max_bars:
        return gantt_raster_figure(result, title=title, time_range_s=time_range_s)
    ops, v = result.ops, result.num_chunks
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
                    "name": f"{kind} ({KIND_NAMES[kind]})"
                    if chunk == 0
                    else f"{kind}, chunk {chunk}: later chunks lighter",
                    "legendgroup": kind,
                    # later chunks' shades get their own legend entry, for F only (one per chunk)
                    "showlegend": chunk == 0 or kind == "F",
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
                        "color": shade(KIND_COLOURS[kind], chunk, v),
                        "line": {"width": 0.5, "color": COLOURS["paper"]},
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
    traces += _labels(result, time_range_s)
    layout = gantt_layout(result, title, time_range_s)
    layout.update({"barmode": "overlay", "bargap": 0.2})
    layout["annotations"] = layout["annotations"] + _range_notes(result, time_range_s)
    return {"data": traces, "layout": layout}


def _labels(result: PipelineResult, time_range_s: float | None = None) -> list[dict]:
    """Micro-batch numbers, one text trace, in ink that reads on each box's colour; a run of boxes
    too narrow for theirs gets "a–b" instead (figures.pipeline.labels), drawn by _range_notes.

    Bar text that Plotly must fit inside each bar (uniformtext) costs a text measurement per box:
    drawing the labels as a scatter text layer halved the Gantt's draw time in Chromium.
    """
    items = [it for it in label_items(result, time_range_s) if "–" not in it[2]]
    if not items:
        return []
    ops = result.ops
    x, first, text = (list(col) for col in zip(*items))
    idx = np.asarray(first)
    pair, kind = ops.overlapped[idx], ops.kind[idx]
    # Centre of the box: an overlapped pair draws F on the upper half of the row, B the lower.
    y = ops.rank[idx] + np.where(pair, np.where(kind == 0, -0.2, 0.2), 0.0)
    size = np.where(pair, 9, 10).tolist() if pair.any() else 10
    return [
        {
            "type": "scatter",
            "mode": "text",
            "name": "micro-batch",
            "showlegend": False,
            "x": np.asarray(x, dtype=np.float32),
            "y": y.astype(np.float32),
            "text": text,
            "textfont": {"size": size, "color": [_ink(result, i) for i in idx.tolist()]},
            "hoverinfo": "skip",
        }
    ]


def _ink(result: PipelineResult, i: int) -> str:
    """Black or white, whichever reads on op i's box (its kind's colour, shaded by chunk)."""
    ops = result.ops
    kind = "F&B" if ops.overlapped[i] else "FBIW"[int(ops.kind[i])]
    return ink_on(shade(KIND_COLOURS[kind], int(ops.chunk[i]), result.num_chunks))


def _range_notes(result: PipelineResult, time_range_s: float | None = None) -> list[dict]:
    """ "a–b" over a run of narrow boxes, on a light tag so the boxes' edges do not cut it."""
    return [
        {
            "x": float(x),
            "y": int(result.ops.rank[i]),
            "xref": "x",
            "yref": "y",
            "text": text,
            "showarrow": False,
            "bgcolor": COLOURS["label_background"],
            "borderpad": 1,
            "font": {"color": COLOURS["ink"]},  # the figure's type size (larger when presenting)
        }
        for x, i, text in label_items(result, time_range_s)
        if "–" in text
    ]
