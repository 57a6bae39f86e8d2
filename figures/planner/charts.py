"""Where one layout's step time and memory go: breakdown, memory by stage, A vs B."""

from __future__ import annotations

from collections.abc import Sequence

from core.planner import Evaluation
from core.units import format_count, format_seconds, gib_or_gb
from figures.memory import SEGMENTS, pipeline_stages_figure
from figures.style import COLOURS, PART_COLOURS, bottom_legend


def _label(ev: Evaluation) -> str:
    return ev.layout.label


def memory_figure(ev: Evaluation, units: str = "binary") -> dict:
    """Per-GPU memory of every pipeline stage with the capacity line (figures.memory's stack)."""
    t = ev.training
    fig = pipeline_stages_figure(
        ev.memory,
        ev.capacity_bytes,
        t.memory_headroom * ev.capacity_bytes,
        units,
        capacity_label=ev.cluster.gpu.name,
    )
    fig["layout"]["title"] = {
        "text": "Memory per GPU, by pipeline stage",
        "subtitle": {
            "text": (
                f"{_label(ev)}<br>{ev.model.name} · {t.recipe}, recompute {t.recompute} · "
                f"reserve = {t.memory_headroom:.0%} headroom · "
                f"{'fits' if ev.fits else 'does NOT fit'}"
            )
        },
    }
    fig["layout"]["margin"] = {**fig["layout"].get("margin", {}), "t": 90}
    return fig


def _parts_traces(
    evals: Sequence[Evaluation], x: list[str], xaxis: str = "x", yaxis: str = "y"
) -> list[dict]:
    traces = []
    for name, label in evals[0].breakdown.LABELS.items():
        vals = [getattr(e.breakdown, name) for e in evals]
        hover = [
            f"<b>{label}</b>: {format_seconds(v)} ({v / e.step_time_s:.1%} of the step)"
            for v, e in zip(vals, evals)
        ]
        traces.append(
            {
                "type": "bar",
                "name": label,
                "x": x,
                "y": vals,
                "xaxis": xaxis,
                "yaxis": yaxis,
                "legendgroup": "time",
                "legendgrouptitle": {"text": "step time"},
                "marker": {"color": PART_COLOURS[name]},
                "customdata": hover,
                "showlegend": any(v > 0 for v in vals),  # a part that is zero here needs no key
                "hovertemplate": "%{customdata}<extra></extra>",
            }
        )
    return traces


def _headline(ev: Evaluation) -> str:
    return (
        f"step {format_seconds(ev.step_time_s)} · {format_count(ev.tokens_per_s)} tokens/s · "
        f"MFU {ev.mfu:.1%} (HFU {ev.hfu:.1%})"
    )


def breakdown_figure(
    evals: Evaluation | Sequence[Evaluation], labels: Sequence[str] | None = None
) -> dict:
    """Step time stacked by component (compute, memory-bound, recompute, TP, PP, ZeRO, DP,
    optimizer).
    """
    evals = [evals] if isinstance(evals, Evaluation) else list(evals)
    x = list(labels) if labels else [_label(e) for e in evals]
    one = evals[0]
    title = "Step-time breakdown"
    sub = (
        f"{_label(one)}<br>{_headline(one)}"
        if len(evals) == 1
        else "<br>".join(f"{a}: {_headline(e)}" for a, e in zip(x, evals))
    )
    notes = [
        {
            "x": a,
            "y": e.step_time_s,
            "yanchor": "bottom",
            "showarrow": False,
            "text": format_seconds(e.step_time_s),
        }
        for a, e in zip(x, evals)
    ]
    return {
        "data": _parts_traces(evals, x),
        "layout": {
            "title": {"text": title, "subtitle": {"text": sub}},
            "barmode": "stack",
            "yaxis": {
                "title": {"text": "seconds per step"},
                "range": [0, 1.15 * max(e.step_time_s for e in evals)],
            },
            "annotations": notes,
            "legend": bottom_legend(),
            "margin": {"t": 90},
            "hovermode": "closest",
        },
    }


