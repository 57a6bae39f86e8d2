"""A drawing of data parallelism: one batch cut into N shards, a gradient per GPU, an all-reduce
averaging them, the same update everywhere. Every bar is a number of core.data_parallel's
gradient proof (`prove_data_parallel`): the per-shard gradients, their average, the full batch's.
"""

from __future__ import annotations

import numpy as np

from core.data_parallel import DpProof
from figures.draw import arrow as _arrow
from figures.draw import font as _font
from figures.draw import label as _text
from figures.draw import rect as _rect
from figures.style import COLOURS, GROUP_COLOURS, margin

SHOWN = 6  # gradient components drawn per GPU (the proof figure shows them all)
ROWS = {"batch": 4.6, "local": 3.35, "reduce": 2.2, "update": 1.05}  # row centres (data units)
BOX_H = 0.85  # a GPU box's height


def shard_colour(rank: int) -> str:
    """Shard r and the GPU that holds it share one colour (a DP replica's group colour)."""
    return GROUP_COLOURS[rank % len(GROUP_COLOURS)]


def _bars(x0s, y_mid: float, values: np.ndarray, scale: float, colours, name: str) -> dict:
    """One bar trace: for each box starting at x0 (width 1) the `values` as small vertical bars
    from the box's middle line (a trace, not one shape per bar: Plotly lays out shapes one by
    one on every redraw)."""
    k = values.shape[1]
    step = 0.8 / k
    xs = [x0 + 0.1 + (j + 0.5) * step for x0 in x0s for j in range(k)]
    flat = values.reshape(-1)
    return {
        "type": "bar",
        "name": name,
        "x": np.round(xs, 4).tolist(),
        "y": (flat * scale).tolist(),
        "base": y_mid,
        "width": 0.7 * step,
        "marker": {"color": [c for c in colours for _ in range(k)], "line": {"width": 0}},
        "customdata": flat.tolist(),
        "hovertemplate": "%{customdata:.3g}<extra></extra>",
        "showlegend": False,
    }


