"""Presenter mode's layout rules: room for bigger text so no two text boxes of a chart overlap at
1280×720 (measured by tests/e2e/test_presenter_browser.py from Plotly's SVG boxes).

figures.theme.presenter calls these after it enlarges the fonts:
- subtitles wrap to a width that fits a half-width chart (two charts side by side);
- the top margin holds the title, every subtitle line and a row of annotations drawn just above the
  plot (e.g. "latency-bound ◀ ▶ bandwidth-bound"), so they never print over the subtitle;
- a horizontal legend, above or below the plot, moves to the figure's bottom edge, and the figure
  grows by the room it takes, so the plot keeps its height;
- a y-axis title longer than its plot is tall wraps onto two lines instead of running into the
  subtitle;
- an animation slider's "step: …" readout moves to the slider's right end, clear of the bigger
  Play / Pause buttons at its left.
Text widths are estimated at 0.55 em per character (a sans-serif average), not measured.
"""

from __future__ import annotations

import re

CHAR_EM = 0.55  # average advance of a sans-serif character, in em
SUBTITLE_CHARS = 52  # ≈ 515 px at 18 px: a half-width chart at 1280 px with its margins
HEIGHT_SCALE = 1.25  # presenter charts are this much taller than on a laptop
TITLE_PAD_PX = 10  # the title hangs this far below the chart's top edge
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def wrap(text: str, width: int) -> str:
    """Each <br>-separated line wrapped to ≤ width characters, breaking after a "; " or " · "
    separator where one fits, else at a space (a longer word stays whole); tags have no width."""
    out = []
    for line in _BREAK.split(text):
        current = ""
        for part in re.split(r"(?<=; )|(?<= · )", line):
            candidate = current + part
            if not current or _visible(candidate.rstrip()) <= width:
                current = candidate
                continue
            out.extend(_wrap_words(current.rstrip(), width))
            current = part
        out.extend(_wrap_words(current.rstrip(), width))
    return "<br>".join(out)


def _wrap_words(line: str, width: int) -> list[str]:
    out, current = [], ""
    for word in line.split(" "):
        candidate = f"{current} {word}" if current else word
        if current and _visible(candidate) > width:
            out.append(current)
            current = word
        else:
            current = candidate
    return [*out, current]


def _visible(text: str) -> int:
    return len(re.sub(r"<[^>]+>", "", text))


def lines(text: str) -> int:
    return len(_BREAK.split(text)) if text else 0


def annotations_above_plot(layout: dict) -> int:
    """How many annotations sit just above the plot area (paper y ≥ 1, anchored at their
    bottom)."""
    return sum(
        1
        for a in layout.get("annotations") or []
        if isinstance(a, dict)
        and str(a.get("yref", "y")).startswith("paper")
        and isinstance(a.get("y"), (int, float))
        and a["y"] >= 1
        and a.get("yanchor", "auto") in ("bottom", "auto")
    )


def top_margin(layout: dict, base_font_px: int) -> int:
    """Room above the plot: the title, each subtitle line, one row for annotations above the
    plot."""
    title = layout.get("title") if isinstance(layout.get("title"), dict) else {}
    has_title = bool(title.get("text"))
    sub = (title.get("subtitle") or {}).get("text") or ""
    # measured in Chromium at 20 px: a title line 27 px, 12 px to the subtitle, 20.5 px a line;
    # a title's own extra lines (the "<br><sup>" style) 1.3 × its font each
    title_lines = lines(str(title.get("text") or "")) if has_title else 0
    need = TITLE_PAD_PX
    if has_title:
        need += 2 * base_font_px + (title_lines - 1) * 1.3 * (base_font_px + 4)
    need += lines(sub) * 1.2 * (base_font_px - 2) + 16
    if annotations_above_plot(layout):
        need += 1.5 * base_font_px
    return int(need)


def legend_to_bottom(spec: dict, base_font_px: int) -> int:
    """A horizontal legend above or under the plot moves to the figure's bottom edge, with room
    reserved under the x-axis title; returns how many px the bottom margin grew."""
    layout = spec["layout"]
    legend = layout.get("legend")
    if not (
        isinstance(legend, dict)
        and legend.get("orientation") == "h"
        and isinstance(legend.get("y"), (int, float))
        and (legend["y"] < 0 or legend["y"] >= 1)
    ):
        return 0
    entries = sum(
        1 for t in spec.get("data", []) if t.get("showlegend", True) is not False and t.get("name")
    )
    rows = max(1, -(-entries // 3))  # about three entries fit a row at presenter size
    kept = {k: v for k, v in legend.items() if k not in ("x", "xanchor", "y", "yanchor", "yref")}
    layout["legend"] = {**kept, "yref": "container", "y": 0, "yanchor": "bottom"}
    margin = layout.get("margin", {})
    before = margin.get("b", 80)
    after = max(before, 3 * base_font_px + 2 + rows * int(1.6 * base_font_px) + 30)
    layout["margin"] = {**margin, "b": after}
    return after - before


def wrap_long_y_titles(layout: dict, base_font_px: int) -> None:
    """A y-axis title longer than its plot is tall goes onto two lines (split at the middle
    space)."""
    margin = layout.get("margin", {})
    plot_px = layout.get("height", 450) - margin.get("t", 100) - margin.get("b", 80)
    for key, axis in layout.items():
        if not (key.startswith("yaxis") and isinstance(axis, dict)):
            continue
        title = axis.get("title")
        text = title.get("text") if isinstance(title, dict) else None
        if not isinstance(text, str) or lines(text) > 1 or " " not in text:
            continue
        size = (title.get("font") or {}).get("size", base_font_px)
        lo, hi = (axis.get("domain") or [0, 1])[:2]
        if _visible(text) * CHAR_EM * size <= 0.95 * plot_px * (hi - lo):
            continue
        middle = len(text) / 2
        cut = min((i for i, ch in enumerate(text) if ch == " "), key=lambda i: abs(i - middle))
        title["text"] = text[:cut] + "<br>" + text[cut + 1 :]


def readout_clear_of_buttons(layout: dict) -> None:
    """With Play / Pause buttons (updatemenus), each slider's current-value readout sits at the
    slider's right end (the buttons sit at the left, and grow at presenter size)."""
    if not layout.get("updatemenus"):
        return
    layout["sliders"] = [
        {**s, "currentvalue": {**(s.get("currentvalue") or {}), "xanchor": "right"}}
        if isinstance(s, dict)
        else s
        for s in layout.get("sliders") or []
    ]
