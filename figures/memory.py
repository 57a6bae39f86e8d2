"""Plotly figure specs (plain dicts) for the memory page: per-GPU stacks, pipeline stages, recompute."""
from __future__ import annotations

from core.memory import (ZERO_STAGE_LABELS, MemoryResult, RecomputeOption, StageMemory, fits,
                         get_recipe)
from core.units import format_bytes, gib_or_gb

# (field, legend name, colour, ZeRO stage from which this state is sharded)
SEGMENTS = (("parameters_bytes", "Parameters", "#4C78A8", 3),
            ("gradients_bytes", "Gradients", "#F58518", 2),
            ("optimizer_bytes", "Optimizer states", "#54A24B", 1),
            ("activations_bytes", "Activations", "#B279A2", None))
RESERVE_COLOUR = "#BAB0AC"
RECOMPUTE_LABELS = {"none": "No recompute", "selective": "Selective", "full": "Full"}


def _exact(num_bytes: float, units: str) -> str:
    return f"{num_bytes:,.0f} B ({format_bytes(num_bytes, units)})"


def _formula(field: str, sharded_from: int | None, st: StageMemory, result: MemoryResult) -> str:
    """The formula behind one segment, with this GPU's numbers substituted."""
    if field == "activations_bytes" and not st.layers_in_flight:
        return "not modelled: a bare parameter count has no layer shape"
    if field == "activations_bytes":
        return (f"{st.layer_activation_bytes:,.0f} B/layer/micro-batch × {st.layers_in_flight:g} "
                f"layers in flight + {st.extra_activation_bytes:,.0f} B embedding/logits "
                f"(Korthikanti et al. 2022, recompute={result.training.recompute})")
    rec = get_recipe(result.training.recipe)
    per = {"parameters_bytes": rec.param_bytes, "gradients_bytes": rec.grad_bytes,
           "optimizer_bytes": rec.optimizer_bytes}[field]
    n = result.parallel.shard_degree or result.parallel.dp
    if result.parallel.zero_stage >= sharded_from and n > 1:
        return f"{per} B/param × ⌈Ψ / N_d⌉ = {per} × ⌈{st.params_on_gpu:,} / {n}⌉"
    return f"{per} B/param × Ψ = {per} × {st.params_on_gpu:,} (not sharded)"


def _stacked(columns: list[tuple[str, StageMemory, MemoryResult]], capacity_bytes: float,
             reserve_bytes: float, units: str, title: str, capacity_label: str) -> dict:
    """Stacked bars (one per column), a capacity line and a fits / OOM verdict above each bar."""
    unit_name, unit = gib_or_gb(units)
    x = [label for label, _, _ in columns]
    data = []
    for field, name, colour, sharded_from in SEGMENTS:
        values = [getattr(st, field) for _, st, _ in columns]
        hover = [f"<b>{name}</b><br>{_formula(field, sharded_from, st, res)}<br>= {_exact(v, units)}"
                 for (_, st, res), v in zip(columns, values)]
        data.append({"type": "bar", "name": name, "x": x, "y": [v / unit for v in values],
                     "marker": {"color": colour}, "customdata": hover,
                     "hovertemplate": "%{customdata}<extra></extra>"})
    if reserve_bytes > 0:
        data.append({"type": "bar", "name": "Reserve", "x": x, "y": [reserve_bytes / unit] * len(x),
                     "marker": {"color": RESERVE_COLOUR, "pattern": {"shape": "/"}},
                     "hovertemplate": f"<b>Reserve</b> for temporaries and fragmentation (user-set)"
                                      f"<br>= {_exact(reserve_bytes, units)}<extra></extra>"})
    notes = []
    for label, st, _ in columns:
        ok = fits(st.total_bytes, capacity_bytes, reserve_bytes)
        used = st.total_bytes + reserve_bytes
        notes.append({"x": label, "y": used / unit, "yanchor": "bottom", "showarrow": False,
                      "text": f"{'fits' if ok else 'OOM'}<br>{format_bytes(used, units)}",
                      "font": {"color": "#2E7D32" if ok else "#C62828"}})
    notes.append({"xref": "paper", "x": 1, "y": capacity_bytes / unit, "xanchor": "right",
                  "yanchor": "bottom", "showarrow": False,
                  "text": f"{capacity_label} {format_bytes(capacity_bytes, units)}".strip()})
    top = max([capacity_bytes] + [st.total_bytes + reserve_bytes for _, st, _ in columns])
    layout = {"title": {"text": title}, "barmode": "stack", "hovermode": "closest",
              "yaxis": {"title": {"text": f"Memory per GPU ({unit_name})"}, "range": [0, 1.18 * top / unit]},
              "legend": {"orientation": "h", "y": -0.15}, "annotations": notes,
              "shapes": [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": capacity_bytes / unit,
                          "y1": capacity_bytes / unit, "line": {"color": "#C62828", "dash": "dash"}}],
              "margin": {"t": 60, "b": 40}}
    return {"data": data, "layout": layout}


