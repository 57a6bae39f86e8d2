"""Plotly figure specs (plain dicts) for the memory page: per-GPU stacks, pipeline stages,
recompute.
"""

from __future__ import annotations

from core.hardware import GPU_PRESETS
from core.memory import (
    RECIPES,
    FitRow,
    MemoryResult,
    RecomputeOption,
    StageMemory,
    ZeroComm,
    fits,
    get_recipe,
    layer_allgather_bytes,
    memory_per_gpu,
    model_state_bytes_per_gpu,
    zero_comm_bytes_per_gpu,
)
from core.model import MODEL_PRESETS, preset
from core.parallel import ZERO_STAGES, Layout
from core.training import Training
from core.units import format_bytes, format_count, gib_or_gb

# (field, legend name, colour, ZeRO stage from which this state is sharded)
SEGMENTS = (
    ("parameters_bytes", "Parameters", "#4C78A8", 3),
    ("gradients_bytes", "Gradients", "#F58518", 2),
    ("optimizer_bytes", "Optimizer states", "#54A24B", 1),
    ("activations_bytes", "Activations", "#B279A2", None),
)
RESERVE_COLOUR = "#BAB0AC"
RECOMPUTE_LABELS = {"none": "No recompute", "selective": "Selective", "full": "Full"}
TICK_FONT, AXIS_FONT = {"size": 13}, {"size": 14}  # legible at 1400 px (Streamlit's theme uses ~11)


def _exact(num_bytes: float, units: str) -> str:
    return f"{num_bytes:,.0f} B ({format_bytes(num_bytes, units)})"


def _formula(field: str, sharded_from: int | None, st: StageMemory, result: MemoryResult) -> str:
    """The formula behind one segment, with this GPU's numbers substituted."""
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
    n = result.layout.shard_degree or result.layout.dp
    if result.layout.zero_stage >= sharded_from and n > 1:
        return f"{per} B/param × ⌈Ψ / N_d⌉ = {per} × ⌈{st.params_on_gpu:,} / {n}⌉"
    return f"{per} B/param × Ψ = {per} × {st.params_on_gpu:,} (not sharded)"


