"""A vs B: two all-reduce algorithms on the same tensor, as side-by-side heatmaps, a table and a
verdict.
"""

from __future__ import annotations

import math

import numpy as np

from core.collectives import AlgorithmRun
from core.units import bytes_in, format_bytes, format_seconds
from figures.style import COLOURS, margin

SIDES = ("A", "B")


def _unit(runs: list[AlgorithmRun], byte_system: str) -> str:
    """The display unit of the largest single-step send over both runs (e.g. 'MiB')."""
    top = max([float(r.sent_per_step_bytes.max()) for r in runs if r.num_steps] + [1.0])
    return format_bytes(top, byte_system).rsplit(" ", 1)[1]


def _subtitle(side: str, run: AlgorithmRun | None, byte_system: str) -> str:
    if run is None:
        return f"<b>{side}</b>: not run (see the error above)"
    return (
        f"<b>{side} · {run.label}</b><br>{run.num_steps} steps · {format_seconds(run.time_s)} · "
        f"busiest GPU sends {format_bytes(run.max_bytes_sent, byte_system)}"
    )


def versus_figure(
    a: AlgorithmRun | None, b: AlgorithmRun | None, *, byte_system: str = "binary"
) -> dict:
    """Bytes each GPU sends in each step (rank × step heatmap) for A and for B, on one colour
    scale.
    """
    runs = [r for r in (a, b) if r is not None]
    unit = _unit(runs, byte_system)
    zmax = max(
        [bytes_in(float(r.sent_per_step_bytes.max()), unit) for r in runs if r.num_steps] + [1e-9]
    )
    data, notes = [], []
    for i, (side, run) in enumerate(zip(SIDES, (a, b))):
        axes = {"xaxis": f"x{i + 1 if i else ''}", "yaxis": f"y{i + 1 if i else ''}"}
        x0, x1 = (0, 0.45) if i == 0 else (0.55, 1)
        notes.append(
            {
                "text": _subtitle(side, run, byte_system),
                "x": (x0 + x1) / 2,
                "y": 1.02,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
            }
        )
        if run is None:
            data.append(
                {
                    "type": "heatmap",
                    "z": [[None]],
                    "showscale": False,
                    **axes,
                    "coloraxis": "coloraxis",
                }
            )
            continue
        z = bytes_in(run.sent_per_step_bytes.T.astype(float), unit)  # (ranks, steps)
        phases = [s.phase.replace("_", " ") for s in run.trace.steps]
        data.append(
            {
                "type": "heatmap",
                "name": side,
                "z": np.round(z, 6).tolist(),
                "x": list(range(1, run.num_steps + 1)),
                "y": list(range(run.num_ranks)),
                "customdata": [phases] * run.num_ranks,
                "coloraxis": "coloraxis",
                "xgap": 1,
                "ygap": 1,
                **axes,
                "hovertemplate": f"{side}: GPU %{{y}} · step %{{x}} (%{{customdata}})<br>"
                f"sends %{{z:.4g}} {unit}<extra></extra>",
            }
        )
    axis = {"title": {"text": "step"}, "tickmode": "auto", "showgrid": False, "zeroline": False}
    gpu = {"title": {"text": "GPU"}, "autorange": "reversed", "showgrid": False, "zeroline": False}
    return {
        "data": data,
        "layout": {
            "title": {"text": "A vs B · bytes each GPU sends in each step", "y": 0.98},
            "xaxis": {**axis, "domain": [0, 0.45]},
            "xaxis2": {**axis, "domain": [0.55, 1], "anchor": "y2"},
            "yaxis": gpu,
            "yaxis2": {**gpu, "anchor": "x2", "title": {"text": ""}},
            "coloraxis": {
                "colorscale": "Viridis",
                "cmin": 0,
                "cmax": zmax,
                "colorbar": {"title": {"text": f"sent ({unit})"}},
            },
            "annotations": notes,
            "height": 440,
            "plot_bgcolor": COLOURS["paper"],
            "margin": margin(t=110, b=50),
        },
    }


def _ratio(x: float, y: float) -> str:
    if x == 0:
        return "—" if y == 0 else "∞"
    return f"{y / x:.3g}×"