def zero_stages_figure(results: list[MemoryResult], capacity_bytes: float, reserve_bytes: float = 0.0,
                       units: str = "binary", capacity_label: str = "capacity") -> dict:
    """Per-GPU memory of the fullest stage for DDP / ZeRO-1 / ZeRO-2 / ZeRO-3 side by side."""
    cols = [(ZERO_STAGE_LABELS[r.parallel.zero_stage], r, r) for r in results]
    return _stacked(cols, capacity_bytes, reserve_bytes, units, "Memory per GPU by ZeRO stage",
                    capacity_label)


def pipeline_stages_figure(result: MemoryResult, capacity_bytes: float, reserve_bytes: float = 0.0,
                           units: str = "binary", capacity_label: str = "capacity") -> dict:
    """Per-GPU memory of every pipeline stage (the first holds the most micro-batches in flight)."""
    cols = [(f"stage {st.stage}", st, result) for st in result.stages]
    title = f"Memory per GPU by pipeline stage ({result.training.schedule}, PP={result.parallel.pp})"
    return _stacked(cols, capacity_bytes, reserve_bytes, units, title, capacity_label)


def recompute_tradeoff_figure(options: list[RecomputeOption], units: str = "binary") -> dict:
    """Activation memory (left) next to the extra compute it costs (right), per recompute mode."""
    unit_name, unit = gib_or_gb(units)
    x = [RECOMPUTE_LABELS[o.recompute] for o in options]
    mem_hover = [f"<b>{label}</b><br>activations {_exact(o.activations_bytes, units)}"
                 f"<br>saved vs none {_exact(o.saved_bytes, units)}" for label, o in zip(x, options)]
    flop_hover = [f"<b>{label}</b><br>extra FLOPs = {100 * o.extra_compute_fraction:.2f}% of model FLOPs"
                  " (6N + 12 L h s per token)" for label, o in zip(x, options)]
    data = [{"type": "bar", "name": "Activations", "x": x, "y": [o.activations_bytes / unit for o in options],
             "marker": {"color": SEGMENTS[3][2]}, "customdata": mem_hover,
             "hovertemplate": "%{customdata}<extra></extra>", "xaxis": "x", "yaxis": "y"},
            {"type": "bar", "name": "Extra compute", "x": x,
             "y": [100 * o.extra_compute_fraction for o in options], "marker": {"color": "#E45756"},
             "customdata": flop_hover, "hovertemplate": "%{customdata}<extra></extra>",
             "xaxis": "x2", "yaxis": "y2"}]
    layout = {"title": {"text": "Activation recompute: memory saved vs extra compute"},
              "showlegend": False, "grid": {"rows": 1, "columns": 2, "pattern": "independent"},
              "xaxis": {"domain": [0, 0.45]}, "xaxis2": {"domain": [0.55, 1]},
              "yaxis": {"title": {"text": f"Activations per GPU ({unit_name})"}},
              "yaxis2": {"title": {"text": "Extra compute per step (%)"}, "anchor": "x2"},
              "margin": {"t": 60, "b": 40}}
    return {"data": data, "layout": layout}
