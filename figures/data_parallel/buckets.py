"""The bucket timeline: compute stream above the all-reduce stream, hidden vs exposed."""

from __future__ import annotations

from core.data_parallel import DpStep
from figures.data_parallel.scaling import to_ms
from figures.style import COLOURS, legend_under_axis_title, margin


def _comm_intervals(step: DpStep, max_bars: int) -> list[tuple[float, float, int]]:
    """(start, finish, buckets) bars: back-to-back buckets merged, then grouped to ≤ max_bars."""
    bars: list[list] = []
    for s, f in zip(step.bucket_start_s.tolist(), step.bucket_finish_s.tolist()):
        if bars and s <= bars[-1][1] + 1e-12:
            bars[-1][1], bars[-1][2] = f, bars[-1][2] + 1
        else:
            bars.append([s, f, 1])
    k = -(-len(bars) // max_bars)
    if k > 1:  # group k neighbours into one bar (overstates busy time a little; hover says so)
        bars = [
            [g[0][0], g[-1][1], sum(b[2] for b in g)]
            for g in (bars[i : i + k] for i in range(0, len(bars), k))
        ]
    return [tuple(b) for b in bars]


def bucket_timeline_figure(step: DpStep, *, max_bars: int = 400) -> dict:
    """Compute stream (forward, backward) above the all-reduce stream; red = exposed after
    backward.
    """
    end = step.compute_s
    traces = [
        {
            "type": "bar",
            "orientation": "h",
            "y": ["compute"],
            "base": [0.0],
            "x": [step.forward_s * 1e3],
            "name": "forward",
            "marker": {"color": COLOURS["forward"]},
        },
        {
            "type": "bar",
            "orientation": "h",
            "y": ["compute"],
            "base": [step.forward_s * 1e3],
            "x": [step.backward_s * 1e3],
            "name": "backward",
            "marker": {"color": COLOURS["compute"]},
        },
    ]
    bars = _comm_intervals(step, max_bars)
    for name, color, lo, hi in (
        ("all-reduce hidden behind backward", COLOURS["hidden"], None, end),
        ("all-reduce exposed", COLOURS["exposed"], end, None),
    ):
        parts = [
            (max(s, lo) if lo is not None else s, min(f, hi) if hi is not None else f, n)
            for s, f, n in bars
        ]
        parts = [(s, f, n) for s, f, n in parts if f > s]
        traces.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": name,
                "y": ["all-reduce"] * len(parts),
                "base": to_ms([p[0] for p in parts]),
                "x": to_ms([p[1] - p[0] for p in parts]),
                "customdata": [p[2] for p in parts],
                "marker": {"color": color, "line": {"width": 0}},
                "hovertemplate": "%{customdata} bucket(s): %{base:.4g} ms + %{x:.3g} ms"
                "<extra></extra>",
            }
        )
    nb = len(step.bucket_bytes)
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Bucket timeline · N={step.num_gpus} · {nb} bucket{'s' if nb > 1 else ''}",
                "subtitle": {
                    "text": f"all-reduce {step.comm_s * 1e3:.4g} ms, of which "
                    f"{step.exposed_comm_s * 1e3:.4g} ms exposed after backward · "
                    f"ran: {step.algorithms}"
                },
            },
            "barmode": "overlay",
            "xaxis": {"title": {"text": "time from start of forward (ms)"}},
            "yaxis": {"autorange": "reversed"},
            "shapes": [
                {
                    "type": "line",
                    "x0": end * 1e3,
                    "x1": end * 1e3,
                    "y0": 0,
                    "y1": 1,
                    "yref": "paper",
                    "line": {"dash": "dash", "color": COLOURS["ink"]},
                }
            ],
            "legend": legend_under_axis_title(330, 80, 95),
            "height": 330,
            "margin": margin(l=90, t=80, b=95),
            "annotations": [
                {
                    "text": "finish_i = max(ready_i, finish_i−1) + c_i",
                    "xref": "paper",
                    "yref": "paper",
                    "x": 1,
                    "y": 1.02,
                    "showarrow": False,
                    "xanchor": "right",
                    "yanchor": "bottom",
                    "font": {"size": 11},
                }
            ],
        },
    }