def versus_table(
    a: AlgorithmRun, b: AlgorithmRun, *, byte_system: str = "binary"
) -> dict[str, list]:
    """Columns for st.table: measure, A, B and the B / A ratio."""
    size = lambda v: format_bytes(v, byte_system)  # noqa: E731
    rows = [
        ("steps", a.num_steps, b.num_steps, str),
        ("time", a.time_s, b.time_s, format_seconds),
        ("  latency part (α per step)", a.latency_s, b.latency_s, format_seconds),
        (
            "  bytes part (largest message per step / B)",
            a.bandwidth_s,
            b.bandwidth_s,
            format_seconds,
        ),
        ("busiest GPU sends", a.max_bytes_sent, b.max_bytes_sent, size),
        ("least busy GPU sends", a.min_bytes_sent, b.min_bytes_sent, size),
        ("max |output − true sum|", a.max_error, b.max_error, lambda v: f"{v:g}"),
    ]
    return {
        "measure": [r[0] for r in rows],
        f"A · {a.label}": [r[3](r[1]) for r in rows],
        f"B · {b.label}": [r[3](r[2]) for r in rows],
        "B / A": [_ratio(r[1], r[2]) for r in rows],
    }


def versus_takeaway(a: AlgorithmRun, b: AlgorithmRun, *, byte_system: str = "binary") -> str:
    """Which of A and B is faster here, and whether latency (α·steps) or bytes decided it."""
    if math.isclose(a.time_s, b.time_s, rel_tol=5e-3):  # within 0.5%: a tie, not "1× faster"
        return (
            f"**{a.label}** and **{b.label}** take the same time here "
            f"({format_seconds(a.time_s)} vs {format_seconds(b.time_s)})."
        )
    fast, slow = (a, b) if a.time_s < b.time_s else (b, a)
    # Differences under a millionth of the step time are float noise (equal bytes, equal steps).
    tol = 1e-6 * slow.time_s
    d_lat = 0.0 if abs(slow.latency_s - fast.latency_s) <= tol else slow.latency_s - fast.latency_s
    d_bw = (
        0.0
        if abs(slow.bandwidth_s - fast.bandwidth_s) <= tol
        else slow.bandwidth_s - fast.bandwidth_s
    )
    head = (
        f"**{fast.label}** is {slow.time_s / fast.time_s:.3g}× faster than **{slow.label}** here "
        f"({format_seconds(fast.time_s)} vs {format_seconds(slow.time_s)}). "
    )
    steps = (
        f"{fast.num_steps} vs {slow.num_steps} steps, α·steps {format_seconds(fast.latency_s)} vs "
        f"{format_seconds(slow.latency_s)}"
    )
    volume = (
        f"bytes part {format_seconds(fast.bandwidth_s)} vs {format_seconds(slow.bandwidth_s)}, "
        f"busiest GPU {format_bytes(fast.max_bytes_sent, byte_system)} vs "
        f"{format_bytes(slow.max_bytes_sent, byte_system)}"
    )
    if d_lat >= 0 and d_bw >= 0:
        return head + (
            f"It wins on both terms, or ties one: latency ({steps}) and bytes ({volume}); "
            "no message size reverses that."
        )
    # The bytes part grows in proportion to S and the latency part does not, so the two break even
    # at
    # S' = S · (latency difference) / (bytes difference) with everything else fixed.
    cross = format_bytes(fast.message_bytes * abs(d_lat) / abs(d_bw), byte_system)
    if d_bw > 0:
        return head + (
            f"Bandwidth-bound: moving fewer bytes ({volume}) outweighs its extra latency "
            f"({steps}). Below S ≈ {cross} per GPU, {slow.label} would win."
        )
    return head + (
        f"Latency-bound: fewer α steps ({steps}) outweigh moving more bytes ({volume}). "
        f"Above S ≈ {cross} per GPU, {slow.label} would win."
    )


def timing_note(link_name: str, cluster_args: dict | None) -> str:
    """How the A-vs-B times were taken: which link, and the hierarchical algorithm's node layout."""
    note = (
        "Same N, inputs and S as above; each step takes α + its largest message / B on "
        f"{link_name}. "
    )
    if cluster_args is None:
        return (
            note
            + "Hierarchical assumes 8 GPUs per node: turn on the two-tier cluster to change it."
        )
    return (
        "Same N, inputs and S as above, on the two-tier cluster "
        f"({cluster_args['gpus_per_node']} GPUs per node): every message inside a node takes α + "
        f"bytes / B on {link_name}; every message leaving a node shares its "
        f"{cluster_args['nics_per_node']} × {cluster_args['inter_link_name']} with the step's "
        "other leaving messages and pays the network α. A step lasts as long as its slowest "
        "message."
    )
