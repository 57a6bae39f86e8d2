"""The home page's first screen: a still of a real ring all-reduce, every step side by side.

Each panel is the cluster after one step: a row per GPU, a cell per chunk holding the chunk's real
numbers, coloured by how many GPUs' inputs it already sums (the Collectives page's Viridis scale,
1 → N); the cells received in that step are outlined in their phase's colour. Read left to right,
the full sums walk down the diagonal (reduce-scatter), then spread to every GPU (all-gather).
"""

from __future__ import annotations

from core.collectives import CollectiveTrace
from figures.style import COLOURS, PHASE_COLOURS

PHASE_NAMES = {"reduce_scatter": "reduce-scatter", "all_gather": "all-gather"}
_GAP = 0.08  # between cells, in cell widths


def _check(trace: CollectiveTrace) -> None:
    if trace.algorithm != "ring" or trace.collective != "all_reduce":
        raise ValueError(
            f"the home still needs a ring all-reduce trace, got {trace.algorithm} "
            f"{trace.collective}; use core.collectives.ring_all_reduce(inputs)"
        )
    if trace.states is None or trace.contributions is None or trace.num_ranks > 8:
        raise ValueError(
            f"the home still draws every cell's numbers: N = {trace.num_ranks} ranks and "
            f"{trace.num_elements} elements is too many to track; use N ≤ 8 and few elements"
        )


def step_titles(num_ranks: int) -> list[str]:
    """Panel labels: 'start', then 'RS 1'…'RS N−1' and 'AG 1'…'AG N−1'."""
    k = range(1, num_ranks)
    return ["start"] + [f"RS {i}" for i in k] + [f"AG {i}" for i in k]


def _outline(x0: float, y0: float) -> tuple[list, list]:
    a, b = x0 + _GAP / 2, x0 + 1 - _GAP / 2
    c, d = y0 - 0.5 + _GAP / 2, y0 + 0.5 - _GAP / 2
    return [a, b, b, a, a, None], [c, c, d, d, c, None]


def ring_still_figure(trace: CollectiveTrace) -> dict:
    """Every state of a small ring all-reduce side by side (see the module docstring)."""
    _check(trace)
    n, chunks = trace.num_ranks, trace.num_chunks
    off, counts = trace.chunk_offsets, trace.contribution_counts
    panels = trace.num_steps + 1
    width = chunks + 1  # a panel's cells and the gap after it
    x, y, z, text, ink = [], [], [], [], []
    received = {p: ([], []) for p in PHASE_COLOURS}
    for t in range(panels):
        for r in range(n):
            for c in range(chunks):
                x.append(t * width + c + 0.5)
                y.append(r)
                z.append(int(counts[t, r, c]))
                values = trace.states[t, r, off[c] : off[c + 1]].tolist()
                text.append(",".join(f"{v:g}" for v in values))
                # the Collectives page's rule: dark ink on the bright (yellow) end of Viridis
                ink.append(COLOURS["ink_dark"] if z[-1] > n / 2 else COLOURS["light_text"])
        if t:
            step = trace.steps[t - 1]
            xs, ys = received[step.phase]
            for dst, c in zip(step.dst.tolist(), step.chunk.tolist()):
                ox, oy = _outline(t * width + c, dst)
                xs += ox
                ys += oy
    columns = panels * width - 1
    grid = [[None] * columns for _ in range(n)]  # the gap columns between panels stay empty
    for xi, yi, zi in zip(x, y, z):
        grid[yi][int(xi)] = zi
    cells = {
        "type": "heatmap",
        "x": [k + 0.5 for k in range(columns)],
        "y": list(range(n)),
        "z": grid,
        "colorscale": "Viridis",
        "zmin": 1,
        "zmax": n,
        "xgap": 3,
        "ygap": 3,
        "showscale": False,
        "hovertemplate": "GPU %{y}: sums %{z} of " + str(n) + " GPUs' inputs<extra></extra>",
    }
    numbers = {
        "type": "scatter",
        "mode": "text",
        "x": x,
        "y": y,
        "text": text,
        "textfont": {"color": ink, "size": 13},
        "hoverinfo": "skip",
        "showlegend": False,
    }
    outlines = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": xs,
            "y": ys,
            "name": f"received in that step ({PHASE_NAMES[phase]}: "
            + ("added" if phase == "reduce_scatter" else "copied")
            + ")",
            "line": {"color": PHASE_COLOURS[phase], "width": 3},
            "hoverinfo": "skip",
        }
        for phase, (xs, ys) in received.items()
        if xs
    ]
    centres = [t * width + chunks / 2 for t in range(panels)]
    return {
        "data": [cells, numbers, *outlines],
        "layout": {
            "title": {
                "text": f"A real ring all-reduce: {n} GPUs sum their numbers in "
                f"2(N−1) = {trace.num_steps} steps",
                "subtitle": {
                    "text": f"colour: how many GPUs' inputs a cell sums (1 → {n}); "
                    "left to right: the state after each step"
                },
            },
            "height": 330,
            "font": {"size": 14},
            "xaxis": {
                "tickmode": "array",
                "tickvals": centres,
                "ticktext": step_titles(n),
                "showgrid": False,
                "zeroline": False,
                "range": [-0.3, panels * width - 0.7],
                "fixedrange": True,
            },
            "yaxis": {
                "tickmode": "array",
                "tickvals": list(range(n)),
                "ticktext": [f"GPU {r}" for r in range(n)],
                "autorange": "reversed",
                "showgrid": False,
                "zeroline": False,
                "fixedrange": True,
            },
            "legend": {"orientation": "h", "y": -0.2, "x": 0},
            "margin": {"l": 70, "r": 20, "t": 80, "b": 40},
            "plot_bgcolor": COLOURS["paper"],
        },
    }


def ring_still_caption(trace: CollectiveTrace) -> str:
    """What the still shows, with the run's own counts (steps, bytes each GPU sent)."""
    _check(trace)
    n = trace.num_ranks
    sent = int(trace.bytes_sent.max())
    ratio = sent / trace.message_bytes
    return (
        f"Each of {n} GPUs starts with its own {trace.num_elements} numbers. After "
        f"{n - 1} reduce-scatter steps each GPU holds one chunk summed over all {n} (the yellow "
        f"diagonal); {n - 1} all-gather steps pass those sums round the ring. Each GPU sent "
        f"{sent} bytes, {ratio:.2f}× its {trace.message_bytes}-byte buffer: 2(N−1)/N, close to 2 "
        "for any N — why the ring scales. Computed now by the same numpy simulator as the "
        "Collectives page."
    )
