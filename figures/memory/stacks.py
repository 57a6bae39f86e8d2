"""Per-GPU memory as stacked bars (parameters, gradients, optimizer states, activations,
reserve) with the capacity line and a fits / OOM verdict above each bar.
"""

from __future__ import annotations

from core.memory import MemoryResult, StageMemory, fits, shard_degrees
from core.parallel import ZERO_STAGES
from core.training import RESERVE_PARTS, get_recipe
from core.units import format_bytes, gib_or_gb
from figures.memory.savings import savings_notes
from figures.style import COLOURS, bottom_legend

# (field, legend name, colour, ZeRO stage from which this state is sharded)
SEGMENTS = (
    ("parameters_bytes", "Parameters", COLOURS["parameters"], 3),
    ("gradients_bytes", "Gradients", COLOURS["gradients"], 2),
    ("optimizer_bytes", "Optimizer states", COLOURS["optimizer"], 1),
    ("activations_bytes", "Activations", COLOURS["activations"], None),
    ("gathered_bytes", "ZeRO-3 gathered layers", COLOURS["zero_gather"], None),
)


TICK_FONT, AXIS_FONT = {"size": 13}, {"size": 14}  # legible at 1400 px (Streamlit's theme uses ~11)
LABEL_CLEARANCE = 0.07  # of the y range: a verdict label's height at the page's 520 px


def exact_bytes(num_bytes: float, units: str) -> str:
    return f"{num_bytes:,.0f} B ({format_bytes(num_bytes, units)})"


def _formula(field: str, sharded_from: int | None, st: StageMemory, result: MemoryResult) -> str:
    """The formula behind one segment, with this GPU's numbers substituted."""
    if field == "gathered_bytes":
        return (
            "the largest layer gathered whole, the next one prefetched, and the current one's "
            "gradients before their reduce-scatter (FSDP FULL_SHARD / ZeRO-3)"
            if st.gathered_bytes
            else "none: weights are not sharded below ZeRO-3"
        )
    if field == "activations_bytes" and not st.layers_in_flight:
        return "not modelled: a bare parameter count has no layer shape"
    if field == "activations_bytes":
        return (
            f"{st.layer_activation_bytes:,.0f} B/layer/micro-batch × {st.layers_in_flight:g} "
            f"layers in flight + {st.extra_activation_bytes:,.0f} B embedding/logits "
            f"(Korthikanti et al. 2022, recompute={result.training.recompute})"
        )
    rec = get_recipe(result.training.recipe)
    per = {
        "parameters_bytes": rec.param_bytes,
        "gradients_bytes": rec.grad_bytes,
        "optimizer_bytes": rec.optimizer_bytes,
    }[field]
    (n, n_e), on = shard_degrees(result.layout), result.layout.zero_stage >= sharded_from
    experts = (  # MoE: the routed experts on this GPU (÷ EP × TP), sharded over EDP
        f" + experts {per} × ⌈{st.expert_params_on_gpu:,} / {n_e if on else 1}⌉"
        if st.expert_params_on_gpu
        else ""
    )
    if on and n > 1:
        return f"{per} B/param × ⌈Ψ / N_d⌉ = {per} × ⌈{st.params_on_gpu:,} / {n}⌉" + experts
    return f"{per} B/param × Ψ = {per} × {st.params_on_gpu:,} (not sharded)" + experts