def dp_drawing(proof: DpProof, *, shown: int = SHOWN) -> dict:
    """The batch → shards → per-GPU gradients → all-reduce average → one update, from a proof."""
    sizes = proof.shard_sizes
    n, total = len(sizes), int(sum(sizes))
    k = min(shown, proof.full_grad.size)
    local, full = proof.local_grads[:, :k], proof.full_grad[:k]
    averaged = (proof.ring_grad if proof.equal_shards else proof.weighted_grad)[:k]
    scale = 0.32 / max(float(np.abs(local).max()), float(np.abs(full).max()), 1e-300)
    shapes, notes = [], []

    # Row 1: the batch, one square per sample, coloured by the shard it falls in.
    owner = np.repeat(np.arange(n), sizes)
    xs = (np.arange(total) + 0.5) * n / total
    samples = {
        "type": "scatter",
        "mode": "markers",
        "x": np.round(xs, 4).tolist(),
        "y": [ROWS["batch"]] * total,
        "marker": {
            "symbol": "square",
            "size": max(4, min(14, int(700 / total))),
            "color": [shard_colour(r) for r in owner.tolist()],
        },
        "customdata": owner.tolist(),
        "hovertemplate": "sample %{pointNumber} → shard %{customdata}<extra></extra>",
        "showlegend": False,
    }
    head = f"<b>One batch of {total} samples, cut into {n} shards</b>"
    notes.append(_text(n / 2, ROWS["batch"] + 0.45, head))

    # Row 2: each GPU's gradient on its shard (the first k components).
    bounds = np.concatenate([[0], np.cumsum(sizes)]) * n / total
    y_local = ROWS["local"]
    for r in range(n):
        notes.append(_arrow((bounds[r] + bounds[r + 1]) / 2, ROWS["batch"] - 0.12, r + 0.5, 3.8))
        shapes.append(
            _rect(
                r + 0.06,
                r + 0.94,
                y_local - BOX_H / 2,
                y_local + BOX_H / 2,
                fill=COLOURS["paper"],
                line=shard_colour(r),
                width=2,
            )
        )
        label = f"GPU {r} · {sizes[r]} samples" if n <= 4 else f"{r}<br>{sizes[r]}"
        notes.append(_text(r + 0.5, y_local - BOX_H / 2, label, yanchor="top"))
    side = "gradient<br>on its shard" + ("" if n <= 4 else "<br><br>GPU<br>samples")
    notes.append(_text(-0.05, y_local, side, xanchor="right"))
    colours = [shard_colour(r) for r in range(n)]
    local_bars = _bars(range(n), y_local, local, scale, colours, "gradient on each shard")

    # Row 3: the all-reduce that averages them.
    shapes.append(
        _rect(
            0.06,
            n - 0.06,
            ROWS["reduce"] - 0.22,
            ROWS["reduce"] + 0.22,
            fill=COLOURS["node_fill"],
            line=COLOURS["ink"],
            dash="dot",
        )
    )
    how = (
        f"all-reduce: sum the {n} gradients, ÷ {n}"
        if proof.equal_shards
        else f"all-reduce: weight each by its samples, ÷ {total}"
    )
    notes.append(_text(n / 2, ROWS["reduce"], f"<b>{how}</b>"))

    # Row 4: the same averaged gradient on every GPU, with the full batch's as markers.
    y_up = ROWS["update"]
    xs_full, ys_full = [], []
    step = 0.8 / k
    for r in range(n):
        notes.append(_arrow(r + 0.5, ROWS["reduce"] - 0.24, r + 0.5, y_up + BOX_H / 2 + 0.02))
        shapes.append(
            _rect(
                r + 0.06,
                r + 0.94,
                y_up - BOX_H / 2,
                y_up + BOX_H / 2,
                fill=COLOURS["paper"],
                line=COLOURS["ink"],
            )
        )
        xs_full += [r + 0.1 + (j + 0.5) * step for j in range(k)]
        ys_full += (y_up + full * scale).tolist()
    full_trace = {
        "type": "scatter",
        "mode": "markers",
        "name": "full-batch gradient",
        "x": np.round(xs_full, 4).tolist(),
        "y": np.round(ys_full, 6).tolist(),
        "marker": {
            "symbol": "line-ew-open",
            "size": max(5, min(12, 560 // (n * k))),
            "color": COLOURS["ink_dark"],
            "line": {"width": 2, "color": COLOURS["ink_dark"]},
        },
        "hoverinfo": "skip",
    }
    same = np.tile(averaged, (n, 1))
    update_bars = _bars(range(n), y_up, same, scale, [COLOURS["replicated"]] * n, "")
    update_bars.update(name="averaged gradient (the update on every GPU)", showlegend=True)
    notes.append(_text(-0.05, y_up, "same update<br>everywhere", xanchor="right"))
    err = proof.ring_max_abs_diff if proof.equal_shards else proof.weighted_max_abs_diff
    verdict = f"max |averaged − full batch| = {err:.1e}, float rounding"
    if not proof.equal_shards:
        verdict += f" (a plain mean of the {n} would be off by {proof.ring_max_abs_diff:.1e})"
    notes.append(_text(n / 2, y_up - BOX_H / 2 - 0.12, verdict))
    return {
        "data": [samples, full_trace, local_bars, update_bars],
        "layout": {
            "title": {
                "text": "Data parallelism: one big batch, cut into shards, gradients averaged"
            },
            "shapes": shapes,
            "annotations": notes,
            "xaxis": {"visible": False, "range": [-1.1, n + 0.1], "fixedrange": True},
            "yaxis": {"visible": False, "range": [0.2, 5.25], "fixedrange": True},
            "legend": {
                "orientation": "h",
                "x": 0.5,
                "xanchor": "center",
                "y": -0.02,
                "yanchor": "top",
            },
            "barmode": "overlay",
            "font": _font(),
            "height": 470,
            "margin": margin(l=20, r=20, t=60, b=50),
            "plot_bgcolor": COLOURS["paper"],
            "paper_bgcolor": COLOURS["paper"],
        },
    }
