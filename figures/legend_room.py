"""Margins that already hold a chart's legend, so Plotly draws the chart once, not twice.

Why: when a legend outside the plot needs more room than the figure's margin, plotly.js widens
the margin and draws the whole chart again (plots.doAutoMargin → _doPlot, plotly/plotly.js
src/plots/plots.js). Streamlit 1.67 draws every changed chart from scratch, so on nearly every
page each slider move paid for two draws (e.g. the memory bars 39 → 15 ms, the DP loss curves
59 → 29 ms, plotly.min.js newPlot in Chromium on the 2-core machine; docs/notes/plotly.md §3).

How: estimate the legend's size from its entries' text (Arial's advance widths, the font Chromium
on Debian draws Plotly's default "Open Sans, verdana, arial" in) and plotly.js's legend geometry
(plotly/plotly.js src/components/legend/constants.js and src/components/legend/draw.js: a 40 px
symbol and gap before each text, 5 px between entries, 10 px padding, rows 19 px high at 12 px),
then set the margin to hold it. Too small an estimate only leaves Plotly's own widening in place;
the browser keeps it honest (tests/e2e/test_browser.py: no chart's margin widened at 1440 × 900).
"""

from __future__ import annotations

import re

# Arial advance widths in 1/1000 em (Liberation Sans has the same metrics); others: 556.
_WIDE = {" ": 278, "i": 222, "j": 222, "l": 222, "f": 278, "t": 278, "r": 333, "m": 833}
_WIDE |= {"w": 722, "c": 500, "k": 500, "s": 500, "v": 500, "x": 500, "y": 500, "z": 500}
_WIDE |= {".": 278, ",": 278, ":": 278, ";": 278, "/": 278, "·": 333, "(": 333, ")": 333}
_WIDE |= {"-": 333, "%": 889, "+": 584, "=": 584, "×": 584, "→": 1000, "I": 278, "J": 500}
_WIDE |= {c: 667 for c in "ABEKPSVXY"} | {c: 722 for c in "CDHNRU"} | {c: 778 for c in "GOQ"}
_WIDE |= {"F": 611, "T": 611, "Z": 611, "L": 556, "M": 833, "W": 944}

SYMBOL_PX, GAP_PX, PAD_PX = 40, 5, 10  # plotly.js legend constants (see above)
ROW = 19 / 12  # a row's height per px of font: 29, 48, 67 px for 1–3 rows at 12 px (measured)
PUSH_PX = 12  # what plotly.js adds under a legend it pushes the margin for (measured)
SLACK = 1.04  # text a little wider than the estimate wraps one entry early, never late


def text_px(text: str, font_px: float = 12) -> float:
    """Width of one line of legend text (tags dropped, the longest line of a <br> break)."""
    lines = re.split(r"<br\s*/?>", str(text))
    plain = [re.sub(r"<[^>]+>", "", ln) for ln in lines]
    return max(sum(_WIDE.get(c, 556) for c in ln) for ln in plain) * font_px / 1000 * SLACK


def _entries(spec: dict) -> list[str]:
    """The names the legend lists: one per trace it shows (a shared legendgroup still lists
    each trace whose showlegend is not false)."""
    return [
        str(t.get("name", ""))
        for t in spec.get("data", [])
        if t.get("showlegend") is not False and not _hidden(t)
    ]


def _hidden(trace: dict) -> bool:
    """Plotly leaves a trace out of the legend by default when it is alone or a pie/heatmap."""
    return trace.get("type") in ("heatmap", "pie", "table", "indicator", "sankey")


def _rows(widths: list[float], max_px: float) -> int:
    """plotly.js's horizontal legend: one row if every entry fits side by side, else a grid of
    equal columns as wide as the widest entry (plotly/plotly.js src/components/legend/draw.js,
    computeLegendDimensions)."""
    items = [SYMBOL_PX + w for w in widths]
    if sum(items) + GAP_PX * (len(items) - 1) < max_px:
        return 1
    cols = max(1, int((max_px + GAP_PX) // (max(items) + GAP_PX)))
    return -(-len(items) // cols)


def _grouped_rows(spec: dict) -> int:
    """Legend groups with titles sit side by side, each a column: its title, then its entries
    (0 when no trace has a group title: the entries flow in rows)."""
    shown = [t for t in spec.get("data", []) if t.get("showlegend") is not False]
    if not any(t.get("legendgrouptitle") for t in shown):
        return 0
    groups: dict[str, int] = {}
    for t in shown:
        groups[t.get("legendgroup", "")] = groups.get(t.get("legendgroup", ""), 0) + 1
    return 1 + max(groups.values())


def with_legend_room(spec: dict, width_px: int) -> dict:
    """The spec with its bottom (legend below the plot) or right (legend right of it) margin
    grown to hold its legend at `width_px` (the chart's width on the page); else unchanged."""
    layout = spec.get("layout", {})
    legend, names = layout.get("legend") or {}, _entries(spec)
    if layout.get("showlegend") is False or len(names) < 2 and layout.get("showlegend") is None:
        return spec
    if not names or legend.get("xref") == "container" or legend.get("yref") == "container":
        return spec
    font = (legend.get("font") or {}).get("size") or (layout.get("font") or {}).get("size") or 12
    margin = {"l": 80, "r": 80, "t": 100, "b": 80} | (layout.get("margin") or {})
    widths = [text_px(n, font) for n in names]
    row_px = font * ROW  # an entry's height: its text line and the gap under it
    x, y = legend.get("x", 1.02), legend.get("y", 1)
    if legend.get("orientation") == "h" and y < 0:
        plot_w = width_px - margin["l"] - margin["r"]
        breaks = sum(len(re.findall(r"<br\s*/?>", n)) for n in names)  # a 2-line entry's row
        rows = _grouped_rows(spec) or _rows(widths, plot_w)
        tall = rows * row_px + breaks * font * 1.3 + PAD_PX + PUSH_PX
        h, k = layout.get("height", 450), -y  # y is in plot heights: solve for the new bottom
        need = (k * (h - margin["t"]) + tall) / (1 + k)
        if need > margin["b"]:
            margin["b"] = int(need) + 2
            return {**spec, "layout": {**layout, "margin": margin}}
    elif legend.get("orientation", "v") == "v" and x >= 1:
        plot_w = width_px - margin["l"] - margin["r"]
        wide = (x - 1) * plot_w + SYMBOL_PX + max(widths) + 2 * PAD_PX
        if wide > margin["r"]:
            margin["r"] = int(wide) + 2
            return {**spec, "layout": {**layout, "margin": margin}}
    return spec
