"""Primitives of the hand-made drawings (DP shards, TP MLP, pipeline flow): a rectangle, a label
and an arrow in data coordinates, as plain Plotly dicts. Colours by meaning from figures.style.
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


def label(x, y, text, *, size=12, colour=None, **extra) -> dict:
    """Text at (x, y) with no arrow, in ink unless told otherwise."""
    font = {"size": size, "color": colour or COLOURS["ink"]}
    return {"x": x, "y": y, "text": text, "showarrow": False, "font": font, **extra}


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
