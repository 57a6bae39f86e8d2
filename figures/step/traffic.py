"""Traffic arrows of a step drawing: one trace per kind of traffic, an arrow per link it uses
between drawn GPUs (TP rings inside the TP group, K/V around each CP ring, every pair of an EP
group, sends between neighbouring stages, DP rings across replicas), coloured as the planner's
step-time breakdown colours the same communication.
"""

from __future__ import annotations

import math

from core.stepplan import Drawn, Phase, links
from figures.step.grid import Geometry
from figures.style import COLOURS

# Every kind of traffic, in the fixed order of the figure's traces; colour and dash per kind.
KINDS = {
    "tp": (COLOURS["exposed"], "solid"),
    "cp_ring": (COLOURS["cp_kv"], "solid"),
    "ep_all_to_all": (COLOURS["ep_all_to_all"], "solid"),
    "pp_forward": (COLOURS["exposed_p2p"], "solid"),
    "pp_backward": (COLOURS["exposed_p2p"], "dot"),
    "zero3_gather": (COLOURS["zero_gather"], "solid"),
    "zero3_scatter": (COLOURS["zero_gather"], "dot"),
    "dp_all_reduce": (COLOURS["exposed_dp"], "solid"),
    "dp_reduce_scatter": (COLOURS["exposed_dp"], "dot"),
    "dp_all_gather": (COLOURS["exposed_dp"], "dash"),
}
INSET = 0.4  # an arrow starts and ends this far from the cell centres (in the gap between cells)
SIDE = 0.09  # and runs this far to the right of the centre line, so A→B and B→A stay apart


def _arrow(a: tuple[float, float], b: tuple[float, float]) -> tuple[list, list]:
    (xa, ya), (xb, yb) = a, b
    dx, dy = xb - xa, yb - ya
    n = math.hypot(dx, dy) or 1.0
    ux, uy = dx / n, dy / n
    ox, oy = uy * SIDE, -ux * SIDE  # to the right of the direction of travel
    inset = min(INSET, n / 3)
    return (
        [round(xa + ux * inset + ox, 3), round(xb - ux * inset + ox, 3), None],
        [round(ya + uy * inset + oy, 3), round(yb - uy * inset + oy, 3), None],
    )


def traffic_traces(
    geo: Geometry, placement, drawn: Drawn, phase: Phase, names: dict[str, str]
) -> list[dict]:
    """One trace per kind in KINDS order: arrows on the links the phase's traffic uses."""
    active = {t.kind for t in phase.traffic}
    out = []
    for kind, (colour, dash) in KINDS.items():
        xs, ys, size = [], [], []
        if kind in active:
            for a, b in links(placement, kind, drawn):
                px, py = _arrow(geo.centres[a], geo.centres[b])
                xs += px
                ys += py
                size += [0, 9, 0]
        out.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": xs,
                "y": ys,
                "name": names[kind],
                "legendgroup": kind,
                "line": {"color": colour, "width": 1.6, "dash": dash},
                "marker": {
                    "symbol": "arrow",
                    "angleref": "previous",
                    "size": size,
                    "color": colour,
                },
                "hoverinfo": "name",
                "visible": True if xs else "legendonly",
            }
        )
    return out