def _stacked(
    columns: list[tuple[str, StageMemory, MemoryResult]],
    capacity_bytes: float,
    reserve_bytes: float,
    units: str,
    title: str,
    capacity_label: str,
    selected: int | None = None,
    between: list[dict] | None = None,
) -> dict:
    """Stacked bars (one per column), a capacity line and a fits / OOM verdict above each bar."""
    unit_name, unit = gib_or_gb(units)
    x = [label for label, _, _ in columns]
    # The chosen column drawn solid and outlined, the others faded: the control visibly acts.
    fade = [1.0 if selected is None or i == selected else 0.45 for i in range(len(x))]
    edge = {
        "color": COLOURS["ink"],
        "width": [1.5 if f == 1.0 and selected is not None else 0 for f in fade],
    }
    data = []
    for field, name, colour, sharded_from in SEGMENTS:
        values = [getattr(st, field) for _, st, _ in columns]
        if field == "gathered_bytes" and not any(values):
            continue
        hover = [
            f"<b>{name}</b><br>{_formula(field, sharded_from, st, res)}"
            f"<br>= {exact_bytes(v, units)}"
            for (_, st, res), v in zip(columns, values)
        ]
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": x,
                "y": [v / unit for v in values],
                "marker": {"color": colour, "opacity": fade, "line": edge}
                | ({"pattern": {"shape": "x"}} if field == "gathered_bytes" else {}),
                "customdata": hover,
                "hovertemplate": "%{customdata}<extra></extra>",
            }
        )
    if reserve_bytes > 0:
        data.append(
            {
                "type": "bar",
                "name": "Reserve",
                "x": x,
                "y": [reserve_bytes / unit] * len(x),
                "marker": {
                    "color": COLOURS["reserve"],
                    "pattern": {"shape": "/"},
                    "opacity": fade,
                    "line": edge,
                },
                "hovertemplate": f"<b>Reserve</b>: {RESERVE_PARTS}"
                f"<br>= {exact_bytes(reserve_bytes, units)}<extra></extra>",
            }
        )
    notes = []
    top = max([capacity_bytes] + [st.total_bytes + reserve_bytes for _, st, _ in columns])
    for label, st, _ in columns:
        ok = fits(st.total_bytes, capacity_bytes, reserve_bytes)
        used = st.total_bytes + reserve_bytes
        # One line, so the verdict still clears the title at presenter size. A bar ending just
        # under the capacity line would put its label on the line: lift it above the line.
        y = capacity_bytes if 0 <= capacity_bytes - used < LABEL_CLEARANCE * top else used
        notes.append(
            {
                "x": label,
                "y": y / unit,
                "yshift": 3,
                "yanchor": "bottom",
                "showarrow": False,
                "text": f"{'fits' if ok else 'OOM'} · {format_bytes(used, units)}",
                "font": {"color": COLOURS["ok"] if ok else COLOURS["bad"]},
                "bgcolor": COLOURS["label_background"],
            }
        )
    notes += between or []
    notes.append(
        {
            "xref": "paper",
            "x": 1.01,
            "y": capacity_bytes / unit,
            "xanchor": "left",  # right margin
            "yanchor": "middle",
            "showarrow": False,
            "align": "left",
            "font": {"color": COLOURS["capacity"]},
            "text": f"{capacity_label}<br>{format_bytes(capacity_bytes, units)}".strip(),
        }
    )
    layout = {
        "title": {"text": title},
        "barmode": "stack",
        "hovermode": "closest",
        "yaxis": {
            "title": {"text": f"Memory per GPU ({unit_name})", "font": AXIS_FONT},
            "range": [0, 1.22 * top / unit],
            "tickfont": TICK_FONT,
        },
        "xaxis": {"tickfont": {"size": 15}},
        "bargap": 0.5 if between else 0.2,  # room between the bars for the savings
        "legend": bottom_legend(-0.12, font=TICK_FONT),
        "annotations": notes,
        "shapes": [
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": capacity_bytes / unit,
                "y1": capacity_bytes / unit,
                "line": {"color": COLOURS["capacity"], "dash": "dash"},
            }
        ],
        "margin": {"t": 60, "b": 40, "r": 120},
        "font": {"size": 14},
    }
    return {"data": data, "layout": layout}


def zero_stages_figure(
    results: list[MemoryResult],
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    units: str = "binary",
    capacity_label: str = "capacity",
    selected: int | None = None,
) -> dict:
    """Per-GPU memory of the fullest stage for DDP / ZeRO-1 / ZeRO-2 / ZeRO-3 side by side; the
    selected stage drawn solid, what each stage saves over the one before written between them.
    """
    cols = [(ZERO_STAGES[r.layout.zero_stage].label, r, r) for r in results]
    title = "Memory per GPU by ZeRO stage" + (
        f" · {ZERO_STAGES[selected].label} selected" if selected is not None else ""
    )
    between = savings_notes(results, units, capacity_bytes, reserve_bytes)
    return _stacked(
        cols, capacity_bytes, reserve_bytes, units, title, capacity_label, selected, between
    )


def pipeline_stages_figure(
    result: MemoryResult,
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    units: str = "binary",
    capacity_label: str = "capacity",
) -> dict:
    """Per-GPU memory of every pipeline stage (the first holds the most micro-batches in flight)."""
    cols = [(f"stage {st.stage}", st, result) for st in result.stages]
    title = f"Memory per GPU by pipeline stage ({result.layout.schedule}, PP={result.layout.pp})"
    return _stacked(cols, capacity_bytes, reserve_bytes, units, title, capacity_label)


def layout_label(result: MemoryResult) -> str:
    """One layout in a line, e.g. 'DP 8 · TP 1 · PP 1 · ZeRO-3 · mb 1' (+ recompute and SP when
    on).
    """
    par, tr = result.layout, result.training
    zero = "HSDP" if par.shard_degree is not None else ZERO_STAGES[par.zero_stage].label
    extra = (
        f" · recompute {tr.recompute}" if tr.recompute != "none" else ""
    ) + " · SP" * par.sequence_parallel
    five = f" · CP {par.cp}" * (par.cp > 1) + f" · EP {par.ep}" * (par.ep > 1)
    return f"DP {par.dp:,} · TP {par.tp} · PP {par.pp}{five} · {zero} · mb {par.micro_batch}{extra}"


def compare_layouts_figure(
    a: MemoryResult,
    b: MemoryResult,
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    units: str = "binary",
    capacity_label: str = "capacity",
) -> dict:
    """Layout A beside layout B: the fullest GPU of each, stacked, with the capacity line and
    verdicts.
    """
    cols = [
        (f"{name}: {layout_label(r)}", r, r) for name, r in (("A", a), ("B", b))
    ]  # "A:"/"B:" keep 2 bars
    return _stacked(
        cols,
        capacity_bytes,
        reserve_bytes,
        units,
        "Layout A vs layout B: the fullest GPU of each",
        capacity_label,
    )
