"""A drawing of a tensor-parallel MLP (Megatron-LM, Shoeybi et al. 2019 §3, Fig. 3a): X copied to
every GPU, A split by columns, Y_i = GeLU(X A_i) computed locally, B split by rows, the partial
outputs Z_i summed by one all-reduce. The conjugate operators f (identity forward, all-reduce
backward) and g (all-reduce forward, identity backward) mark where the GPUs talk. The shapes are
read from core.tensor_parallel.mlp_ownership (which GPU owns which element of each tensor).
"""

from __future__ import annotations

import numpy as np

from core.tensor_parallel import mlp_ownership
from figures import draw
from figures.style import COLOURS, RANK_COLOURS, ink_on, margin

# Column centres (data units): X, f, A_i, Y_i, B_i, Z_i, g, Z.
COLS = {"X": 0.0, "f": 1.05, "A": 2.1, "Y": 3.3, "B": 4.5, "Zi": 5.7, "g": 6.85, "Z": 7.9}
BOX_W, OP_R = 0.86, 0.3


def rank_colour(rank: int) -> str:
    return RANK_COLOURS[rank % len(RANK_COLOURS)]


def mlp_shapes(*, tp: int, tokens: int, hidden: int, ffn: int) -> dict[str, list[tuple]]:
    """Per-GPU shapes of X, A_i, Y_i, B_i, Z_i and Z, counted from core's ownership arrays."""
    own = mlp_ownership(tp=tp, tokens=tokens, hidden=hidden, ffn=ffn)
    x, a, y, b, z = (
        own["X (block input)"],
        own["W1 (split by columns)"],
        own["GeLU(X W1) (split by columns)"],
        own["W2 (split by rows)"],
        own["Y (after all-reduce)"],
    )
    ranks = range(tp)
    return {
        "X": [x.shape] * tp,  # replicated: every GPU holds all of it (owner −1)
        "A": [(a.shape[0], int((a[0] == r).sum())) for r in ranks],
        "Y": [(y.shape[0], int((y[0] == r).sum())) for r in ranks],
        "B": [(int((b[:, 0] == r).sum()), b.shape[1]) for r in ranks],
        "Zi": [z.shape] * tp,  # a full-size partial sum on every GPU
        "Z": [z.shape] * tp,
        "replicated": [bool((x == -1).all()), bool((z == -1).all())],
    }


def _box(xc, yc, w, h, fill, line=None, dash=None) -> dict:
    return draw.rect(
        xc - w / 2, xc + w / 2, yc - h / 2, yc + h / 2, fill=fill, line=line, width=1.5, dash=dash
    )


def _note(x, y, text, *, colour=None, **extra) -> dict:
    return draw.label(x, y, text, colour=colour, **extra)


def _arrow(x0, y0, x1, y1) -> dict:
    return draw.arrow(x0, y0, x1, y1, width=1, size=0.8)


