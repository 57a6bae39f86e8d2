"""All-to-all on the collectives page: who sends what to whom (the blocks before and after each
pairwise step, from core.collectives.all_to_all's real arrays), its cost beside the ring
all-gather's and all-reduce's, and the words (no streamlit).

Block src→dst holds the number 100·src + dst, so the "after" panel is decoded from the arrays the
simulator delivered, not recomputed. Costs: α-β, pairwise all-to-all (N − 1) α + S (N − 1)/N / B
(pmodels/mpich src/mpi/coll/alltoall/alltoall_intra_pairwise.c), ring all-gather the same
(NVIDIA/nccl-tests doc/PERFORMANCE.md: both have busbw factor (N − 1)/N), ring all-reduce
2 (N − 1) α + 2 S (N − 1)/N / B.
"""

from __future__ import annotations

import numpy as np

from core import collectives as coll
from core.hardware import Cluster
from core.units import format_bytes, format_seconds
from figures.style import COLOURS, STEP_SCALE, margin

LABELLED = 12  # up to this N every cell prints its "src→dst" label; beyond, hover only


def example_blocks(n: int) -> list[list[np.ndarray]]:
    """send[src][dst] = one int32 holding 100·src + dst: its origin and destination, readable."""
    return [[np.array([100 * s + d], dtype=np.int32) for d in range(n)] for s in range(n)]


def moved_at(result: coll.AllToAllResult) -> np.ndarray:
    """[src, dst] → the pairwise step that moved block src→dst (0: it stayed on its rank)."""
    step = np.zeros((result.num_ranks,) * 2, dtype=int)
    for i, moved in enumerate(result.step_bytes, start=1):
        step[moved > 0] = i
    return step


def _scale(n: int) -> list:
    """Step 0 (the block that stays home) in the "held, not sent" grey; steps 1 … N − 1 from
    light to dark blue."""
    edge = 0.5 / max(n - 1, 1)
    stay = COLOURS["replicated"]
    return [[0, stay], [edge, stay], [edge, STEP_SCALE[0]], [1, STEP_SCALE[1]]]


def _panel(z, text, hover, axis: str) -> dict:
    return {
        "type": "heatmap",
        "z": z,
        "text": text,
        "texttemplate": "%{text}" if len(z) <= LABELLED else None,
        "customdata": hover,
        "hovertemplate": "%{customdata}<extra></extra>",
        "colorscale": _scale(len(z)),
        "zmin": 0,
        "zmax": max(len(z) - 1, 1),
        "xgap": 1,
        "ygap": 1,
        "showscale": axis == "",
        "colorbar": {"title": {"text": "moved at step"}, "len": 0.9},
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
    }


def transpose_figure(result: coll.AllToAllResult, step: int, *, height: int = 380) -> dict:
    """Left: GPU r's buffer before (slot d = its block for GPU d). Right: after `step` pairwise
    steps (slot s = the block GPU s sent it), decoded from the delivered arrays; blank = not yet
    arrived. Colour = the step that moves the block; the outlined cells moved at `step`."""
    n, when = result.num_ranks, moved_at(result)
    before_z = [[int(when[r, d]) for d in range(n)] for r in range(n)]
    before_t = [[f"{r}→{d}" for d in range(n)] for r in range(n)]
    before_h = [[f"GPU {r} holds its block for GPU {d}" for d in range(n)] for r in range(n)]
    after_z, after_t, after_h = [], [], []
    for r in range(n):
        row_z, row_t, row_h = [], [], []
        for s in range(n):
            value = int(result.received[r][s][0])  # the simulator's delivered block
            src, dst = divmod(value, 100)
            arrived = when[src, dst] <= step
            row_z.append(int(when[src, dst]) if arrived else None)
            row_t.append(f"{src}→{dst}" if arrived else "")
            row_h.append(
                f"GPU {r} got GPU {src}'s block at step {when[src, dst]}"
                if arrived
                else f"GPU {src}'s block reaches GPU {r} at step {when[src, dst]}"
            )
        after_z.append(row_z)
        after_t.append(row_t)
        after_h.append(row_h)
    ticks = list(range(n))
    moving = [(s, d) for s in range(n) for d in range(n) if step and when[s, d] == step]
    outlines = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": f"moved at step {step}",
            "x": [d if side == "" else s for s, d in moving],
            "y": [s if side == "" else d for s, d in moving],
            "marker": {
                "symbol": "square-open",
                "size": max(6, 240 // n),
                "color": COLOURS["ink_dark"],
                "line": {"width": 2},
            },
            "xaxis": f"x{side}",
            "yaxis": f"y{side}",
            "hoverinfo": "skip",
            "showlegend": False,
        }
        for side in ("", "2")
    ]
    axis = {"tickmode": "array", "tickvals": ticks, "ticktext": [str(t) for t in ticks]}
    rows = {**axis, "autorange": "reversed", "title": {"text": "GPU"}}
    return {
        "data": [
            _panel(before_z, before_t, before_h, ""),
            _panel(after_z, after_t, after_h, "2"),
            *outlines,
        ],
        "layout": {
            "title": {
                "text": f"all-to-all N={n} · after step {step} of {n - 1}",
                "subtitle": {"text": "GPU r's row r becomes column r: a transpose across GPUs"},
            },
            "xaxis": {**axis, "domain": [0, 0.44], "title": {"text": "before: block for GPU"}},
            "yaxis": rows,
            "xaxis2": {**axis, "domain": [0.5, 0.94], "title": {"text": "after: block from GPU"}},
            "yaxis2": {**rows, "anchor": "x2", "title": {"text": ""}},
            "height": height,
            "margin": margin(l=50, r=140, t=80, b=50),  # room for the colour bar: one draw
        },
    }


