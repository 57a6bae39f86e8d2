"""Micro-batch labels on Gantt boxes that stay legible from M = 1 to 128.

A box gets its number when the number fits inside it; a run of back-to-back boxes of one kind on
one rank whose numbers do not fit one by one (e.g. GPipe's sixteen forwards at M = 16, which
printed as "1011121314") gets one range label "0–15" across the run; anything else stays
unlabelled (hover gives every box). Widths are judged on a plot PLOT_PX pixels wide at presenter
type (the widest labels the page draws), so the same labels fit in both modes.
"""

from __future__ import annotations

import numpy as np

from core.pipeline import PipelineResult

PLOT_PX = 820  # the Gantt's plot width on a 1280-px projector (main area minus margins)
CHAR_PX = 10.0  # one digit at presenter size (16 px type)
PAD_PX = 6.0


def fits(width_px: np.ndarray | float, text_len: np.ndarray | int) -> np.ndarray:
    return np.asarray(width_px) >= np.asarray(text_len) * CHAR_PX + PAD_PX


def label_items(result: PipelineResult, x_max_s: float | None = None) -> list[tuple]:
    """(x centre, index of the op (a run's first), text) of every label to draw."""
    ops = result.ops
    if not len(ops.rank):
        return []
    px_per_s = PLOT_PX / (x_max_s or result.makespan_s)
    start, end, mb = ops.start_s, ops.end_s, ops.microbatch
    width = (end - start) * px_per_s
    eps = 1e-9 * result.makespan_s
    # A run continues while the next op is the same rank, kind and chunk, the next micro-batch,
    # starting where the last ended (ops are sorted by rank, then start).
    same = np.zeros(len(mb), dtype=bool)
    same[1:] = (
        (ops.rank[1:] == ops.rank[:-1])
        & (ops.kind[1:] == ops.kind[:-1])
        & (ops.chunk[1:] == ops.chunk[:-1])
        & (mb[1:] == mb[:-1] + 1)
        & (np.abs(start[1:] - end[:-1]) <= eps)
        & ~ops.overlapped[1:]
        & ~ops.overlapped[:-1]
    )
    starts = np.flatnonzero(~same)
    stops = np.append(starts[1:], len(mb))
    digits = np.char.str_len(mb.astype(str))
    alone = fits(width, digits)
    items = []
    for a, b in zip(starts.tolist(), stops.tolist()):
        if alone[a:b].all():
            items += [((start[i] + end[i]) / 2, i, str(int(mb[i]))) for i in range(a, b)]
            continue
        text = f"{int(mb[a])}–{int(mb[b - 1])}"
        if b - a > 1 and fits((end[b - 1] - start[a]) * px_per_s, len(text)):
            items.append(((start[a] + end[b - 1]) / 2, a, text))
        else:  # the boxes of the run that fit one by one keep their numbers
            items += [
                ((start[i] + end[i]) / 2, i, str(int(mb[i]))) for i in range(a, b) if alone[i]
            ]
    return items
