"""Bytes each GPU sends per all-reduce, and nccl-tests algbw vs busbw."""

from __future__ import annotations

import numpy as np

from core.collectives import (
    BytesScan,
    algbw_bytes_per_s,
    all_gather_time_s,
    all_reduce_coefficients,
    all_reduce_time_s,
    bus_bandwidth_factor,
    reduce_scatter_time_s,
)
from core.units import format_bytes, gib_or_gb
from figures.collectives.axes import ranks_axis
from figures.style import (
    ALGORITHM_COLOURS,
    COLOURS,
    SERIES_COLOURS,
    bottom_legend,
    margin,
    ticks_125,
)


def bytes_per_rank_figure(scan: BytesScan, *, byte_system: str = "binary") -> dict:
    """Left: ring bytes sent per rank (simulated points on 2·S·(N−1)/N). Right: naive root
    traffic.
    """
    unit, size = gib_or_gb(byte_system)
    s = scan.message_bytes
    n = scan.num_ranks
    grid = np.unique(np.geomspace(n.min(), n.max(), 200).round().astype(int))
    ring_curve = [all_reduce_coefficients("ring", int(p))[1] * s / size for p in grid]
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "2·S·(N−1)/N",
            "x": grid.tolist(),
            "y": ring_curve,
            "line": {"color": ALGORITHM_COLOURS["ring"]},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": "ring, simulated",
            "x": n.tolist(),
            "y": (scan.max_bytes_sent["ring"] / size).tolist(),
            "marker": {"color": ALGORITHM_COLOURS["ring"], "size": 9, "symbol": "circle-open"},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": "2·S (N → ∞)",
            "x": [int(n.min()), int(n.max())],
            "y": [2 * s / size] * 2,
            "line": {"dash": "dot", "color": COLOURS["guide"]},
        },
    ]
    if "naive" in scan.max_bytes_sent:
        data += [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "root: (N−1)·S",
                "x": grid.tolist(),
                "y": ((grid - 1) * s / size).tolist(),
                "xaxis": "x2",
                "yaxis": "y2",
                "line": {"color": ALGORITHM_COLOURS["naive"]},
            },
            {
                "type": "scatter",
                "mode": "markers",
                "name": "naive root, simulated",
                "x": n.tolist(),
                "y": (scan.max_bytes_sent["naive"] / size).tolist(),
                "xaxis": "x2",
                "yaxis": "y2",
                "marker": {"color": ALGORITHM_COLOURS["naive"], "size": 9, "symbol": "square-open"},
            },
            {
                "type": "scatter",
                "mode": "markers",
                "name": "ring rank, simulated",
                "x": n.tolist(),
                "y": (scan.max_bytes_sent["ring"] / size).tolist(),
                "xaxis": "x2",
                "yaxis": "y2",
                "marker": {"color": ALGORITHM_COLOURS["ring"], "size": 7},
                "showlegend": False,
            },
        ]
    ticks = ranks_axis([int(c) for c in n])
    y2 = [v for t in data if t.get("yaxis") == "y2" for v in t["y"]]  # labelled 1, 2, 5 × 10^k
    return {
        "data": data,
        "layout": {
            "title": {
                "text": "Bytes each GPU sends in one all-reduce of S = "
                f"{format_bytes(s, byte_system)}"
            },
            "xaxis": {**ticks, "domain": [0, 0.46]},
            "xaxis2": {**ticks, "domain": [0.56, 1], "anchor": "y2"},
            "yaxis": {"title": {"text": f"sent per rank ({unit})"}, "rangemode": "tozero"},
            "yaxis2": {
                "title": {"text": f"sent by the busiest rank ({unit}, log)"},
                "type": "log",
                "anchor": "x2",
                **ticks_125(y2),
            },
            "legend": bottom_legend(),
            "height": 460,
            "margin": margin(t=60),
        },
    }


def bandwidth_figure(
    *,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    collective: str = "all_reduce",
    rank_counts=tuple(2**k for k in range(1, 11)),
    byte_system: str = "decimal",
) -> dict:
    """nccl-tests algbw = S/t and busbw = algbw × factor vs N for the ring model, beside link speed
    B.
    """
    times = {
        "all_reduce": lambda p: all_reduce_time_s(
            "ring", p, message_bytes, bandwidth_bytes_per_s, latency_s
        ),
        "reduce_scatter": lambda p: reduce_scatter_time_s(
            p, message_bytes, bandwidth_bytes_per_s, latency_s
        ),
        "all_gather": lambda p: all_gather_time_s(
            p, message_bytes, bandwidth_bytes_per_s, latency_s
        ),
    }
    if collective not in times:
        raise ValueError(f"bandwidth_figure draws {', '.join(times)}; got {collective!r}")
    unit, size = gib_or_gb(byte_system)
    counts = [int(c) for c in rank_counts if c > 1]
    alg = [algbw_bytes_per_s(message_bytes, times[collective](p)) for p in counts]
    bus = [a * bus_bandwidth_factor(collective, p) for a, p in zip(alg, counts)]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "algbw = S / t",
                "x": counts,
                "y": [a / size for a in alg],
                "line": {"color": SERIES_COLOURS[1]},
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "busbw = algbw × factor",
                "x": counts,
                "y": [b / size for b in bus],
                "line": {"color": SERIES_COLOURS[0]},
            },
            {
                "type": "scatter",
                "mode": "lines",
                "name": "link B (per direction)",
                "x": [counts[0], counts[-1]],
                "y": [bandwidth_bytes_per_s / size] * 2,
                "line": {"dash": "dot", "color": COLOURS["ink"]},
            },
        ],
        "layout": {
            "title": {
                "text": f"{collective} (ring): algbw vs busbw · S = "
                f"{format_bytes(message_bytes, byte_system)}"
            },
            "xaxis": ranks_axis(counts),
            "height": 420,
            "yaxis": {"title": {"text": f"{unit}/s"}, "rangemode": "tozero"},
            "legend": bottom_legend(),
            "margin": margin(t=60),
        },
    }