def compare_figure(
    a: Evaluation, b: Evaluation, labels: Sequence[str] = ("A", "B"), units: str = "binary"
) -> dict:
    """Two layouts side by side: step-time breakdown (left) and fullest-stage memory (right)."""
    x = list(labels)
    data = _parts_traces([a, b], x)
    unit_name, unit = gib_or_gb(units)
    for field, name, colour, _ in SEGMENTS:
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": x,
                "y": [getattr(e.memory, field) / unit for e in (a, b)],
                "xaxis": "x2",
                "yaxis": "y2",
                "marker": {"color": colour, "pattern": {"shape": "."}},
                "legendgroup": "memory",
                "legendgrouptitle": {"text": "memory per GPU (fullest stage)"},
                "hovertemplate": f"<b>{name}</b>: %{{y:.3g}} {unit_name}<extra></extra>",
            }
        )
    cap = a.capacity_bytes / unit
    ratio = b.step_time_s / a.step_time_s
    title = f"{x[0]} vs {x[1]}: {x[1]} takes {ratio:.2f}× the step time"
    sub = f"{x[0]}: {_label(a)} · {_headline(a)}<br>{x[1]}: {_label(b)} · {_headline(b)}"
    top = max(cap, *(e.memory.total_bytes / unit for e in (a, b)))
    return {
        "data": data,
        "layout": {
            "title": {"text": title, "subtitle": {"text": sub}},
            "barmode": "stack",
            "hovermode": "closest",
            "xaxis": {"domain": [0, 0.45]},
            "xaxis2": {"domain": [0.55, 1], "anchor": "y2"},
            "yaxis": {"title": {"text": "seconds per step"}},
            "yaxis2": {
                "title": {"text": f"memory per GPU ({unit_name})"},
                "anchor": "x2",
                "range": [0, 1.15 * top],
            },
            "shapes": [
                {
                    "type": "line",
                    "xref": "x2 domain",
                    "yref": "y2",
                    "x0": 0,
                    "x1": 1,
                    "y0": cap,
                    "y1": cap,
                    "line": {"color": COLOURS["capacity"], "dash": "dash"},
                }
            ],
            "annotations": [
                {
                    "xref": "x2 domain",
                    "yref": "y2",
                    "x": 1,
                    "y": cap,
                    "xanchor": "right",
                    "yanchor": "bottom",
                    "showarrow": False,
                    "text": f"{a.cluster.gpu.name} {cap:.3g} {unit_name}",
                }
            ],
            "legend": bottom_legend(-0.15),
            "margin": {"t": 100},
        },
    }


def _on_axes(item: dict, x: str, y: str) -> dict:
    """A trace, annotation or shape moved onto axes x/y ("paper" references become that subplot's
    domain).
    """
    item = dict(item)
    if "type" in item and item["type"] not in ("line", "rect"):  # a trace
        return item | {"xaxis": x, "yaxis": y}
    for ref, axis in (("xref", x), ("yref", y)):
        item[ref] = {"paper": f"{axis} domain", f"{ref[0]} domain": f"{axis} domain"}.get(
            item.get(ref), axis
        )
    return item


def layout_figure(ev: Evaluation, units: str = "binary") -> dict:
    """One figure, two panels: the step-time breakdown (left) and per-GPU memory of each stage
    (right).
    """
    bd, mem = breakdown_figure(ev), memory_figure(ev, units)
    data = bd["data"] + [
        _on_axes(t, "x2", "y2")
        | {"legendgroup": "memory", "legendgrouptitle": {"text": "memory per GPU"}}
        for t in mem["data"]
    ]
    notes = bd["layout"]["annotations"] + [
        _on_axes(a, "x2", "y2") for a in mem["layout"]["annotations"]
    ]
    title = f"Where the step time and the memory go · {'fits' if ev.fits else 'does NOT fit'}"
    layout = {
        "title": {"text": title, "subtitle": {"text": f"{_label(ev)}<br>{_headline(ev)}"}},
        "barmode": "stack",
        "hovermode": "closest",
        "annotations": notes,
        "shapes": [_on_axes(s, "x2", "y2") for s in mem["layout"].get("shapes", [])],
        "xaxis": {"domain": [0, 0.22], "showticklabels": False},
        "yaxis": bd["layout"]["yaxis"],
        "xaxis2": {"domain": [0.34, 0.9], "anchor": "y2"},
        "yaxis2": mem["layout"]["yaxis"] | {"anchor": "x2"},
        "legend": bottom_legend(-0.12),
        "margin": {"t": 90, "r": 10},
    }
    return {"data": data, "layout": layout}