def costs(
    n: int, size: float, bw: float, alpha: float, cluster: Cluster | None = None
) -> dict[str, dict]:
    """Per GPU: bytes sent, α terms and seconds for all-to-all, ring all-gather and ring
    all-reduce of a per-GPU buffer S; with a cluster, the two-tier times (all-reduce:
    the two-level algorithm, the best the core has for two tiers)."""
    out = {
        "all-to-all (pairwise)": dict(
            sent=size * (n - 1) / n,
            steps=n - 1,
            time=coll.all_to_all_time_s(size, n, bandwidth_bytes_per_s=bw, latency_s=alpha),
            factor=coll.bus_bandwidth_factor("all_to_all", n),
        ),
        "all-gather (ring)": dict(
            sent=size * (n - 1) / n,
            steps=n - 1,
            time=coll.all_gather_time_s(n, size, bw, alpha),
            factor=coll.bus_bandwidth_factor("all_gather", n),
        ),
        "all-reduce (ring)": dict(
            sent=2 * size * (n - 1) / n,
            steps=2 * (n - 1),
            time=coll.all_reduce_time_s("ring", n, size, bw, alpha),
            factor=coll.bus_bandwidth_factor("all_reduce", n),
        ),
    }
    if cluster is not None:
        a2a = coll.two_tier_all_to_all(size, cluster)
        out["all-to-all (pairwise)"] |= dict(tier=a2a.time_s, nic=a2a.inter_bytes_per_gpu)
        m, g = cluster.num_nodes, cluster.gpus_per_node
        out["all-reduce (ring)"] |= dict(
            tier=coll.hierarchical_all_reduce_time_s(cluster, size), nic=2 * (m - 1) / m * size / g
        )
    return out


def cost_table(rows: dict[str, dict], mem: str) -> list[dict]:
    """The cost dict as table rows (strings: Streamlit prints them as they are)."""
    two = any("tier" in r for r in rows.values())
    return [
        {
            "collective": name,
            "sent per GPU": format_bytes(r["sent"], mem),
            "α steps": str(r["steps"]),
            "time, one link": format_seconds(r["time"]),
            "busbw factor": f"{r['factor']:.3g}",
            **(
                {
                    "two-tier time": format_seconds(r["tier"]) if "tier" in r else "—",
                    "through the NICs per GPU": format_bytes(r["nic"], mem) if "nic" in r else "—",
                }
                if two
                else {}
            ),
        }
        for name, r in rows.items()
    ]


def takeaway(n: int, gpus_per_node: int = 8) -> str:
    """The one-line lesson, its numbers derived from N and the node size g."""
    g = gpus_per_node
    return (
        f"In an all-to-all each GPU keeps 1/N of its buffer and sends the other (N−1)/N "
        f"({n - 1}/{n} at N = {n}), each block to a different GPU. Nothing is added up, so on one "
        "link it costs what an all-gather costs, half a ring all-reduce; but for the same "
        "reason nothing can be summed inside a node first: across nodes each GPU pushes "
        f"(m−1)/m of S through the NICs, g/2 = {g / 2:g}× what a two-level all-reduce sends "
        f"(g = {g} GPUs per node)."
    )
