"""Log axes of the collectives' cost charts: sizes in bytes, time, rank counts."""

from __future__ import annotations

import math

from core.units import format_bytes, format_seconds
from figures.style import decade_ticks, log_range, tick_array


def log_axis(title: str, lo: float, hi: float, **extra) -> dict:
    return {"title": {"text": title}, "type": "log", "range": log_range(lo, hi), **extra}


def bytes_ticks(lo: float, hi: float, byte_system: str) -> dict:
    """Tick positions at round sizes of the chosen byte system, labelled with units."""
    base = 1024.0 if byte_system == "binary" else 1000.0
    step = 32.0 if byte_system == "binary" else 10.0
    v = base ** math.floor(math.log(lo, base))
    vals = []
    while v <= hi * 1.0001:
        if v >= lo / 1.0001:
            vals.append(v)
        v *= step
    return tick_array(vals, lambda x: format_bytes(x, byte_system))


def time_axis(data: list[dict]) -> dict:
    """Log time axis with decade ticks labelled in s / ms / µs."""
    ys = [y for d in data for y in d["y"]]
    return {"title": {"text": "time"}, "type": "log", **decade_ticks(ys, format_seconds)}


def ranks_axis(counts) -> dict:
    return {"title": {"text": "ranks N"}, "type": "log", **tick_array(counts, str)}
