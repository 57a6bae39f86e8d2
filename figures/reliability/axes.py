"""What the reliability charts share: log time axes at round durations, and the layout."""

from __future__ import annotations

from core.units import format_seconds
from figures.style import bottom_legend

# Candidate tick positions (seconds) for log time axes, labelled by units.format_seconds.
_TICKS_S = [
    1,
    2,
    5,
    10,
    20,
    30,
    60,
    120,
    300,
    600,
    900,
    1200,
    1800,
    3600,
    7200,
    10800,
    14400,
    21600,
    28800,
    43200,
    86400,
    172800,
    259200,
    604800,
    1209600,
    2592000,
]


def time_axis(title: str, lo_s: float, hi_s: float) -> dict:
    ticks = [t for t in _TICKS_S if lo_s <= t <= hi_s]
    while len(ticks) > 8:
        ticks = ticks[::2]
    return {
        "title": {"text": title},
        "type": "log",
        "tickvals": ticks,
        "ticktext": [format_seconds(t) for t in ticks],
    }


def base_layout(title: str, sub: str = "", **extra) -> dict:
    """A title and its subtitle as the other pages draw theirs (centred, Plotly.js's default
    template, `title.subtitle` that presenter mode wraps): issue 15 found this page's differing."""
    heading = {"text": title} | ({"subtitle": {"text": sub}} if sub else {})
    return {
        "title": heading,
        "hovermode": "closest",
        "legend": bottom_legend(),
        "margin": {"t": 70},
        **extra,
    }
