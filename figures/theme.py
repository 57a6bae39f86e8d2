"""Presenter theme: big type, thick lines and a colour-blind-safe palette for any figure."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from typing import Any

from figures.presenter_layout import (
    HEIGHT_SCALE,
    SUBTITLE_CHARS,
    TITLE_PAD_PX,
    annotations_above_plot,
    legend_to_bottom,
    lines,
    readout_clear_of_buttons,
    top_margin,
    wrap,
    wrap_long_y_titles,
)
from figures.style import OKABE_ITO, PRESENTER_COLOURS

PRESENTER = {k.lower(): v for k, v in PRESENTER_COLOURS.items()}
CONTINUOUS = "Cividis"  # perceptually uniform and colour-blind safe (Nuñez et al. 2018)

_COLOR_KEYS = ("color", "fillcolor")


def _as_dict(fig: Any) -> dict:
    return copy.deepcopy(fig) if isinstance(fig, dict) else fig.to_plotly_json()


def _is_grey(v: str) -> bool:
    """#rrggbb with r = g = b: a neutral (idle, replicated, background) that every viewer tells
    apart.
    """
    if len(v) == 4 and v.startswith("#"):  # #abc = #aabbcc
        v = "#" + "".join(ch * 2 for ch in v[1:])
    return len(v) == 7 and v.startswith("#") and v[1:3].lower() == v[3:5].lower() == v[5:7].lower()


class _Palette:
    """One figure's colour mapping: semantic colours to their fixed projector colour
    (figures.style.PRESENTER_COLOURS), every other colour to the next Okabe-Ito colour that no
    semantic colour of this figure took.
    """

    def __init__(self, used: set[str]):
        taken = {PRESENTER[c.lower()] for c in used if c.lower() in PRESENTER}
        self.free = [c for c in OKABE_ITO if c not in taken] or OKABE_ITO
        self.mapping: dict[str, str] = {}

    def __getitem__(self, v: str) -> str:
        if _is_grey(v):
            return v
        if v.lower() in PRESENTER:
            return PRESENTER[v.lower()]
        if v not in self.mapping:
            self.mapping[v] = self.free[len(self.mapping) % len(self.free)]
        return self.mapping[v]


def _colours(obj: Any, out: set[str]) -> set[str]:
    """Every discrete colour string _remap would replace."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in _COLOR_KEYS and isinstance(v, str) and v.startswith(("#", "rgb")):
                out.add(v)
            elif k == "colorscale" and _is_steps(v):
                out.update(c for _, c in v)
            elif k != "colorscale":
                _colours(v, out)
    elif isinstance(obj, list):
        for item in obj:
            _colours(item, out)
    return out


def _is_steps(scale: Any) -> bool:
    """A discrete colour scale: [[p0, c], [p1, c], [p1, d], [p2, d], ...] (each colour as a flat
    step).
    """
    return (
        isinstance(scale, list)
        and len(scale) >= 2
        and len(scale) % 2 == 0
        and all(
            isinstance(e, (list, tuple)) and len(e) == 2 and isinstance(e[1], str) for e in scale
        )
        and all(scale[i][1] == scale[i + 1][1] for i in range(0, len(scale), 2))
    )


