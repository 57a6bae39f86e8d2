"""Which rank computes which attention block at which ring step, and the per-rank Gantt that
follows (plain dict specs)."""

from __future__ import annotations

from core.context_parallel import BalanceResult, gantt_blocks
from figures.style import COLOURS, RANK_COLOURS, margin

LAYOUT_NAMES = {"contiguous": "contiguous chunks", "zigzag": "zig-zag chunks"}


def rank_colour(r: int) -> str:
    return RANK_COLOURS[r % len(RANK_COLOURS)]


def _discrete(n: int) -> list:
    """A stepped colourscale: value r (0 … n−1) in rank r's colour."""
    scale = []
    for r in range(n):
        lo, hi = r / n, (r + 1) / n
        scale += [[lo, rank_colour(r)], [hi, rank_colour(r)]]
    return scale


def block_grid_figure(rank, step, *, cp: int, layout: str, causal: bool) -> dict:
    """2C × 2C chunk pairs: colour = the rank that computes the block, text = its ring step."""
    n = len(rank)
    z = [[None if v < 0 else int(v) for v in row] for row in rank]
    text = [[("" if v < 0 else f"t{int(v)}") for v in row] for row in step]
    labels = [f"c{i}" for i in range(n)]
    owner = [int(max(row)) if max(row) >= 0 else 0 for row in rank]  # rank of each query chunk
    ticks = [f"c{i} · r{owner[i]}" for i in range(n)]
    return {
        "data": [
            {
                "type": "heatmap",
                "z": z,
                "x": labels,
                "y": ticks,
                "text": text,
                "texttemplate": "%{text}",
                "colorscale": _discrete(cp),
                "zmin": -0.5,
                "zmax": cp - 0.5,
                "showscale": False,
                "xgap": 2,
                "ygap": 2,
                "hovertemplate": "query %{y}, keys %{x}: rank %{z}, step %{text}<extra></extra>",
            }
        ],
        "layout": {
            "title": {
                "text": f"Context parallel · CP={cp} · {LAYOUT_NAMES[layout]}",
                "subtitle": {
                    "text": "who computes each block: colour = the rank, t = the ring step"
                    # its own line: one line overflows a half-width chart at 1440 px
                    + (";<br>blank: hidden by the causal mask" if causal else "")
                },
            },
            "xaxis": {"title": {"text": "key / value chunk"}},
            "yaxis": {"title": {"text": "query chunk · rank"}, "autorange": "reversed"},
            "plot_bgcolor": COLOURS["idle"],
            "height": 420,
            "margin": margin(l=90, t=90, b=50),
        },
    }


# The Gantt's panels stacked in pixels: a row per rank, and between two panels room for the upper
# panel's time ticks and the lower panel's label (presenter mode enlarges the chart with its text).
ROW_PX, GAP_PX, TOP_PX, BOTTOM_PX = 34, 76, 90, 50


def gantt_figure(results: list[BalanceResult]) -> dict:
    """One panel per layout: each rank's blocks per ring step; a step ends with its slowest rank."""
    traces, layout, k = [], {}, len(results)
    seen = set()
    panel_px = ROW_PX * results[0].cp
    plot_px = k * panel_px + (k - 1) * GAP_PX
    unit = max(results[0].step_pairs[0], 1)  # time in units of the first layout's step 0
    for i, res in enumerate(results):
        ax = "" if i == 0 else str(i + 1)
        by_source: dict[int, list[dict]] = {}
        for blk in gantt_blocks(res, pairs_per_s=unit):  # one trace per K/V source: few traces
            by_source.setdefault(blk["source"], []).append(blk)
        for src, blks in sorted(by_source.items()):
            traces.append(
                {
                    "type": "bar",
                    "orientation": "h",
                    "base": [b["start_s"] for b in blks],
                    "x": [b["duration_s"] for b in blks],
                    "y": [f"rank {b['rank']}" for b in blks],
                    "customdata": [[b["step"], b["pairs"]] for b in blks],
                    "name": f"K/V of rank {src}",
                    "legendgroup": f"kv{src}",
                    "showlegend": src not in seen,
                    "marker": {
                        "color": rank_colour(src),
                        "line": {"width": 1, "color": COLOURS["paper"]},
                    },
                    "xaxis": f"x{ax}",
                    "yaxis": f"y{ax}",
                    "hovertemplate": "step %{customdata[0]}: %{customdata[1]:,} query-key "
                    "pairs<extra>%{y}</extra>",
                }
            )
            seen.add(src)
        top = 1 - i * (panel_px + GAP_PX) / plot_px
        layout[f"yaxis{ax}"] = {
            "domain": [max(top - panel_px / plot_px, 0.0), top],
            "autorange": "reversed",
            "anchor": f"x{ax}",
        }
        layout[f"xaxis{ax}"] = {
            "anchor": f"y{ax}",
            "title": {
                "text": "time (in units of step 0: the diagonal block pair)" if i == k - 1 else ""
            },
            "matches": "x" if i else None,
        }
        layout.setdefault("annotations", []).append(
            {
                "text": f"<b>{LAYOUT_NAMES[res.layout]}</b>: idle {res.idle_share:.0%} of "
                f"rank-time, {res.critical_pairs / res.balanced_pairs:.2f}× the balanced time",
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "y": top,
                "xanchor": "left",
                "yanchor": "bottom",
                "showarrow": False,
            }
        )
    for key in list(layout):
        if key.startswith("xaxis") and layout[key]["matches"] is None:
            del layout[key]["matches"]
    cp = results[0].cp
    return {
        "data": traces,
        "layout": {
            **layout,
            "title": {
                "text": f"Context parallel · CP={cp} · causal work per rank and ring step",
                "subtitle": {"text": "each step waits for the slowest rank (the next K/V block)"},
            },
            "barmode": "overlay",
            "plot_bgcolor": COLOURS["idle"],
            "showlegend": True,
            "legend": {"orientation": "v", "x": 1.01, "y": 1},
            "height": plot_px + TOP_PX + BOTTOM_PX,
            "margin": margin(l=70, t=TOP_PX, b=BOTTOM_PX, r=140),
        },
    }
