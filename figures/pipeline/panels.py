"""Two single-plot figures as one figure with two subplots and one shared legend."""

from __future__ import annotations

from figures.style import COLOURS, bottom_legend, margin


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
    lay["legend"] = bottom_legend(-0.18, x=0, xanchor="left", yanchor="top", font={"size": 11})
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
                "font": {"size": 15, "color": COLOURS["title"]},
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
                    "font": {"size": 11, "color": COLOURS["subtitle"]},
                }
            ]
            if sub
            else []
        )
    for key in ("barmode", "bargap"):
        if key in right_lay:
            lay[key] = right_lay[key]
    lay.update(annotations=notes, margin=margin(t=70))
    return out