def _remap(obj: Any, mapping: _Palette) -> None:
    """Replace every discrete colour string in place, consistently (same colour in, same out)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in _COLOR_KEYS and isinstance(v, str) and v.startswith(("#", "rgb")):
                obj[k] = mapping[v]
            elif k == "colorscale" and _is_steps(v):
                # categories drawn as a heat map (e.g. "which GPU holds this cell"): keep them
                # categorical, with the same new colour as any legend marker of that category
                obj[k] = [[p, mapping[c]] for p, c in v]
            elif k == "colorscale":
                obj[k] = CONTINUOUS
            else:
                _remap(v, mapping)
    elif isinstance(obj, list):
        for item in obj:
            _remap(item, mapping)


def presenter(fig: Any, *, base_font_px: int = 20, height_px: int | None = None) -> dict:
    """A copy of a figure for projection: larger fonts, thicker lines, Okabe-Ito colours, 1.25×
    the height (of `height_px`, else the figure's own, else Plotly's 450 px) and room for the
    bigger text (figures.presenter_layout)."""
    spec = _as_dict(fig)
    traces = spec.get("data", []) + [t for f in spec.get("frames", []) for t in f.get("data", [])]
    mapping = _Palette(_colours(traces, set()))
    for trace in spec.get("data", []):
        _remap(trace, mapping)
        line = trace.get("line")
        if isinstance(line, dict) and isinstance(line.get("width", 2), (int, float)):
            line["width"] = max(3, line.get("width", 2) * 1.5)
        marker = trace.get("marker")
        if isinstance(marker, dict) and isinstance(marker.get("size"), (int, float)):
            marker["size"] = marker["size"] * 1.3
        if "textfont" in trace and isinstance(trace["textfont"], dict):
            trace["textfont"]["size"] = max(trace["textfont"].get("size", 12), base_font_px - 4)
    for frame in spec.get("frames", []):
        for trace in frame.get("data", []):
            _remap(trace, mapping)
    layout = spec.setdefault("layout", {})
    layout["font"] = {**layout.get("font", {}), "size": base_font_px}
    layout["height"] = int((height_px or layout.get("height") or 450) * HEIGHT_SCALE)
    title = layout.get("title")
    if isinstance(title, dict):
        title["font"] = {**title.get("font", {}), "size": base_font_px + 4}
        sub = title.get("subtitle")
        if isinstance(sub, dict) and sub.get("text"):  # fits a half-width chart
            title["subtitle"] = {**sub, "text": wrap(sub["text"], SUBTITLE_CHARS)}
    if isinstance(title, dict) or annotations_above_plot(layout):
        margin = layout.get("margin", {})
        layout["margin"] = {
            **margin,
            "t": max(margin.get("t", 100), top_margin(layout, base_font_px)),
        }
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            axis["tickfont"] = {**axis.get("tickfont", {}), "size": base_font_px - 2}
            if key.startswith("xaxis"):  # x labels clear the y labels at the plot's corner
                axis.setdefault("ticklabelstandoff", base_font_px // 2)
            axis["automargin"] = (
                True  # bigger tick labels must push the margin, not the title onto them
            )
            title = axis.get("title")
            if isinstance(title, dict) and isinstance(
                title.get("font"), dict
            ):  # a builder's fixed size
                title["font"] = {
                    **title["font"],
                    "size": max(title["font"].get("size", 0), base_font_px - 2),
                }
    legend = layout.get("legend")
    if isinstance(legend, dict) and isinstance(legend.get("font"), dict):
        legend["font"] = {
            **legend["font"],
            "size": max(legend["font"].get("size", 0), base_font_px - 4),
        }
    layout["height"] += legend_to_bottom(spec, base_font_px)  # the plot keeps its height
    wrap_long_y_titles(layout, base_font_px)
    readout_clear_of_buttons(layout)
    heading = layout.get("title")
    one_line = isinstance(heading, dict) and lines(str(heading.get("text") or "")) <= 1
    if one_line and "y" not in heading:  # top edge down, as top_margin counts
        heading.update(yref="container", yanchor="top", y=1 - TITLE_PAD_PX / layout["height"])
    layout["colorway"] = OKABE_ITO
    return spec


def ready(spec: dict) -> dict:
    """The spec as the chart component sends it (app_pages/common/plot.py): the builder's dict
    itself, never rebuilt into a validating go.Figure on a rerun (10-40 ms a chart; the ring
    animation's frames 38 ms); the figure tests validate every builder's spec once instead. A
    named template is expanded here, as plotly.js knows none by name."""
    layout = spec.get("layout", {})
    if isinstance(layout.get("template"), str):
        spec = {**spec, "layout": {**layout, "template": _template(layout["template"])}}
    return spec


def revised(spec: dict) -> dict:
    """The spec with `layout.datarevision` set to a digest of its traces (unless it has one).

    Why: the chart component redraws a chart in place with Plotly.react, given arrays freshly
    parsed from JSON. Without a datarevision Plotly treats every data array of a new identity as
    new data and redraws every trace; with an unchanged one it compares the rest and leaves the
    data as drawn ("datarevision": https://plotly.com/javascript/reference/layout/#layout-datarevision).
    Measured when Streamlit's own chart reacted twice per change, on the data-parallel page: the
    second draws 58/37/20 → 11/3.5/3.4 ms (docs/notes/plotly.md §2). A digest of the data, not a
    counter: the same figure keeps the same spec, so an unchanged chart is not redrawn, and any
    change to any trace changes it."""
    layout = spec.get("layout", {})
    if "datarevision" in layout:
        return spec
    raw = json.dumps(spec.get("data", []), default=_plain, separators=(",", ":"))
    digest = hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()
    return {**spec, "layout": {**layout, "datarevision": digest}}


def as_json(obj: dict) -> str:
    """A spec or a config as the JSON the chart component sends; numpy arrays allowed. Plotly's
    own encoder (orjson when installed, requirements.txt), without validation (see `ready`)."""
    import plotly.io as pio

    return pio.to_json(obj, validate=False)


def _plain(value: Any) -> Any:
    """numpy arrays and scalars as JSON (the whole array: a repr elides the middle)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot digest a {type(value).__name__} in a figure's data")


@functools.lru_cache(maxsize=8)
def _template(name: str) -> dict:
    import plotly.io as pio

    return pio.templates[name].to_plotly_json()
