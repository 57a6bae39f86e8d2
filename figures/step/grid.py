"""The GPU grid of a step drawing: nodes as boxes, GPU cells inside, and in each cell four bars —
parameters, gradients, optimizer state, activations — filled by the share of the unsharded amount
the GPU holds (solid: replicated, hatched: a ZeRO shard), greyed when the GPU waits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.parallel import Placement
from core.stepplan import Drawn, Phase
from figures.style import COLOURS

CELL, PITCH, PAD, GAP, LABEL = 1.0, 1.22, 0.18, 0.5, 0.45  # units: one GPU cell is 1 x 1
TRACK = (-0.42, 0.42)  # a bar's x extent around the cell centre
ROWS = {"parameters": 0.36, "gradients": 0.19, "optimizer": 0.02, "activations": -0.15}  # bar y
HALF = 0.065  # half a bar's height
LABEL_Y = -0.36  # the GPU's stage label, under its bars
PARTS = ("parameters", "gradients", "optimizer")
IDLE_BELOW = 0.5 - 1e-9  # a GPU computing less than half the phase is drawn as waiting


@dataclass(frozen=True, kw_only=True)
class Geometry:
    centres: dict[int, tuple[float, float]]  # drawn rank -> its cell centre
    boxes: tuple[tuple[int, float, float, float, float], ...]  # node, x0, y0, x1, y1
    others: tuple[tuple[float, float], ...]  # cells of GPUs in drawn nodes that are not drawn
    x_range: tuple[float, float]
    y_range: tuple[float, float]


def grid_shape(gpus_per_node: int) -> tuple[int, int]:
    """(columns, rows) of GPU cells in a node box: 8 GPUs as 4 x 2."""
    g = gpus_per_node
    cols = g if g <= 4 else (math.ceil(g / 2) if g <= 16 else math.ceil(math.sqrt(g)))
    return cols, math.ceil(g / cols)


def geometry(placement: Placement, drawn: Drawn) -> Geometry:
    gpn = placement.cluster.gpus_per_node
    cols, rows = grid_shape(gpn)
    per_row = min(len(drawn.nodes), 4 if cols <= 4 else 2)
    w = cols * PITCH - (PITCH - CELL) + 2 * PAD
    h = rows * PITCH - (PITCH - CELL) + 2 * PAD
    shown, centres, boxes, others = set(drawn.ranks), {}, [], []
    for i, node in enumerate(drawn.nodes):
        nx, ny = (i % per_row) * (w + GAP), -(i // per_row) * (h + GAP + LABEL)
        boxes.append((node, nx, ny - h, nx + w, ny))
        for g in range(gpn):
            c = (
                nx + PAD + (g % cols) * PITCH + CELL / 2,
                ny - PAD - (g // cols) * PITCH - CELL / 2,
            )
            if node * gpn + g in shown:
                centres[node * gpn + g] = c
            else:
                others.append(c)
    bottom = min(b[2] for b in boxes)
    right = max(b[3] for b in boxes)
    return Geometry(
        centres=centres,
        boxes=tuple(boxes),
        others=tuple(others),
        x_range=(-0.2, right + 0.2),
        y_range=(bottom - 0.2, LABEL + 0.1),
    )


def rect(x0: float, x1: float, y0: float, y1: float) -> tuple[list, list]:
    """A closed rectangle as a polygon, None-terminated (many per scatter trace)."""
    x0, x1, y0, y1 = (round(v, 3) for v in (x0, x1, y0, y1))
    return [x0, x1, x1, x0, x0, None], [y0, y0, y1, y1, y0, None]


def _poly(xs: list, ys: list, name: str, colour: str, **extra) -> dict:
    return {
        "type": "scatter",
        "mode": "none",
        "x": xs,
        "y": ys,
        "fill": "toself",
        "fillcolor": colour,
        "name": name,
        "hoverinfo": "skip",
        **extra,
    }


def tracks(geo: Geometry, name: str) -> dict:
    """The outline of every bar: the unsharded amount it would hold (static)."""
    xs, ys = [], []
    for cx, cy in geo.centres.values():
        for y in ROWS.values():
            px, py = rect(cx + TRACK[0], cx + TRACK[1], cy + y - HALF, cy + y + HALF)
            xs += px
            ys += py
    line = {"color": COLOURS["guide"], "width": 0.6}
    return {"type": "scatter", "mode": "lines", "x": xs, "y": ys, "line": line,
            "hoverinfo": "skip", "name": name}  # fmt: skip


def stage_labels(geo: Geometry, placement: Placement) -> dict:
    """Static: each GPU's pipeline stage under its bars (its node's label names the replica)."""
    stage = placement.coord("pp")
    ranks = list(geo.centres)
    return {
        "type": "scatter",
        "mode": "text",
        "x": [geo.centres[r][0] for r in ranks],
        "y": [geo.centres[r][1] + LABEL_Y for r in ranks],
        "text": [f"s{int(stage[r])}" for r in ranks],
        "textfont": {"size": 9, "color": COLOURS["subtitle"]},
        "hoverinfo": "skip",
        "showlegend": False,
    }


def placeholders(geo: Geometry) -> dict:
    """GPUs of a drawn node that the picture leaves out (bigger jobs)."""
    xs, ys = [], []
    for cx, cy in geo.others:
        px, py = rect(cx - 0.5, cx + 0.5, cy - 0.5, cy + 0.5)
        xs += px
        ys += py
    return _poly(xs, ys, "not drawn", COLOURS["replicated"], showlegend=False)


def fills(geo: Geometry, placement: Placement, phase: Phase, names: dict[str, str]) -> list[dict]:
    """Seven traces: parameters / gradients / optimizer solid (replicated), the same hatched
    (sharded), activations; each bar filled by held ÷ unsharded bytes; `names` by key, as
    figures.step.legend.names gives them.

    Every trace holds one rectangle per drawn GPU in every phase, a bar it does not draw being a
    zero-width one at the track's left end: Plotly.animate interpolates a trace point by point
    only when its point count stays the same, so the step page's phase glide (open_at) grows and
    shrinks these bars instead of jumping them.
    """
    stage = placement.coord("pp")
    solid = {p: ([], []) for p in PARTS}
    hatched = {p: ([], []) for p in PARTS}
    acts: tuple[list, list] = ([], [])
    width = TRACK[1] - TRACK[0]

    def bar(into: tuple[list, list], cx: float, y: float, share: float) -> None:
        left = cx + TRACK[0]
        px, py = rect(left, left + width * share, y - HALF, y + HALF)
        into[0].extend(px)
        into[1].extend(py)

    for r, (cx, cy) in geo.centres.items():
        h = phase.holdings[int(stage[r])]
        for part in PARTS:
            held, full = getattr(h, f"{part}_bytes"), getattr(h, f"full_{part}_bytes")
            share = 0.0
            if full > 0 and (part != "gradients" or h.gradients_live):
                share = min(1.0, held / full)
            shard = 0.0 < share < 1 - 1e-9
            bar(hatched[part], cx, cy + ROWS[part], share if shard else 0.0)
            bar(solid[part], cx, cy + ROWS[part], 0.0 if shard else share)
        peak = h.peak_activations_bytes
        share = min(1.0, h.activations_bytes / peak) if peak > 0 else 0.0
        bar(acts, cx, cy + ROWS["activations"], share)
    out = [_poly(*solid[p], names[p], COLOURS[p], legendgroup=p) for p in PARTS]
    out += [
        _poly(
            *hatched[p],
            names[f"{p}_sharded"],
            COLOURS[p],
            legendgroup=p,
            fillpattern={"shape": "/", "solidity": 0.45},
        )
        for p in PARTS
    ]
    out.append(_poly(*acts, names["activations"], COLOURS["activations"]))
    return out


def draws(trace: dict) -> bool:
    """Whether a trace draws anything: points, and for a filled trace a polygon wider than 0 (the
    zero-width bars fills() keeps for the glide draw nothing)."""
    xs = trace.get("x") or []
    if trace.get("fill") != "toself":
        return bool(xs)
    polygon: list = []
    for x in [*xs, None]:
        if x is not None:
            polygon.append(x)
        elif polygon:
            if max(polygon) > min(polygon):
                return True
            polygon = []
    return False


def idle(geo: Geometry, placement: Placement, phase: Phase, waiting: str) -> list[dict]:
    """A grey veil and a label over every GPU that computes less than half of a timed phase."""
    stage = placement.coord("pp")
    xs, ys, tx, ty, text = [], [], [], [], []
    if phase.busy and phase.duration_s > 0:
        for r, (cx, cy) in geo.centres.items():
            busy = phase.busy[int(stage[r])]
            if busy < IDLE_BELOW:
                px, py = rect(cx - 0.5, cx + 0.5, cy - 0.5, cy + 0.5)
                xs += px
                ys += py
                tx.append(cx)
                ty.append(cy)
                text.append(waiting if busy == 0 else f"idle<br>{1 - busy:.0%}")
    veil = _poly(xs, ys, "waiting (greyed)", COLOURS["idle_veil"], opacity=0.6)
    label = {
        "type": "scatter",
        "mode": "text",
        "x": tx,
        "y": ty,
        "text": text,
        "textfont": {"size": 10, "color": COLOURS["dark_text"]},
        "hoverinfo": "skip",
        "showlegend": False,
    }
    return [veil, label]


def hover(geo: Geometry, fixed: dict[int, str], phase: dict[int, str]) -> dict:
    """Invisible markers at the cell centres: what a GPU is (text, the same in every phase) and
    what it holds and does in this phase (customdata).
    """
    ranks = list(geo.centres)
    return {
        "type": "scatter",
        "mode": "markers",
        "x": [geo.centres[r][0] for r in ranks],
        "y": [geo.centres[r][1] for r in ranks],
        "marker": {"size": 28, "opacity": 0, "color": COLOURS["paper"]},
        "text": [fixed[r] for r in ranks],
        "customdata": [phase[r] for r in ranks],
        "hovertemplate": "%{text}<br>%{customdata}<extra></extra>",
        "showlegend": False,
    }


def node_shapes(geo: Geometry, labels: dict[int, str]) -> tuple[list[dict], list[dict]]:
    """(shapes, annotations): each node's box and its label above it."""
    shapes, notes = [], []
    for node, x0, y0, x1, y1 in geo.boxes:
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "y",
                "x0": x0,
                "x1": x1,
                "y0": y0,
                "y1": y1,
                "line": {"color": COLOURS["ink"], "width": 1},
                "fillcolor": COLOURS["node_fill"],
                "layer": "below",
            }
        )
        notes.append(
            {
                "x": (x0 + x1) / 2,
                "y": y1,
                "xref": "x",
                "yref": "y",
                "yanchor": "bottom",
                "showarrow": False,
                "text": labels[node],
                "font": {"size": 12, "color": COLOURS["title"]},
            }
        )
    return shapes, notes