def _stacked(
    columns: list[tuple[str, StageMemory, MemoryResult]],
    capacity_bytes: float,
    reserve_bytes: float,
    units: str,
    title: str,
    capacity_label: str,
) -> dict:
    """Stacked bars (one per column), a capacity line and a fits / OOM verdict above each bar."""
    unit_name, unit = gib_or_gb(units)
    x = [label for label, _, _ in columns]
    data = []
    for field, name, colour, sharded_from in SEGMENTS:
        values = [getattr(st, field) for _, st, _ in columns]
        hover = [
            f"<b>{name}</b><br>{_formula(field, sharded_from, st, res)}<br>= {_exact(v, units)}"
            for (_, st, res), v in zip(columns, values)
        ]
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": x,
                "y": [v / unit for v in values],
                "marker": {"color": colour},
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
                "marker": {"color": RESERVE_COLOUR, "pattern": {"shape": "/"}},
                "hovertemplate": f"<b>Reserve</b> for temporaries and fragmentation (user-set)"
                f"<br>= {_exact(reserve_bytes, units)}<extra></extra>",
            }
        )
    notes = []
    for label, st, _ in columns:
        ok = fits(st.total_bytes, capacity_bytes, reserve_bytes)
        used = st.total_bytes + reserve_bytes
        # One line, so the verdict still clears the title at presenter size.
        notes.append(
            {
                "x": label,
                "y": used / unit,
                "yanchor": "bottom",
                "showarrow": False,
                "text": f"{'fits' if ok else 'OOM'} · {format_bytes(used, units)}",
                "font": {"color": "#2E7D32" if ok else "#C62828"},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )
    notes.append(
        {
            "xref": "paper",
            "x": 1.01,
            "y": capacity_bytes / unit,
            "xanchor": "left",  # right margin
            "yanchor": "middle",
            "showarrow": False,
            "align": "left",
            "font": {"color": "#C62828"},
            "text": f"{capacity_label}<br>{format_bytes(capacity_bytes, units)}".strip(),
        }
    )
    top = max([capacity_bytes] + [st.total_bytes + reserve_bytes for _, st, _ in columns])
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
        "legend": {"orientation": "h", "y": -0.12, "font": TICK_FONT},
        "annotations": notes,
        "shapes": [
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": capacity_bytes / unit,
                "y1": capacity_bytes / unit,
                "line": {"color": "#C62828", "dash": "dash"},
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
) -> dict:
    """Per-GPU memory of the fullest stage for DDP / ZeRO-1 / ZeRO-2 / ZeRO-3 side by side."""
    cols = [(ZERO_STAGES[r.layout.zero_stage].label, r, r) for r in results]
    return _stacked(
        cols, capacity_bytes, reserve_bytes, units, "Memory per GPU by ZeRO stage", capacity_label
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
    return f"DP {par.dp:,} · TP {par.tp} · PP {par.pp} · {zero} · mb {par.micro_batch}{extra}"


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


def compare_layouts(
    a: MemoryResult,
    b: MemoryResult,
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    units: str = "binary",
    gpu: str = "the GPU",
) -> dict:
    """Everything the page shows for A vs B: the chart, B's metrics with deltas, the verdict
    sentence.
    """
    metrics, sentence = compare_summary(a, b, capacity_bytes, reserve_bytes, units, gpu)
    return {
        "fig": compare_layouts_figure(a, b, capacity_bytes, reserve_bytes, units, gpu),
        "metrics": metrics,
        "sentence": sentence,
    }


def compare_summary(
    a: MemoryResult,
    b: MemoryResult,
    capacity_bytes: float,
    reserve_bytes: float = 0.0,
    units: str = "binary",
    capacity_label: str = "the GPU",
) -> tuple[list[dict], str]:
    """B's st.metric arguments with deltas against A, and one sentence: which layout fits, by how
    much.
    """

    def gpus(r):
        return r.layout.world_size

    def metric(label, vb, va, fmt, tip, colour="inverse"):  # more memory is worse: a rise shows red
        d = vb - va
        return {
            "label": label,
            "value": fmt(vb),
            "delta": f"{'-' if d < 0 else '+'}{fmt(abs(d))} vs A" if d else "same as A",
            "delta_color": colour if d else "off",
            "delta_arrow": "auto" if d else "off",
            "help": tip,
        }

    def b_(x):
        return format_bytes(x, units)

    def verdict(name, r):
        used, ok = r.total_bytes + reserve_bytes, fits(r.total_bytes, capacity_bytes, reserve_bytes)
        return (
            f"**{name}** ({layout_label(r)}) {'fits' if ok else '**does not fit (OOM)**'}: "
            f"{b_(used)}, "
            f"{b_(abs(capacity_bytes - used))} {'to spare' if ok else 'over'}"
        )

    rows = [
        metric(
            "B per GPU",
            b.total_bytes + reserve_bytes,
            a.total_bytes + reserve_bytes,
            b_,
            "B's fullest GPU: model states + activations + reserve.",
        ),
        metric(
            "B states / GPU",
            b.states_bytes,
            a.states_bytes,
            b_,
            "Parameters + gradients + optimizer states.",
        ),
        metric(
            "B activations / GPU",
            b.activations_bytes,
            a.activations_bytes,
            b_,
            "Activations stored on B's fullest GPU.",
        ),
        metric("B GPUs", gpus(b), gpus(a), lambda n: f"{n:,}", "DP × TP × PP", colour="off"),
    ]
    d = b.total_bytes - a.total_bytes
    more = f"{b_(abs(d))} {'more' if d > 0 else 'less'}" if d else "the same memory"
    on = (
        f"the same {gpus(a):,} GPUs"
        if gpus(a) == gpus(b)
        else f"{gpus(b):,} GPUs instead of {gpus(a):,}"
    )
    return rows, (
        f"On {capacity_label} ({b_(capacity_bytes)}): {verdict('A', a)}; {verdict('B', b)}. "
        f"B needs {more} per GPU than A, on {on}."
    )


def recompute_tradeoff_figure(options: list[RecomputeOption], units: str = "binary") -> dict:
    """Activation memory (left) next to the extra compute it costs (right), per recompute mode."""
    unit_name, unit = gib_or_gb(units)
    x = [RECOMPUTE_LABELS[o.recompute] for o in options]
    mem_hover = [
        f"<b>{label}</b><br>activations {_exact(o.activations_bytes, units)}"
        f"<br>saved vs none {_exact(o.saved_bytes, units)}"
        for label, o in zip(x, options)
    ]
    flop_hover = [
        f"<b>{label}</b><br>extra FLOPs = {100 * o.extra_compute_fraction:.2f}% of model FLOPs"
        " (6N + 12 L h s per token)"
        for label, o in zip(x, options)
    ]
    data = [
        {
            "type": "bar",
            "name": "Activations",
            "x": x,
            "y": [o.activations_bytes / unit for o in options],
            "marker": {"color": SEGMENTS[3][2]},
            "customdata": mem_hover,
            "textposition": "outside",
            "text": [format_bytes(o.activations_bytes, units) for o in options],
            "cliponaxis": False,
            "hovertemplate": "%{customdata}<extra></extra>",
            "xaxis": "x",
            "yaxis": "y",
        },
        {
            "type": "bar",
            "name": "Extra compute",
            "x": x,
            "y": [100 * o.extra_compute_fraction for o in options],
            "marker": {"color": "#E45756"},
            "text": [f"+{100 * o.extra_compute_fraction:.1f}%" for o in options],
            "textposition": "outside",
            "cliponaxis": False,
            "customdata": flop_hover,
            "hovertemplate": "%{customdata}<extra></extra>",
            "xaxis": "x2",
            "yaxis": "y2",
        },
    ]
    layout = {
        "title": {"text": "Activation recompute: memory saved vs extra compute"},
        "showlegend": False,
        "grid": {"rows": 1, "columns": 2, "pattern": "independent"},
        "xaxis": {"domain": [0, 0.45], "tickfont": TICK_FONT},
        "xaxis2": {"domain": [0.55, 1], "tickfont": TICK_FONT},
        "yaxis": {
            "title": {"text": f"Activations per GPU ({unit_name})", "font": AXIS_FONT},
            "tickfont": TICK_FONT,
        },
        "yaxis2": {
            "title": {"text": "Extra compute per step (%)", "font": AXIS_FONT},
            "anchor": "x2",
            "tickfont": TICK_FONT,
        },
        "margin": {"t": 60, "b": 40},
        "font": {"size": 14},
    }
    return {"data": data, "layout": layout}


# --- Labels, tables and formula text for the memory page (strings and rows; no Streamlit here) ---
FSDP_NAMES = {
    0: "NO_SHARD (DDP)",
    1: "ZeroRedundancyOptimizer",
    2: "SHARD_GRAD_OP",
    3: "FULL_SHARD",
}
# Short, stable labels: Streamlit writes the label into the URL.
MODEL_LABELS = {n: n.split(" (")[0] for n in MODEL_PRESETS} | {
    "custom": "custom shape",
    "params": "N parameters",
}
RECIPE_LABELS = {
    k: f"{RECIPES[k].bytes_per_param} B {v}"
    for k, v in [
        ("mixed_adam", "mixed Adam"),
        ("megatron_fp32_grads", "Megatron"),
        ("fp32_adam", "fp32 Adam"),
        ("bf16_no_master", "bf16 no master"),
        ("sgd_momentum", "SGD"),
    ]
}
RECIPE_HELP = "\n\n".join(f"**{RECIPE_LABELS[k]}**: {r.source}" for k, r in RECIPES.items())


def headline_metrics(
    chosen: MemoryResult,
    capacity_bytes: float,
    reserve_bytes: float,
    label: str,
    num_params: int,
    recipe: str,
    gpu: str,
    units: str = "binary",
) -> list[dict]:
    """st.metric arguments for the fullest GPU: total with headroom, verdict, states, activations,
    whole model.
    """

    def b(x):
        return format_bytes(x, units)

    used, ok = (
        chosen.total_bytes + reserve_bytes,
        fits(chosen.total_bytes, capacity_bytes, reserve_bytes),
    )
    whole = model_state_bytes_per_gpu(num_params, 1, 0, recipe).total_bytes
    states = chosen.states_bytes
    return [
        {
            "label": f"{label}, per GPU",
            "value": b(used),
            "border": True,
            "delta": f"{b(capacity_bytes - used)} free"
            if ok
            else f"-{b(used - capacity_bytes)} over",
            "help": "The fullest GPU: model states + activations + reserve.",
        },
        {
            "label": "Verdict",
            "value": "fits" if ok else "OOM",
            "help": f"{gpu}: {b(capacity_bytes)} of HBM",
        },
        {
            "label": "States / GPU",
            "value": b(states),
            "help": "Parameters + gradients + optimizer states on the fullest GPU.",
        },
        {"label": "Activations / GPU", "value": b(chosen.activations_bytes)},
        {
            "label": "Whole model",
            "value": b(whole),
            "help": f"All model states: {num_params:,} parameters × {RECIPE_LABELS[recipe]}",
        },
    ]


def run_caption(
    dp: int, tp: int, pp: int, num_params: int, recipe: str, units: str = "binary"
) -> str:
    """The line under the headline metrics: GPU count, model size, recipe and the unit
    convention.
    """
    return (
        f"{dp * tp * pp:,} GPUs = DP {dp} × TP {tp} × PP {pp} · {format_count(num_params)} "
        "parameters · "
        f"recipe **{RECIPE_LABELS[recipe]}** · sizes in "
        f"{'GiB (2³⁰ B)' if units == 'binary' else 'GB (10⁹ B)'} (switch in the sidebar) · hover a "
        "bar "
        "for its formula and exact bytes."
    )


def fits_rows(
    rows: list[FitRow], dp: int, tp: int, pp: int, max_micro_batch: int = 4096
) -> list[dict]:
    """The what-fits table: per ZeRO stage, the fewest GPUs and the largest micro-batch that fit."""
    out = []
    for r in rows:
        gpus = (
            f"{r.min_gpus:,} = DP {r.min_dp:,} × TP {tp} × PP {pp}"
            if r.min_dp
            else "none (DP does not help)"
            if r.zero_stage == 0
            else "none up to DP 65,536"
        )
        mb = r.max_micro_batch
        mb = (
            "— (no layer shape)"
            if mb is None
            else "none: 1 does not fit"
            if mb == 0
            else f"≥ {mb:,}"
            if mb >= max_micro_batch
            else f"{mb:,}"
        )
        out.append(
            {
                "ZeRO stage": ZERO_STAGES[r.zero_stage].label,
                "PyTorch": FSDP_NAMES[r.zero_stage],
                "fewest GPUs that fit": gpus,
                f"largest micro-batch at DP={dp:,}": mb,
            }
        )
    return out


def activation_formula(recompute: str, flash_attention: bool, sequence_parallel: bool) -> str:
    """LaTeX of the Korthikanti et al. (2022) Table 2 row that the core applies to these
    settings.
    """
    if recompute == "full":
        return r"2\,sbh/t" if sequence_parallel else r"2\,sbh"
    score = r" + \frac{5as}{ht}" if recompute == "none" and not flash_attention else ""
    return (
        rf"sbh\left(\frac{{34}}{{t}}{score}\right)"
        if sequence_parallel
        else rf"sbh\left(10 + \frac{{24}}{{t}}{score}\right)"
    )


def how_computed_markdown(
    results: list[MemoryResult],
    chosen: MemoryResult,
    comm: tuple[ZeroComm, ZeroComm],
    gather_bytes: int | None,
    label: str,
    units: str = "binary",
    model=None,
) -> str:
    """The formulas behind the bars, each with this run's numbers beside it (markdown with
    KaTeX).
    """
    return "\n\n".join(
        how_computed_blocks(results, chosen, comm, gather_bytes, label, units, model)
    )


def how_computed_blocks(
    results: list[MemoryResult],
    chosen: MemoryResult,
    comm: tuple[ZeroComm, ZeroComm],
    gather_bytes: int | None,
    label: str,
    units: str = "binary",
    model=None,
) -> list[str]:
    """`how_computed_markdown` as separate markdown blocks: the KaTeX formula gets a block of its
    own,
    so a control it does not depend on (DP, ZeRO) leaves it, and its costly browser render,
    untouched."""

    def b(x):
        return format_bytes(x, units)

    rec = get_recipe(chosen.training.recipe)
    w, g, o = rec.param_bytes, rec.grad_bytes, rec.optimizer_bytes
    forms = {
        0: f"{w + g + o} Ψ",
        1: f"{w + g} Ψ + {o} Ψ / N_d",
        2: f"{w} Ψ + {g + o} Ψ / N_d",
        3: f"{w + g + o} Ψ / N_d",
    }
    n_d = chosen.layout.shard_degree or chosen.layout.dp
    text = [
        f"**Model states** (ZeRO paper, Sec. 5; recipe {RECIPE_LABELS[rec.name]} = {w} weights + "
        f"{g} "
        f"gradients + {o} optimizer bytes per parameter). Ψ = parameters on the fullest GPU after "
        "TP and PP "
        "(Megatron: layers / PP, weight matrices / TP, embedding on the first stage, head on the "
        "last); "
        f"N_d = sharding degree = {n_d:,}.",
        "",
        "| stage | PyTorch | model states per GPU | Ψ | = this run |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        z = r.layout.zero_stage
        states = r.states_bytes
        text.append(
            f"| {ZERO_STAGES[z].label} | {FSDP_NAMES[z]} | {forms[z]} | {r.params_on_gpu:,} "
            f"| {_exact(states, units)} |"
        )
    blocks = ["\n".join(text)]
    if chosen.layers_in_flight:
        tr, par = chosen.training, chosen.layout
        form = activation_formula(tr.recompute, tr.flash_attention, par.sequence_parallel)
        blocks += [
            "**Activations** per layer and micro-batch (Korthikanti et al. 2022, Table 2: 2-byte "
            "values, "
            f"1-byte dropout masks; s = {tr.seq_len:,}, b = {par.micro_batch}, "
            + (f"h = {model.hidden_size:,}, a = {model.num_heads}, " if model is not None else "")
            + f"t = {par.tp}"
            f"{', flash attention drops 5as/ht' if tr.flash_attention else ''}):",
            f"$$ {form} = {f'{chosen.layer_activation_bytes:,.0f}'.replace(',', '{,}')}\\ "
            f"\\text{{B}} $$",
            f"× {chosen.layers_in_flight:g} layers in flight on stage {chosen.stage} (1F1B: (PP − "
            "r) "
            f"micro-batches × L / PP layers) + {chosen.extra_activation_bytes:,.0f} B of embedding "
            "/ logits "
            f"= **{b(chosen.activations_bytes)}**.",
        ]
    d, z3 = comm
    ratio = f" = {z3.total_bytes / d.total_bytes:.2g}× DDP" if d.total_bytes else ""
    traffic = (
        "**Traffic per GPU per step** (ZeRO paper Sec. 7; a ring sends (N−1)/N of each tensor): "
        f"DDP all-reduces gradients, {b(d.total_bytes)} (2Ψ elements); {label} sends "
        f"{b(z3.total_bytes)}{ratio}."
    )
    if gather_bytes:
        traffic += (
            f"\nZeRO-3 / FULL_SHARD pays by all-gathering each layer's weights ({b(gather_bytes)}) "
            "before "
            "its forward and again before its backward (3Ψ elements per step)."
        )
    return blocks + [traffic]


def sizing_questions(
    units: str = "binary",
    gpu: str = "H100 SXM",
    reserve_fraction: float = 0.05,
    seq_len: int = 4096,
) -> list[tuple[str, str]]:
    """(question, answer computed by the core) for the seeds' three sizing questions."""

    def b(x):
        return format_bytes(x, units)

    def both(x):  # the seed's question is asked in TB; show the other convention beside it
        return f"{b(x)} ({format_bytes(x, 'binary' if units == 'decimal' else 'decimal')})"

    cap = GPU_PRESETS[gpu].hbm_bytes
    reserve, card = reserve_fraction * cap, f"{gpu} ({format_bytes(cap, 'decimal')})"

    def verdict(r):
        used, ok = r.total_bytes + reserve, fits(r.total_bytes, cap, reserve)
        return (
            f"{b(used)} of {b(cap)}: **{'fits' if ok else 'OOM'}** "
            f"({b(abs(cap - used))} {'to spare' if ok else 'over'})"
        )

    m70, m13 = preset("Llama-2 70B"), preset("Llama-2 13B")
    tr16, tr8 = (Training(global_batch=n, seq_len=seq_len, flash_attention=True) for n in (16, 8))
    full = Training(global_batch=16, seq_len=seq_len, flash_attention=True, recompute="full")
    z3_16 = Layout(dp=16, zero_stage=3)
    r70, r70_none = memory_per_gpu(m70, z3_16, full), memory_per_gpu(m70, z3_16, tr16)
    ddp13, z3_13 = (memory_per_gpu(m13, Layout(dp=8, zero_stage=z), tr8) for z in (0, 3))
    c0, c3 = (zero_comm_bytes_per_gpu(m13.num_params, 8, z) for z in (0, 3))
    return [
        (
            "How much memory do a 70B model's states need at 16 bytes/param?",
            f"70e9 × 16 B = **{both(model_state_bytes_per_gpu(70e9, 1, 0).total_bytes)}**; Llama-2 "
            "70B's "
            f"exact {m70.num_params:,} parameters × 16 B = "
            f"**{both(model_state_bytes_per_gpu(m70.num_params, 1, 0).total_bytes)}**, before "
            "activations, "
            "buffers and fragmentation.",
        ),
        (
            f"Does ZeRO-3 over 16 × {card} fit Llama-2 70B?",
            f"16 Ψ / 16 = Ψ bytes = **{b(r70.states_bytes)}** of model states per GPU. Full "
            f"recompute at {seq_len:,} "
            f"tokens adds {b(r70.activations_bytes)} of activations, the reserve {b(reserve)}: "
            f"{verdict(r70)}. "
            f"Without recompute (flash attention still on): {verdict(r70_none)}.",
        ),
        (
            f"Does a 13B model train on {card} cards under DDP, and under FULL_SHARD?",
            f"DDP: 16 Ψ = {b(ddp13.states_bytes)} of states per GPU → {verdict(ddp13)}. FULL_SHARD "
            "over 8: "
            f"{b(z3_13.states_bytes)} of states → {verdict(z3_13)}. The price: before each of the "
            f"{m13.num_layers} "
            "layers' forward, and again before its backward, every GPU all-gathers that layer's "
            "weights "
            f"({b(layer_allgather_bytes(m13))}), so each GPU sends {b(c3.total_bytes)} per step "
            "instead of DDP's "
            f"{b(c0.total_bytes)} ({c3.total_bytes / c0.total_bytes:.2g}×).",
        ),
    ]
