"""The Gantt as a heat-map raster, for schedules with more ops than bars draw quickly."""

from __future__ import annotations

import numpy as np

from core.pipeline import PipelineResult
from figures.pipeline.frame import KIND_NAMES, gantt_layout
from figures.style import COLOURS, KIND_COLOURS, shade

RASTER_COLUMNS = 1200


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
    colors = [COLOURS["idle"]] + [
        shade(KIND_COLOURS[k], c, v) for k in KIND_COLOURS for c in range(v)
    ]
    return code.astype(np.int8), colors


def gantt_raster_figure(
    result: PipelineResult,
    *,
    title: str | None = None,
    columns: int = RASTER_COLUMNS,
    time_range_s: float | None = None,
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
            "marker": {"color": KIND_COLOURS[k], "symbol": "square", "size": 10},
            "name": f"{k} ({KIND_NAMES[k]})",
        }
        for k in KIND_COLOURS
        if k in present
    ]
    layout = gantt_layout(result, title, time_range_s)
    layout["title"]["subtitle"]["text"] += f" · raster of {len(result.ops):,} ops"
    return {"data": [heat, *legend], "layout": layout}
