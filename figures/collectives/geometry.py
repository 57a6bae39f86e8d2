"""Ring geometry: positions on the circle, and the clockwise arcs of one step's transfers."""

from __future__ import annotations

import math

import numpy as np


def polar(radius, angle):
    return radius * np.cos(angle), radius * np.sin(angle)


def _arc_points(n: int) -> int:
    return max(3, 36 // n)  # enough points that a long arc (small N) still looks round


def ring_arcs(step, n: int, radii: np.ndarray) -> tuple[dict, dict]:
    """Clockwise arcs from each sender's chunk cell to the receiver's, and an arrowhead at each
    end.
    """
    xs, ys, hx, hy, angle = [], [], [], [], []
    for s, d, c in zip(step.src.tolist(), step.dst.tolist(), step.chunk.tolist()):
        a0, a1 = math.pi / 2 - 2 * math.pi * s / n, math.pi / 2 - 2 * math.pi * d / n
        a1 = a1 if a1 < a0 else a1 - 2 * math.pi
        t = np.linspace(a0 + 0.18 * (a1 - a0), a1 - 0.18 * (a1 - a0), _arc_points(n))
        x, y = polar(radii[c], t)
        xs += np.round(x, 3).tolist() + [None]
        ys += np.round(y, 3).tolist() + [None]
        hx.append(round(float(x[-1]), 3))
        hy.append(round(float(y[-1]), 3))
        # Plotly marker angles are degrees clockwise from "up"; the head follows the arc's tangent.
        angle.append(round(math.degrees(math.atan2(math.sin(t[-1]), -math.cos(t[-1])))))
    return {"x": xs, "y": ys}, {"x": hx, "y": hy, "marker": {"angle": angle}}
