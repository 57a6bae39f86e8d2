"""The scenarios page's walkthrough text and one small figure per scenario (plain dict specs)."""

from __future__ import annotations

from dataclasses import dataclass

from core.memory import model_state_bytes_per_gpu
from core.parallel import ZERO_STAGES
from core.pipeline import SCHEDULES, closed_form_bubble_share
from core.planner import Breakdown
from core.scenarios import GPU, SEQ, Placement, ScaleOut, Schedules, Sentence, Sharding, Sizing
from core.units import (
    bytes_in,
    format_bandwidth,
    format_bytes,
    format_count,
    format_seconds,
    gib_or_gb,
)
from figures.data_parallel import fix_notes, scenario_figure
from figures.memory import RESERVE_COLOUR, SEGMENTS
from figures.pipeline import SCHEDULE_COLORS
from figures.planner import PART_COLOURS

FONT = {"size": 14}
OK, BAD = "#2E7D32", "#C62828"


@dataclass(frozen=True, kw_only=True)
class Walkthrough:
    """What the page prints for one scenario: the setting, numbered steps, the lesson, a
    question.
    """

    title: str
    intro: str
    steps: tuple[str, ...]
    takeaway: str
    how: str
    question: str
    answer: float
    unit: str
    explanation: str


def _pct(x: float) -> str:
    return f"{100 * x:.3g}%"


def _sec(seconds: float) -> str:
    """Seconds as seconds from 1 s up (a step of 74 s reads better beside 124 s than as 1.24
    min).
    """
    return f"{seconds:.3g} s" if seconds >= 1 else format_seconds(seconds)


def _verdict(ok: bool) -> str:
    return "**fits**" if ok else "**does not fit (OOM)**"


# ---------- 1 · Size a 70B run ----------
def sizing_text(s: Sizing, units: str) -> Walkthrough:
    b, n, cap = (lambda x: format_bytes(x, units)), s.shard_degree, s.capacity_bytes
    acts, none = s.activations_bytes, s.activations_bytes["none"]
    same = "the same" if acts["selective"] == none else format_bytes(acts["selective"], units)
    margin = cap - s.used_bytes("full")
    n2 = min(2 * n, 1024)
    answer = model_state_bytes_per_gpu(s.num_params, n2, 3).total_bytes
    unit = gib_or_gb(units)[0]
    return Walkthrough(
        title="1 · Size a 70B training run",
        intro=(
            f"Will a {format_count(s.num_params)}-parameter model train on {GPU} cards "
            f"({format_bytes(s.capacity_bytes, 'decimal')}), and on how many? "
            f"Mixed-precision Adam, the activations sized for {s.model}."
        ),
        steps=(
            f"**Model states.** Training keeps {s.bytes_per_param} bytes per parameter: 2 (bf16 "
            "weights) + 2 "
            "(gradients) + 12 (fp32 master copy, momentum, variance). "
            f"{format_count(s.num_params)} × "
            f"{s.bytes_per_param} B = **{b(s.states_bytes)}**, {s.states_bytes / cap:.3g}× one "
            "GPU's HBM — "
            "before a single activation is stored.",
            f"**Shard them: ZeRO-3 over {n} GPUs.** FULL_SHARD splits weights, gradients and "
            "optimizer state "
            f"alike: 16 Ψ / {n} = **{b(s.states_per_gpu_bytes)} per GPU** of {b(cap)}. {s.model} "
            "has "
            f"{s.model_params:,} parameters exactly: {b(s.model_states_per_gpu_bytes)}.",
            f"**Activations come on top.** One sequence of {SEQ:,} tokens, flash attention, every "
            "layer's "
            f"activations stored: **+{b(none)}**, {b(s.used_bytes('none'))} per GPU with the "
            f"{b(s.reserve_bytes)} reserve — {_verdict(s.fits('none'))}. Selective recompute saves "
            "nothing "
            "here: it drops the s² attention scores, which flash attention never stores."
            if acts["selective"] == none
            else f"**Activations come on top.** +{b(none)} with every layer stored, {same} with "
            "selective recompute.",
            "**Activation checkpointing.** Full recompute keeps only each layer's input "
            f"({b(acts['full'])}) "
            f"and recomputes the rest during backward: {b(s.used_bytes('full'))} per GPU — "
            f"{_verdict(s.fits('full'))}"
            + (f", {b(margin)} to spare" if margin >= 0 else "")
            + f" — for **+{_pct(s.extra_compute['full'])} compute** per step (one extra forward).",
        ),
        takeaway=(
            f"16 bytes per parameter turns {format_count(s.num_params)} parameters into "
            f"{b(s.states_bytes)}. "
            f"ZeRO-3 over {n} GPUs brings the states to {b(s.states_per_gpu_bytes)} per GPU; the "
            "activations are what sharding does not touch, and checkpointing trades them for "
            f"{_pct(s.extra_compute['full'])} more compute."
        ),
        how=(
            "States: `core.memory.model_state_bytes_per_gpu` (ZeRO paper Sec. 3.1 and 5: 2Ψ + 2Ψ + "
            "12Ψ, "
            "each sharded from stage 3, 2, 1 on). Activations: `core.memory.memory_per_gpu` with "
            "Korthikanti et al. 2022 Table 2 per layer × layers in flight (micro-batch 1, s = "
            f"{SEQ}, flash "
            "attention; full recompute keeps 2·s·b·h per layer). Extra compute: a second forward "
            "of every "
            "layer over 6N + attention FLOPs per token. Reserve: 5 % of HBM, the memory page's "
            "default."
        ),
        question=f"ZeRO-3 over {n2} GPUs instead: model states per GPU of the "
        f"{format_count(s.num_params)} model",
        answer=bytes_in(answer, unit),
        unit=unit,
        explanation=f"16 Ψ / N = 16 × {s.num_params:,} / {n2} bytes.",
    )


