"""All-reduce time vs ranks and vs message size for each algorithm (alpha-beta models)."""

from __future__ import annotations

import math

import numpy as np

from core.collectives import (
    ALL_REDUCE_MODELS,
    all_reduce_time_s,
    cluster_of,
    flat_ring_all_reduce_time_s,
    hierarchical_all_reduce_time_s,
)
from core.hardware import Cluster
from core.units import format_bandwidth, format_bytes, format_seconds
from figures.collectives.axes import bytes_ticks, log_axis, ranks_axis, time_axis
from figures.style import ALGORITHM_COLOURS, COLOURS, bottom_legend, margin


def time_vs_ranks_figure(
    *,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    rank_counts=tuple(2**k for k in range(1, 11)),
    algorithms=("ring", "halving_doubling", "tree", "double_binary_tree", "naive"),
    cluster: Cluster | None = None,
    byte_system: str = "binary",
    bandwidth_system: str = "decimal",
) -> dict:
    """All-reduce time vs N for each algorithm on one link (log-log); two-level curves on a
    cluster.
    """
    counts = [int(c) for c in rank_counts]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": ALL_REDUCE_MODELS[a][0],
            "x": counts,
            "y": [
                all_reduce_time_s(a, p, message_bytes, bandwidth_bytes_per_s, latency_s)
                for p in counts
            ],
            "line": {"color": ALGORITHM_COLOURS[a]},
        }
        for a in algorithms
    ]
    if cluster is not None:
        points = [(p, c, message_bytes) for p in counts if (c := cluster_of(cluster, p))]
        data += _cluster_curves(points, f", {cluster.gpus_per_node} GPUs/node", "lines+markers")
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "All-reduce time vs N",  # the parameters below: a half-width title must fit
                "subtitle": {
                    "text": f"S = {format_bytes(message_bytes, byte_system)}, "
                    f"B = {format_bandwidth(bandwidth_bytes_per_s, bandwidth_system)}, α = "
                    f"{format_seconds(latency_s)}"
                },
            },
            "xaxis": ranks_axis(counts),
            "yaxis": time_axis(data),
            "height": 440,
            "legend": bottom_legend(),
            "margin": margin(t=80),
        },
    }


def _cluster_curves(
    points: list[tuple[float, Cluster, float]], suffix: str, mode: str
) -> list[dict]:
    """Hierarchical and flat-ring times on a cluster's two tiers; points are (x, cluster, bytes)."""
    return [
        {
            "type": "scatter",
            "mode": mode,
            "name": label + suffix,
            "x": [x for x, _, _ in points],
            "y": [fn(c, s) for _, c, s in points],
            "line": {"color": ALGORITHM_COLOURS[key], "dash": "dash"},
        }
        for key, label, fn in (
            ("hierarchical", "Hierarchical (2-level)", hierarchical_all_reduce_time_s),
            ("flat_ring_cluster", "Flat ring across nodes", flat_ring_all_reduce_time_s),
        )
    ]


def time_vs_size_figure(
    *,
    num_ranks: int,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    sizes_bytes=None,
    algorithms=("ring", "halving_doubling", "tree", "double_binary_tree", "naive"),
    cluster: Cluster | None = None,
    byte_system: str = "binary",
    bandwidth_system: str = "decimal",
) -> dict:
    """All-reduce time vs message size (log-log), shading where ring latency exceeds its bandwidth
    term.
    """
    sizes = (
        np.geomspace(1024, 16 * 2**30, 61)
        if sizes_bytes is None
        else np.asarray(sizes_bytes, float)
    )
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": ALL_REDUCE_MODELS[a][0],
            "x": sizes.tolist(),
            "y": [
                all_reduce_time_s(a, num_ranks, float(s), bandwidth_bytes_per_s, latency_s)
                for s in sizes
            ],
            "line": {"color": ALGORITHM_COLOURS[a]},
        }
        for a in algorithms
    ]
    if cluster is not None:
        data += _cluster_curves(
            [(float(x), cluster, float(x)) for x in sizes],
            f" on {cluster.num_nodes}×{cluster.gpus_per_node} GPUs",
            "lines",
        )
    shapes, notes, n_star = [], [], 0.0
    if num_ranks > 1 and latency_s > 0:
        # Ring: 2(p−1)·α = 2(p−1)/p·n/B at n = p·α·B (docs/notes/collectives.md §2).
        n_star = num_ranks * latency_s * bandwidth_bytes_per_s
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": float(sizes[0]),
                "x1": n_star,
                "y0": 0,
                "y1": 1,
                "fillcolor": COLOURS["region"],
                "opacity": 0.5,
                "line": {"width": 0},
                "layer": "below",
            }
        )
        notes = [
            {
                "x": math.log10(n_star),
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "showarrow": False,
                "xanchor": xa,
                "yanchor": "bottom",
                "text": text,
            }
            for xa, text in (("right", "latency-bound ◀ "), ("left", " ▶ bandwidth-bound"))
        ]
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "All-reduce time vs message size",
                "subtitle": {
                    "text": f"N = {num_ranks}, B = "
                    f"{format_bandwidth(bandwidth_bytes_per_s, bandwidth_system)}, α = "
                    f"{format_seconds(latency_s)}"
                    + (
                        f"; ring turns bandwidth-bound at n = p·α·B = "
                        f"{format_bytes(n_star, byte_system)}"
                        if notes
                        else ""
                    )
                },
            },
            "xaxis": {
                **log_axis("message size per rank", sizes[0], sizes[-1]),
                **bytes_ticks(sizes[0], sizes[-1], byte_system),
            },
            "yaxis": time_axis(data),
            "shapes": shapes,
            "annotations": notes,
            "height": 460,
            "legend": bottom_legend(),
            "margin": margin(t=100),
        },
    }
