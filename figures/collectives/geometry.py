"""Ring geometry: GPU boxes on a circle, each box a grid of its N chunk cells, and where a chunk in
flight is on its way from one box to the next.

GPU 0 sits at the top and the ring runs clockwise, the direction every send goes (rank r sends to
r + 1 mod N: docs/notes/collectives.md §1). A chunk keeps its cell slot in every box, so a chunk in
flight travels along the circle between the same slot of two neighbouring boxes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RADIUS = 1.0  # the circle through the box centres (plot units)
LABEL_GAP = 0.09  # between a box's outer corner and its GPU label
NOTE_GAP = 0.17  # between a GPU label and the note of what that GPU just did
ZOOM_LABEL_PULL = 0.07  # zoomed in, a GPU label sits this much closer to its box (LABEL_GAP is
# sized for the whole ring; magnified it would float far from the box)


def polar(radius, angle):
    return radius * np.cos(angle), radius * np.sin(angle)


def angles(n: int) -> np.ndarray:
    """Angle of GPU r's box centre: r = 0 at the top, clockwise."""
    return math.pi / 2 - 2 * math.pi * np.arange(n) / n


@dataclass(frozen=True, kw_only=True)
class RingBoxes:
    """Where N boxes of N chunk cells go (plot units)."""

    num_ranks: int
    cols: int  # cells per box row (chunk c at row c // cols, column c % cols)
    rows: int
    cell: float  # cell pitch
    half_w: float  # a box's half width and half height, padding included
    half_h: float
    extent: float  # the axes run from -extent to extent

    @property
    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        return polar(RADIUS, angles(self.num_ranks))

    def offsets(self) -> tuple[np.ndarray, np.ndarray]:
        """(dx, dy) of each chunk's cell from its box centre, chunk 0 top left, row-major."""
        c = np.arange(self.num_ranks)
        dx = (c % self.cols - (self.cols - 1) / 2) * self.cell
        dy = ((self.rows - 1) / 2 - c // self.cols) * self.cell
        return dx, dy

    def cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of every (rank, chunk) cell, shape (N, N)."""
        (cx, cy), (dx, dy) = self.centres, self.offsets()
        return cx[:, None] + dx[None, :], cy[:, None] + dy[None, :]

    def in_flight(self, src, dst, chunk, u: float) -> tuple[np.ndarray, np.ndarray]:
        """Positions of chunks sent src → dst (clockwise neighbours) a fraction u of the way."""
        n = self.num_ranks
        a0 = angles(n)[np.asarray(src)]
        a1 = a0 - 2 * math.pi / n * ((np.asarray(dst) - np.asarray(src)) % n)
        x, y = polar(RADIUS, a0 + u * (a1 - a0))
        dx, dy = self.offsets()
        return x + dx[chunk], y + dy[chunk]

    def labels(self, further: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """GPU labels just outside each box, on the ray from the centre of the ring (`further`
        out for a second line)."""
        a = angles(self.num_ranks)
        reach = RADIUS + math.hypot(self.half_w, self.half_h) + LABEL_GAP + further
        return polar(reach, a)


def label_sides(n: int) -> list[str]:
    """Where each GPU's label sits from its anchor on the ray: away from its box (left of a west
    box, above a north one). Centred on the anchor, a 20 px presenter label ran into the east and
    west boxes ("GPU 6" over GPU 6's cells, seen on the 1280×720 slide)."""
    out = []
    for a in angles(n):
        c, s = math.cos(a), math.sin(a)
        if abs(c) > 0.35:
            out.append("middle right" if c > 0 else "middle left")
        else:
            out.append("top center" if s > 0 else "bottom center")
    return out


def ring_boxes(n: int) -> RingBoxes:
    """Boxes as large as the circle allows: a box's side is at most 0.68 of the distance between
    neighbouring centres (diagonal neighbours just clear each other), at most 0.62 for tiny rings.
    """
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    chord = 2 * RADIUS * math.sin(math.pi / n) if n > 1 else 2 * RADIUS
    side = min(0.62, 0.74 * chord)
    cell = side / (cols + 0.5)  # a quarter cell of padding on each side
    half_w, half_h = (cols + 0.5) * cell / 2, (rows + 0.5) * cell / 2
    extent = RADIUS + math.hypot(half_w, half_h) + LABEL_GAP + NOTE_GAP + 0.05
    return RingBoxes(
        num_ranks=n, cols=cols, rows=rows, cell=cell, half_w=half_w, half_h=half_h, extent=extent
    )


def box_shapes(boxes: RingBoxes, line_colour: str, fill: str) -> list[dict]:
    """One rectangle per GPU behind its cells (static: layout shapes)."""
    cx, cy = boxes.centres
    return [
        {
            "type": "rect",
            "layer": "below",
            "x0": round(float(x - boxes.half_w), 4),
            "x1": round(float(x + boxes.half_w), 4),
            "y0": round(float(y - boxes.half_h), 4),
            "y1": round(float(y + boxes.half_h), 4),
            "line": {"color": line_colour, "width": 1.5},
            "fillcolor": fill,
        }
        for x, y in zip(cx.tolist(), cy.tolist())
    ]


def link_arcs(boxes: RingBoxes) -> tuple[list, list, dict]:
    """The ring's links: an arc between each pair of neighbouring boxes (None-separated), and an
    arrowhead at each arc's end pointing the way the data goes."""
    n, xs, ys, heads = boxes.num_ranks, [], [], {"x": [], "y": [], "angle": []}
    a = angles(n)
    gap = 1.15 * max(boxes.half_w, boxes.half_h) / RADIUS  # leave the boxes clear
    for r in range(n):
        lo, hi = a[r] - gap, a[r] - 2 * math.pi / n + gap
        if hi >= lo:  # boxes so close that the link is hidden under them
            continue
        t = np.linspace(lo, hi, 12)
        x, y = polar(RADIUS, t)
        xs += np.round(x, 4).tolist() + [None]
        ys += np.round(y, 4).tolist() + [None]
        heads["x"].append(round(float(x[-1]), 4))
        heads["y"].append(round(float(y[-1]), 4))
        # Plotly's marker angle: degrees clockwise from "up"; clockwise travel along the circle
        heads["angle"].append(round(math.degrees(math.atan2(math.sin(hi), -math.cos(hi))), 1))
    return xs, ys, heads


def view_window(boxes: RingBoxes, zoom: int | None = None) -> tuple[list, list]:
    """The axes' (x, y) ranges: the whole ring, or GPU `zoom`'s box and its two neighbours with
    their labels (the smallest rectangle holding them, plus half a cell), for large N where the
    whole ring's cells are too small to number. The chart keeps a 1:1 aspect, so Plotly widens
    the shorter range to fill the plot."""
    e = boxes.extent
    if zoom is None:
        return [-e, e], [-e, e]
    n = boxes.num_ranks
    if not 0 <= zoom < n:
        raise ValueError(f"zoom={zoom} is not a GPU of this ring: use 0 … {n - 1}, or None")
    near = [(zoom - 1) % n, zoom, (zoom + 1) % n]
    (cx, cy), (lx, ly) = boxes.centres, boxes.labels(-ZOOM_LABEL_PULL)
    pad = boxes.cell / 2
    xs = np.concatenate([cx[near] - boxes.half_w, cx[near] + boxes.half_w, lx[near]])
    ys = np.concatenate([cy[near] - boxes.half_h, cy[near] + boxes.half_h, ly[near]])
    return (
        [round(float(xs.min() - pad), 4), round(float(xs.max() + pad), 4)],
        [round(float(ys.min() - pad), 4), round(float(ys.max() + pad), 4)],
    )