def sizing_figure(s: Sizing, units: str) -> dict:
    names = {"none": "no recompute", "selective": "selective recompute", "full": "full recompute"}
    cols = [
        (names[m], s.model_states_per_gpu_bytes, s.activations_bytes[m], s.fits(m)) for m in names
    ]
    return _memory_bars(
        cols,
        s.capacity_bytes,
        s.reserve_bytes,
        units,
        f"{s.model}, ZeRO-3 over {s.shard_degree} GPUs: memory per GPU",
    )


def _capacity_legend(capacity: float, units: str, what: str = f"{GPU} HBM") -> dict:
    """A legend entry for the dashed capacity line (a shape has none)."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "lines",
        "hoverinfo": "skip",
        "name": f"{what} {format_bytes(capacity, units)}",
        "line": {"color": BAD, "dash": "dash"},
    }


def _memory_bars(cols, capacity: float, reserve: float, units: str, title: str) -> dict:
    """Stacked bars: model states, activations, reserve; the HBM line; fits / OOM above each bar."""
    name, unit = gib_or_gb(units)
    x = [c[0] for c in cols]
    parts = [
        ("Model states", "#4C78A8", [c[1] for c in cols]),
        ("Activations", SEGMENTS[3][2], [c[2] for c in cols]),
        ("Reserve", RESERVE_COLOUR, [reserve] * len(cols)),
    ]
    data = [
        {
            "type": "bar",
            "name": p,
            "x": x,
            "y": [v / unit for v in vals],
            "marker": {"color": colour},
            "hovertemplate": f"{p}: %{{y:.4g}} {name}<extra></extra>",
        }
        for p, colour, vals in parts
    ]
    data.append(_capacity_legend(capacity, units))
    notes = [
        {
            "x": c[0],
            "y": (c[1] + c[2] + reserve) / unit,
            "yanchor": "bottom",
            "showarrow": False,
            "text": f"{'fits' if c[3] else 'OOM'} · {format_bytes(c[1] + c[2] + reserve, units)}",
            "font": {"color": OK if c[3] else BAD},
        }
        for c in cols
    ]
    top = max([capacity] + [c[1] + c[2] + reserve for c in cols]) / unit
    return {
        "data": data,
        "layout": {
            "title": {"text": title},
            "barmode": "stack",
            "font": FONT,
            "height": 420,
            "annotations": notes,
            "yaxis": {"title": {"text": f"memory per GPU ({name})"}, "range": [0, 1.15 * top]},
            "shapes": [
                {
                    "type": "line",
                    "xref": "paper",
                    "x0": 0,
                    "x1": 1,
                    "y0": capacity / unit,
                    "y1": capacity / unit,
                    "line": {"color": BAD, "dash": "dash"},
                }
            ],
            "legend": {"orientation": "h", "y": -0.15, "traceorder": "normal"},
            "margin": {"t": 60, "b": 40},
        },
    }


# ---------- 2 · DP slower at scale ----------
def scale_out_text(s: ScaleOut, units: str, bw_units: str) -> Walkthrough:
    r, b, c = s.run, (lambda x: format_bytes(x, units)), s.cluster
    small, large, job = r.small, r.large, r.job
    sync = "one all-reduce after backward" if job.bucket_bytes is None else "bucketed all-reduce"
    helps = sorted(
        (e for e in s.effects if e.helps and e.label != "all three"),
        key=lambda e: -e.tokens_per_s_gain,
    )
    hurts = [e.label for e in s.effects if not e.helps]
    unit = gib_or_gb(units)[0]
    return Walkthrough(
        title=f"2 · A data-parallel job that is fine on {small.num_gpus} GPUs and slow on "
        f"{large.num_gpus}",
        intro=(
            f"{format_count(job.num_params)} parameters, DDP with "
            f"{job.grad_bytes_per_param:g}-byte gradients, "
            f"{job.tokens_per_gpu:,.0f} tokens per GPU, {sync}; nodes of {c.gpus_per_node}× "
            f"{c.gpu.name} "
            f"({c.intra_link.name}) with {c.nics_per_node}× {c.inter_link.name} each. From "
            f"{small.num_gpus} to {large.num_gpus} GPUs every step takes **{r.step_ratio:.3g}× "
            "longer**."
        ),
        steps=(
            f"**Bytes per rank.** The gradient is {b(job.grad_bytes)}. A ring all-reduce sends "
            "2(N−1)/N of it per "
            f"rank: {b(r.sim_bytes_sent_per_rank_small)} at N = {small.num_gpus}, "
            f"{b(r.sim_bytes_sent_per_rank_large)} at N = {large.num_gpus} (counted by the ring "
            "simulator). "
            "The bytes barely grew.",
            f"**The bottleneck link.** On {small.num_gpus} GPUs the ring never leaves "
            f"{small.bottleneck_link}, "
            f"{format_bandwidth(small.bottleneck_bytes_per_s, bw_units)}; on {large.num_gpus} it "
            "crosses nodes "
            f"through **{large.bottleneck_link}**, "
            f"{format_bandwidth(large.bottleneck_bytes_per_s, bw_units)}: "
            f"{r.bandwidth_drop:.3g}× less. The all-reduce goes from "
            f"{format_seconds(small.comm_s)} to "
            f"{format_seconds(large.comm_s)} while compute stays "
            f"{format_seconds(large.compute_s)}.",
            f"**The bill.** Step {format_seconds(small.step_s)} → {format_seconds(large.step_s)}; "
            "tokens/s "
            f"×{r.throughput_ratio:.3g} for {r.gpu_ratio:g}× the GPUs (scaling efficiency "
            f"{r.throughput_ratio / r.gpu_ratio:.0%}).",
            f"**Each fix, applied at {large.num_gpus} GPUs:**\n"
            + "\n".join("   " + x for x in fix_notes(s.effects)),
            "**Honest verdict.** What works changes the ratio of compute to bytes on the slow "
            "link: "
            + ", ".join(f"{e.label} (×{e.tokens_per_s_gain:.3g})" for e in helps)
            + "."
            + (
                f" Not worth it here: {', '.join(hurts)} — overlap can hide at most one backward "
                "pass, and each "
                "extra bucket pays the network latency again."
                if hurts
                else ""
            ),
        ),
        takeaway=(
            "The GPUs did not get slower — the wire did: the all-reduce left "
            f"{small.bottleneck_link} for "
            f"{large.bottleneck_link}, {r.bandwidth_drop:.3g}× less bandwidth for the same ≈2× "
            "gradient "
            "bytes per rank. More tokens per GPU or more NIC bandwidth fix it; more GPUs do not."
        ),
        how=(
            "`core.data_parallel.slower_at_scale` prices each run with "
            "`core.data_parallel.dp_step`: compute = "
            "6·N·tokens / (peak × MFU 0.4), the all-reduce from the collectives cost model on the "
            "cluster's "
            "links (α + bytes / bandwidth per ring step), buckets overlapped with backward. Bytes "
            "per rank come "
            "from `core.collectives.scan_bytes_per_rank` (the numpy ring). The NIC fix reruns the "
            "same step "
            "with one 100 GbE NIC per GPU."
        ),
        question=(
            f"Ring all-reduce of this {b(job.grad_bytes)} gradient over N = {large.num_gpus}: "
            "bytes each "
            "rank sends"
        ),
        answer=bytes_in(r.sim_bytes_sent_per_rank_large, unit),
        unit=unit,
        explanation=f"2(N−1)/N × S = 2 × {large.num_gpus - 1}/{large.num_gpus} × "
        f"{b(job.grad_bytes)}.",
    )


def scale_out_figure(s: ScaleOut) -> dict:
    fig = scenario_figure(s.run)  # the data-parallel page's figure, a touch larger for a projector
    fig["layout"].update(font=FONT, height=480)
    return fig


# ---------- 3 · 3D placement, and 6 · the sentence ----------
def _breakdown_bars(outcomes, labels, title: str) -> dict:
    data = []
    for field, label in Breakdown.LABELS.items():
        vals = [getattr(o.breakdown, field) for o in outcomes]
        if any(vals):
            data.append(
                {
                    "type": "bar",
                    "name": label,
                    "x": labels,
                    "y": vals,
                    "marker": {"color": PART_COLOURS[field]},
                    "hovertemplate": f"{label}: %{{y:.4g}} s<extra></extra>",
                }
            )
    notes = [
        {"x": a, "y": o.step_s, "yanchor": "bottom", "showarrow": False, "text": _sec(o.step_s)}
        for a, o in zip(labels, outcomes)
    ]
    return {
        "data": data,
        "layout": {
            "title": {"text": title},
            "barmode": "stack",
            "font": FONT,
            "height": 440,
            "annotations": notes,
            "yaxis": {
                "title": {"text": "seconds per step"},
                "range": [0, 1.15 * max(o.step_s for o in outcomes)],
            },
            "legend": {"orientation": "h", "y": -0.15},
            "margin": {"t": 60, "b": 40},
        },
    }


def _setting(p: Placement) -> str:
    t = p.training
    return f"{t.global_batch:,} sequences of {t.seq_len:,} tokens per step, {t.recompute} recompute"


def placement_text(p: Placement, units: str) -> Walkthrough:
    b, i, a = (lambda x: format_bytes(x, units)), p.inside, p.across
    ratio = p.tp_bytes_per_microbatch / p.pp_hop_bytes
    return Walkthrough(
        title=f"3 · Place 3D parallelism on {p.nodes} nodes × {p.gpus_per_node} GPUs",
        intro=(
            f"{p.model}, {_setting(p)}, on {p.nodes} × {p.gpus_per_node} {p.gpu} with {i.tp_link} "
            "inside "
            f"a node and {i.pp_link} between nodes. Layout: **{i.label}**."
        ),
        steps=(
            f"**Why these degrees.** TP × PP = {p.gpus_per_node} × {p.nodes} uses every GPU, so DP "
            "= 1. "
            f"Memory per GPU {b(i.memory_bytes)} of {b(i.usable_bytes)} usable: "
            f"{_verdict(i.fits)}.",
            f"**TP inside the node** (rank order {i.order}, TP innermost): each TP group is one "
            "node and its "
            f"all-reduces run on {i.tp_link}. Per micro-batch every GPU sends "
            f"**{b(p.tp_bytes_per_microbatch)}** "
            "of TP traffic, on the critical path of every layer.",
            "**PP across nodes.** A stage boundary carries one micro-batch's activations, b·s·h·2 "
            "= "
            f"**{b(p.pp_hop_bytes)}** ({ratio:.3g}× less than TP), over {i.pp_link}: exposed "
            "pipeline sends "
            f"{_sec(i.breakdown.pp_p2p_s)} of a {_sec(i.step_s)} step.",
            f"**Flip it** (order {a.order}): each TP group now spans nodes and its all-reduces run "
            "on "
            f"{a.tp_link}. Exposed TP {_sec(i.breakdown.tp_s)} → **{_sec(a.breakdown.tp_s)}**, "
            f"step {_sec(i.step_s)} → **{_sec(a.step_s)}** ({a.step_s / i.step_s:.3g}×); "
            "moving PP onto NVLink saves only "
            f"{_sec(i.breakdown.pp_p2p_s - a.breakdown.pp_p2p_s)}.",
        ),
        takeaway=(
            f"TP sends {ratio:.3g}× more bytes per micro-batch than a pipeline hop, inside every "
            "layer: "
            "give it the fastest link, the NVLink inside a node. PP's few small messages survive "
            "the network."
        ),
        how=(
            "`core.planner.evaluate` for both rank orders (`core.parallel.group_span` finds which "
            "link each "
            "group uses; TP time from `core.tensor_parallel.comm`'s b·s·h·2 messages, 2(t−1)/t of "
            "each per GPU; pipeline "
            "from the schedule simulator). TP bytes per micro-batch = layers per stage × "
            "all-reduces per layer "
            "(6 with full recompute) × 2(t−1)/t × b·s·h·2."
        ),
        question="How many times longer is the step when TP crosses nodes?",
        answer=a.step_s / i.step_s,
        unit="×",
        explanation=f"{_sec(a.step_s)} / {_sec(i.step_s)}.",
    )


def placement_figure(p: Placement) -> dict:
    labels = [f"TP in node ({p.inside.order})", f"TP across nodes ({p.across.order})"]
    return _breakdown_bars([p.inside, p.across], labels, "Step time: where TP sits decides it")


# ---------- 4 · GPipe vs 1F1B ----------
def schedules_text(s: Schedules) -> Walkthrough:
    p, ms = s.stages, sorted({m for _, m in s.rows})
    r = s.rows
    lo, hi = ms[0], ms[-1]
    bub = "; ".join(
        f"M = {m}: {p - 1}/{m + p - 1} = **{r['1f1b', m].closed_form:.2%}** (simulated GPipe "
        f"{r['gpipe', m].simulated:.2%}, 1F1B {r['1f1b', m].simulated:.2%})"
        for m in ms
    )
    q_m = 4 * p
    return Walkthrough(
        title=f"4 · GPipe vs 1F1B at P = {p}",
        intro=f"A pipeline of {p} stages, t_B = 2 t_F, at M = {lo} and M = {hi} micro-batches per "
        "step.",
        steps=(
            "**The bubble.** Both schedules idle (P−1)(t_F + t_B) per rank while the pipe fills "
            "and drains, so "
            f"the idle share is (P−1)/(M+P−1): {bub}.",
            "**GPipe's memory.** All M forwards run before the first backward, so the first rank "
            "holds M "
            f"micro-batches of activations: **{r['gpipe', lo].peak_activations}** at M = {lo}, "
            f"**{r['gpipe', hi].peak_activations}** at M = {hi}.",
            "**1F1B's memory.** Backward starts as soon as each micro-batch returns: rank r holds "
            "at most P − r, "
            f"so the fullest holds **{r['1f1b', hi].peak_activations}** at M = {hi} "
            f"({r['gpipe', hi].peak_activations / r['1f1b', hi].peak_activations:.3g}× less than "
            "GPipe, same "
            f"bubble). At M = {lo} they hold {r['gpipe', lo].peak_activations} and "
            f"{r['1f1b', lo].peak_activations}: 1F1B's saving grows with M, exactly when M is "
            "raised to shrink "
            "the bubble.",
            "**So:** shrink the bubble with more micro-batches, and run 1F1B so that more "
            "micro-batches do not "
            "mean more memory. More stages make the bubble bigger, not smaller.",
        ),
        takeaway=(
            f"At P = {p}, going from M = {lo} to M = {hi} cuts the bubble from "
            f"{r['1f1b', lo].closed_form:.1%} to {r['1f1b', hi].closed_form:.1%}; 1F1B keeps the "
            f"activations at {r['1f1b', hi].peak_activations} micro-batches where GPipe needs "
            f"{r['gpipe', hi].peak_activations}."
        ),
        how=(
            "`core.pipeline.simulate` runs each rank's op list under the stage dependencies (t_F = "
            "1 s, "
            "t_B = 2 s, no p2p latency); bubble fraction = Σ idle / (P · makespan). Closed form: "
            "`closed_form_bubble_share`, GPipe's (P−1)/(M+P−1). Peak activations: the most "
            "micro-batches "
            "whose forward has started and backward not finished, on any rank."
        ),
        question=f"1F1B at P = {p}, M = {q_m}: bubble fraction",
        unit="%",
        answer=100 * closed_form_bubble_share("1f1b", p, q_m),
        explanation=f"(P−1)/(M+P−1) = {p - 1}/{q_m + p - 1}.",
    )


def schedules_figure(s: Schedules) -> dict:
    ms = sorted({m for _, m in s.rows})
    x = [f"M = {m}" for m in ms]
    names = {k: SCHEDULES[k].label for k in ("gpipe", "1f1b")}
    data = []
    for k, name in names.items():
        c = SCHEDULE_COLORS[k]
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": x,
                "y": [100 * s.rows[k, m].simulated for m in ms],
                "marker": {"color": c},
                "legendgroup": k,
                "text": [f"{100 * s.rows[k, m].simulated:.1f}%" for m in ms],
                "textposition": "outside",
            }
        )
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": x,
                "y": [s.rows[k, m].peak_activations for m in ms],
                "marker": {"color": c},
                "legendgroup": k,
                "showlegend": False,
                "xaxis": "x2",
                "yaxis": "y2",
                "text": [s.rows[k, m].peak_activations for m in ms],
                "textposition": "outside",
            }
        )
    top = max(r.peak_activations for r in s.rows.values())
    return {
        "data": data,
        "layout": {
            "title": {"text": f"P = {s.stages}: same bubble, different memory"},
            "barmode": "group",
            "font": FONT,
            "height": 420,
            "xaxis": {"domain": [0, 0.45]},
            "xaxis2": {"domain": [0.55, 1], "anchor": "y2"},
            "yaxis": {"title": {"text": "bubble fraction (%)"}, "range": [0, 60]},
            "yaxis2": {
                "title": {"text": "peak activations (micro-batches)"},
                "anchor": "x2",
                "range": [0, 1.2 * top],
            },
            "legend": {"orientation": "h", "y": -0.15},
            "margin": {"t": 60, "b": 40},
        },
    }


# ---------- 5 · DDP vs FSDP ----------
def sharding_text(s: Sharding, units: str) -> Walkthrough:
    b, d, f = (lambda x: format_bytes(x, units)), s.ddp, s.fsdp
    got = s.layer_gather_bytes * (s.dp - 1) / s.dp
    n2 = 2 * s.dp
    unit = gib_or_gb(units)[0]
    return Walkthrough(
        title=f"5 · DDP vs FSDP for {s.model}",
        intro=(
            f"{s.num_params:,} parameters on {s.dp} × {GPU} "
            f"({format_bytes(s.capacity_bytes, 'decimal')}), "
            f"mixed-precision Adam, one sequence of {SEQ:,} tokens per GPU, flash attention."
        ),
        steps=(
            f"**DDP replicates everything.** 16 B × Ψ = {b(d.states_bytes)} of model states on "
            "every GPU, + "
            f"{b(d.activations_bytes)} activations = **{b(d.total_bytes + s.reserve_bytes)}** with "
            "the reserve: "
            f"{_verdict(s.fits(d))} — on any number of GPUs, since DDP adds replicas, not room.",
            f"**FSDP FULL_SHARD (= ZeRO-3) over {s.dp}.** Each GPU keeps 1/{s.dp} of weights, "
            "gradients and "
            f"optimizer state: {b(f.states_bytes)}, + {b(f.activations_bytes)} activations = "
            f"**{b(f.total_bytes + s.reserve_bytes)}**: {_verdict(s.fits(f))}.",
            "**The price: an all-gather per layer.** Before each layer's forward, and again "
            "before its "
            f"backward, FSDP gathers that layer's full bf16 weights, {b(s.layer_gather_bytes)}; "
            "each GPU "
            f"receives {(s.dp - 1)}/{s.dp} of it, {b(got)}, × {s.num_layers} layers × 2 passes.",
            f"**Per step**, each GPU sends {b(s.fsdp_comm.total_bytes)} under FULL_SHARD vs "
            f"{b(s.ddp_comm.total_bytes)} under DDP "
            f"({s.fsdp_comm.total_bytes / s.ddp_comm.total_bytes:.3g}×): "
            "the gradient reduce-scatter plus two weight all-gathers, against one all-reduce. FSDP "
            "prefetches "
            "the next layer's gather during the current layer's compute to hide it.",
        ),
        takeaway=(
            f"Sharding takes {s.model} from {b(d.total_bytes + s.reserve_bytes)} to "
            f"{b(f.total_bytes + s.reserve_bytes)} per GPU; the bill is "
            f"{s.fsdp_comm.total_bytes / s.ddp_comm.total_bytes:.3g}× the communication, paid "
            "layer by "
            "layer as all-gathers."
        ),
        how=(
            "`core.memory.memory_per_gpu` at ZeRO stage 0 and 3 (FSDP NO_SHARD and FULL_SHARD, "
            "`core.memory.FSDP_STRATEGIES`); `layer_allgather_bytes` = one layer's parameters × 2 "
            "B; "
            "`zero_comm_bytes_per_gpu`: ZeRO paper Sec. 7, 2Ψ for DDP and 3Ψ for stage 3 (× "
            "(N−1)/N × bytes "
            "per element)."
        ),
        question=f"FULL_SHARD over {n2} GPUs instead: model states per GPU",
        answer=bytes_in(model_state_bytes_per_gpu(s.num_params, n2, 3).total_bytes, unit),
        unit=unit,
        explanation=f"16 Ψ / N = 16 × {s.num_params:,} / {n2} bytes (⌈Ψ/N⌉ per shard).",
    )


def sharding_figure(s: Sharding, units: str) -> dict:
    cols = []
    for label, r in ((ZERO_STAGES[0].label, s.ddp), (f"FULL_SHARD over {s.dp}", s.fsdp)):
        st = r.states_bytes
        cols.append((label, st, r.activations_bytes, s.fits(r)))
    return _memory_bars(
        cols, s.capacity_bytes, s.reserve_bytes, units, f"{s.model}: memory per GPU"
    )


# ---------- 6 · The sentence ----------
def sentence_text(s: Sentence, units: str) -> Walkthrough:
    b, i, a, d = (lambda x: format_bytes(x, units)), s.inside, s.across, s.ddp
    ratio = s.tp_bytes_per_microbatch / s.pp_hop_bytes
    zero = f"ZeRO-{s.zero_stage}"
    faster = 1 - s.fastest_step_s / i.step_s
    return Walkthrough(
        title="6 · “The sentence”, backed by numbers",
        intro=(
            "*“TP = 8 inside the node because the in-layer all-reduce needs NVLink, PP across "
            "nodes because "
            "activations tolerate InfiniBand, and ZeRO on top because the optimizer state won't "
            "fit.”* "
            f"For {s.model} on the planner's default cluster ({s.nodes} × {s.gpus_per_node} "
            f"{s.gpu}, "
            f"{_setting(s)}): **{i.label}**."
        ),
        steps=(
            f"**TP = {s.gpus_per_node} inside the node, because the in-layer all-reduce needs "
            "NVLink.** Exposed "
            f"TP time is {_sec(i.breakdown.tp_s)} on {i.tp_link}; ordered so that TP groups span "
            "nodes "
            f"({a.order}, {a.tp_link}) it is **{_sec(a.breakdown.tp_s)}** "
            f"({a.breakdown.tp_s / i.breakdown.tp_s:.3g}×) and the step {_sec(i.step_s)} → "
            f"{_sec(a.step_s)}.",
            f"**PP across nodes, because activations tolerate InfiniBand.** A pipeline hop carries "
            f"{b(s.pp_hop_bytes)} per micro-batch while each GPU sends "
            f"{b(s.tp_bytes_per_microbatch)} of TP "
            f"traffic ({ratio:.3g}× more); the pipeline's sends over {i.pp_link} cost "
            f"{_sec(i.breakdown.pp_p2p_s)}, {i.breakdown.pp_p2p_s / i.step_s:.2%} of the step.",
            f"**ZeRO on top, because the optimizer state won't fit.** Without it each GPU holds "
            f"{b(d.memory_bytes)}, {b(d.optimizer_bytes)} of it Adam state, against "
            f"{b(d.usable_bytes)} usable: "
            f"{_verdict(d.fits)}. {zero} shards it over the DP ranks: optimizer "
            f"{b(i.optimizer_bytes)}, total "
            f"**{b(i.memory_bytes)}**: {_verdict(i.fits)}. ({zero} is the lowest stage that fits.)",
            "**Not the last word.** The planner's search over every layout finds "
            f"**{s.fastest_label}** at "
            f"{_sec(s.fastest_step_s)} per step, {faster:.0%} less time than {_sec(i.step_s)}: the "
            "sentence "
            "places the axes right; the degrees are worth a search.",
        ),
        takeaway=(
            "Each clause is a measured number: TP off NVLink costs "
            f"{a.breakdown.tp_s / i.breakdown.tp_s:.3g}× "
            f"the TP time, PP's sends are {i.breakdown.pp_p2p_s / i.step_s:.2%} of the step on "
            "InfiniBand, "
            f"and without ZeRO the GPU needs {b(d.memory_bytes)}."
        ),
        how=(
            "Every number is `core.planner.evaluate` of one layout on the cluster (step-time "
            "breakdown, spans, "
            "memory with the planner's 10 % headroom), plus `core.tensor_parallel.tp_comm_plan` "
            "for bytes per "
            "micro-batch; the last step is `core.planner.search` over every DP × TP × PP × ZeRO × "
            "micro-batch "
            "× schedule."
        ),
        question="How many times more bytes per micro-batch does a GPU send for TP than one "
        "pipeline hop carries?",
        answer=ratio,
        unit="×",
        explanation=f"{ratio:.4g} = layers per stage × all-reduces per layer × 2(t−1)/t: each "
        "all-reduce and each "
        "hop moves b·s·h·2 bytes.",
    )


def sentence_figure(s: Sentence, units: str) -> dict:
    name, unit = gib_or_gb(units)
    i, a, d = s.inside, s.across, s.ddp
    bar = lambda x, y, colours, xa, ya, text: {  # noqa: E731
        "type": "bar",
        "x": x,
        "y": y,
        "marker": {"color": colours},
        "xaxis": xa,
        "yaxis": ya,
        "text": text,
        "textposition": "outside",
        "cliponaxis": False,
        "showlegend": False,
    }
    cap = d.usable_bytes / unit
    data = [
        bar(
            ["TP in node", "TP across"],
            [i.breakdown.tp_s, a.breakdown.tp_s],
            [OK, BAD],
            "x",
            "y",
            [f"{v:.3g} s" for v in (i.breakdown.tp_s, a.breakdown.tp_s)],
        ),
        bar(
            ["TP per GPU", "PP hop"],
            [s.tp_bytes_per_microbatch / unit, s.pp_hop_bytes / unit],
            ["#D62728", "#FF9896"],
            "x2",
            "y2",
            [format_bytes(v, units) for v in (s.tp_bytes_per_microbatch, s.pp_hop_bytes)],
        ),
        bar(
            ["no ZeRO", f"ZeRO-{s.zero_stage}"],
            [d.memory_bytes / unit, i.memory_bytes / unit],
            [BAD if not d.fits else OK, OK if i.fits else BAD],
            "x3",
            "y3",
            [format_bytes(v, units) for v in (d.memory_bytes, i.memory_bytes)],
        ),
    ]
    top = max(cap, d.memory_bytes / unit, i.memory_bytes / unit)
    return {
        "data": data,
        "layout": {
            "title": {"text": "The sentence, clause by clause"},
            "font": FONT,
            "height": 420,
            "xaxis": {"domain": [0, 0.28], "title": {"text": "TP needs NVLink"}},
            "xaxis2": {
                "domain": [0.36, 0.64],
                "anchor": "y2",
                "title": {"text": "PP tolerates InfiniBand"},
            },
            "xaxis3": {
                "domain": [0.72, 1],
                "anchor": "y3",
                "title": {"text": f"ZeRO makes it fit (dashed: {cap:.3g} {name} usable)"},
            },
            "yaxis": {
                "title": {"text": "exposed TP (s per step)"},
                "range": [0, 1.2 * a.breakdown.tp_s],
            },
            "yaxis2": {
                "title": {"text": f"bytes per micro-batch ({name})"},
                "anchor": "x2",
                "type": "log",
                "dtick": 1,
            },
            "yaxis3": {
                "title": {"text": f"memory per GPU ({name})"},
                "anchor": "x3",
                "range": [0, 1.2 * top],
            },
            "shapes": [
                {
                    "type": "line",
                    "xref": "x3 domain",
                    "yref": "y3",
                    "x0": 0,
                    "x1": 1,
                    "y0": cap,
                    "y1": cap,
                    "line": {"color": BAD, "dash": "dash"},
                }
            ],
            "margin": {"t": 60, "b": 60},
        },
    }


def walkthrough(result, units: str, bw_units: str) -> tuple[Walkthrough, dict]:
    """The text and figure of any scenario result."""
    if isinstance(result, Sizing):
        return sizing_text(result, units), sizing_figure(result, units)
    if isinstance(result, ScaleOut):
        return scale_out_text(result, units, bw_units), scale_out_figure(result)
    if isinstance(result, Sentence):  # before Placement: a Sentence is a Placement
        return sentence_text(result, units), sentence_figure(result, units)
    if isinstance(result, Placement):
        return placement_text(result, units), placement_figure(result)
    if isinstance(result, Schedules):
        return schedules_text(result), schedules_figure(result)
    if isinstance(result, Sharding):
        return sharding_text(result, units), sharding_figure(result, units)
    raise ValueError(f"unknown scenario result {type(result).__name__}")
