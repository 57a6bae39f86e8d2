"""Primitives of the hand-made drawings (DP shards, TP MLP, pipeline flow): a rectangle, a label
and an arrow in data coordinates, as plain Plotly dicts. Colours by meaning from figures.style.

A label has no font size of its own unless told: it inherits the figure's `layout.font.size`
(`TEXT_PX` on a laptop; figures.theme.presenter sets 20 px for the projector), so a drawing's text
grows with presenter mode like its title and axes do. Emphasis stays relative: `big(text)` draws
text 1.3× the figure's size (an SVG tspan font-size in %, which Plotly passes through).
"""

from __future__ import annotations

from figures.style import COLOURS


def rect(x0, x1, y0, y1, *, fill, line=None, width=1.0, dash=None) -> dict:
    """A filled rectangle below the traces; its outline `line` (default: the fill) `width` px."""
    return {
        "type": "rect",
        "x0": x0,
        "x1": x1,
        "y0": y0,
        "y1": y1,
        "fillcolor": fill,
        "line": {"color": line or fill, "width": width, **({"dash": dash} if dash else {})},
        "layer": "below",
    }


TEXT_PX = 12  # a drawing's text size on a laptop: its layout.font.size


def label(x, y, text, *, size=None, colour=None, **extra) -> dict:
    """Text at (x, y) with no arrow, in ink unless told otherwise; at the figure's font size
    unless `size` (px) fixes it (a fixed size does not grow in presenter mode)."""
    font = {"color": colour or COLOURS["ink"], **({"size": size} if size else {})}
    return {"x": x, "y": y, "text": text, "showarrow": False, "font": font, **extra}


def big(text: str, percent: int = 130) -> str:
    """Text `percent` % of the figure's font size: emphasis that scales with presenter mode."""
    return f'<span style="font-size:{percent}%">{text}</span>'


def font() -> dict:
    """A drawing's layout.font: the size its labels inherit (presenter mode enlarges it)."""
    return {"size": TEXT_PX}


def arrow(x0, y0, x1, y1, *, width=1.2, size=1.0) -> dict:
    """An arrow from (x0, y0) to (x1, y1) in data coordinates, in the guide colour."""
    return {
        "x": x1,
        "y": y1,
        "ax": x0,
        "ay": y0,
        "xref": "x",
        "yref": "y",
        "axref": "x",
        "ayref": "y",
        "text": "",
        "showarrow": True,
        "arrowhead": 2,
        "arrowsize": size,
        "arrowwidth": width,
        "arrowcolor": COLOURS["guide"],
    }