def tp_drawing(*, tp: int, tokens: int, hidden: int, ffn: int) -> dict:
    """The column- then row-parallel MLP on `tp` GPUs, with each tensor's per-GPU shape."""
    shp = mlp_shapes(tp=tp, tokens=tokens, hidden=hidden, ffn=ffn)
    rows = np.arange(tp)[::-1].astype(float)  # GPU 0 on top
    row_h = 0.72
    mid = float(rows.mean())
    span = tp - 1 + row_h
    shapes, notes = [], []
    comm, repl = COLOURS["exposed"], COLOURS["replicated"]

    def dims(s: tuple) -> str:
        return f"{s[0]}×{s[1]}"

    # X and Z: one tensor every GPU holds in full (drawn once, spanning the rows).
    for key, label in (("X", "X"), ("Z", "Z = Σ Z<sub>i</sub>")):
        shapes.append(_box(COLS[key], mid, BOX_W, span, repl, line=COLOURS["ink"]))
        notes.append(
            _note(COLS[key], mid, f"<b>{label}</b><br>{dims(shp[key][0])}<br>on every GPU")
        )
    # f and g: the two places the GPUs communicate.
    for key, fwd, bwd in (
        ("f", "forward: identity", "backward: all-reduce dX"),
        ("g", "forward: all-reduce", "backward: identity"),
    ):
        shapes.append(
            {
                "type": "circle",
                "x0": COLS[key] - OP_R,
                "x1": COLS[key] + OP_R,
                "y0": mid - OP_R * 1.6,
                "y1": mid + OP_R * 1.6,
                "fillcolor": comm,
                "line": {"color": comm},
            }
        )
        notes.append(_note(COLS[key], mid, draw.big(f"<b>{key}</b>", 150), colour=ink_on(comm)))
        notes.append(
            _note(
                COLS[key],
                -row_h / 2 - 0.1,
                f"<b>{key}</b><br>{fwd}<br>{bwd}",
                yanchor="top",
                colour=comm,
            )
        )
    # Per GPU: A_i, Y_i = GeLU(X A_i), B_i, Z_i = Y_i B_i.
    cells = (
        ("A", "A<sub>{r}</sub>", "columns"),
        ("Y", "Y<sub>{r}</sub>", ""),
        ("B", "B<sub>{r}</sub>", "rows"),
        ("Zi", "Z<sub>{r}</sub>", "partial"),
    )
    for r, y in enumerate(rows.tolist()):
        c = rank_colour(r)
        notes.append(_arrow(COLS["f"] + OP_R, mid, COLS["A"] - BOX_W / 2, y))
        notes.append(_arrow(COLS["Zi"] + BOX_W / 2, y, COLS["g"] - OP_R, mid))
        for key, label, _ in cells:
            partial = key == "Zi"
            fill = COLOURS["paper"] if partial else c
            shapes.append(
                _box(COLS[key], y, BOX_W, row_h, fill, line=c, dash="dot" if partial else None)
            )
            ink = COLOURS["ink"] if partial else ink_on(c)
            text = f"{label.format(r=r)}<br>{dims(shp[key][r])}"
            notes.append(_note(COLS[key], y, text, colour=ink))
        notes.append(
            _note(
                COLS["A"] - BOX_W / 2,
                y + row_h / 2,
                f"GPU {r}",
                colour=c,
                xanchor="left",
                yanchor="bottom",
            )
        )
        for a, b in (("A", "Y"), ("Y", "B"), ("B", "Zi")):
            notes.append(_arrow(COLS[a] + BOX_W / 2, y, COLS[b] - BOX_W / 2, y))
    notes.append(_arrow(COLS["X"] + BOX_W / 2, mid, COLS["f"] - OP_R, mid))
    notes.append(_arrow(COLS["g"] + OP_R, mid, COLS["Z"] - BOX_W / 2, mid))
    top = tp - 1 + row_h / 2 + 0.35
    heads = {
        "A": "A split<br>by columns",
        "Y": "Y = GeLU(X A)<br>local, no talk",
        "B": "B split<br>by rows",
        "Zi": "Z = Y B<br>partial sums",
    }
    for key, text in heads.items():
        notes.append(_note(COLS[key], top, f"<i>{text}</i>", yanchor="bottom"))
    sub = (
        f"TP = {tp}: each GPU holds 1/{tp} of A and B; one all-reduce forward (g), one backward (f)"
    )
    return {
        "data": [],
        "layout": {
            "title": {
                "text": "Tensor-parallel MLP: column-parallel A, row-parallel B",
                "subtitle": {"text": sub},
            },
            "shapes": shapes,
            "annotations": notes,
            "xaxis": {"visible": False, "range": [-0.75, 8.5], "fixedrange": True},
            "yaxis": {
                "visible": False,
                "range": [-1.55, tp - 1 + row_h / 2 + 0.95],
                "fixedrange": True,
            },
            "font": draw.font(),
            "height": 300 + 60 * tp,
            "margin": margin(l=10, r=10, t=80, b=10),
            "showlegend": False,
            "plot_bgcolor": COLOURS["paper"],
            "paper_bgcolor": COLOURS["paper"],
        },
    }
