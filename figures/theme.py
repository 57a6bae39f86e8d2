"""Presenter theme: big type, thick lines and a colour-blind-safe palette for any figure."""
from __future__ import annotations

import copy
from typing import Any

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision
# deficiencies and on washed-out projectors. Black first is skipped (used for text and lines).
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
CONTINUOUS = "Cividis"  # perceptually uniform and colour-blind safe (Nuñez et al. 2018)

_COLOR_KEYS = ("color", "fillcolor")


def _as_dict(fig: Any) -> dict:
    return copy.deepcopy(fig) if isinstance(fig, dict) else fig.to_plotly_json()


def _remap(obj: Any, mapping: dict[str, str]) -> None:
    """Replace every discrete colour string in place, consistently (same colour in, same out)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in _COLOR_KEYS and isinstance(v, str) and v.startswith(("#", "rgb")):
                if v not in mapping:
                    mapping[v] = OKABE_ITO[len(mapping) % len(OKABE_ITO)]
                obj[k] = mapping[v]
            elif k == "colorscale" and not (isinstance(v, list) and len(v) == 2 and
                                             v[0][1] == v[1][1]):
                obj[k] = CONTINUOUS
            else:
                _remap(v, mapping)
    elif isinstance(obj, list):
        for item in obj:
            _remap(item, mapping)


def presenter(fig: Any, *, base_font_px: int = 20) -> dict:
    """A copy of a figure for projection: larger fonts, thicker lines, Okabe-Ito colours."""
    spec = _as_dict(fig)
    mapping: dict[str, str] = {}
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
    title = layout.get("title")
    if isinstance(title, dict):
        title["font"] = {**title.get("font", {}), "size": base_font_px + 4}
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            axis["tickfont"] = {**axis.get("tickfont", {}), "size": base_font_px - 2}
    layout["colorway"] = OKABE_ITO
    return spec


def unvalidated(spec: dict):
    """A go.Figure of a plain-dict spec, skipping plotly's per-property validation (same JSON).

    st.plotly_chart validates a dict by building go.Figure(spec) on every rerun (10-25 ms per chart);
    figure tests validate every builder's spec once instead. A named template is expanded as
    validation would do it.
    """
    import plotly.graph_objects as go
    import plotly.io as pio

    layout = dict(spec.get("layout", {}))
    if isinstance(layout.get("template"), str):
        layout["template"] = pio.templates[layout["template"]].to_plotly_json()
    return go.Figure({**spec, "layout": layout}, _validate=False)
