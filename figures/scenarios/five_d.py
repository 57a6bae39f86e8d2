"""The two 5-D scenarios: train at 128K context (7) and an MoE on two nodes (8)."""

from __future__ import annotations

from core.scenarios.five_d import LLAMA3_128K, LLAMA3_SOURCE, LongContext, MoeTwoNodes
from core.units import bytes_in, format_bytes, format_count, format_seconds, gib_or_gb
from figures.scenarios.common import FONT, Walkthrough, memory_bars, verdict
from figures.style import COLOURS, bottom_legend


# ---------- 7 · Train at 128K context ----------
def long_context_text(s: LongContext, units: str) -> Walkthrough:
    b, r, c = (lambda x: format_bytes(x, units)), s.row, s.cp
    one, link, ll = s.rows[0], s.cp_link, LLAMA3_128K
    need = s.smallest_fit
    thr = s.threshold_tokens[link]
    local = s.seq_len // c
    q = next((x for x in s.rows if x.cp == 2 * c), s.rows[-1])
    unit = gib_or_gb(units)[0]
    last = s.rows[-1]  # the largest CP the scenario tries
    over = last.states_bytes + last.activations_bytes + s.reserve_bytes - s.capacity_bytes
    none_fits = (
        f"no CP up to {last.cp} fits: at CP {last.cp} states + activations + reserve exceed the "
        f"{b(s.capacity_bytes)} card by {b(over)} — shorten the sequence, or spread it over "
        "more ranks than that"
    )
    return Walkthrough(
        title=f"7 · Train {s.model} at {s.seq_len:,} tokens of context",
        intro=(
            f"The long-context stage of a run: one sequence of {s.seq_len:,} tokens per "
            f"micro-batch, TP {s.tp} inside each 8-GPU node, PP {s.pp}, sequence parallel, "
            "selective recompute, flash attention, on H100s. Does it fit, and what does the "
            "fix cost?"
        ),
        steps=(
            f"**Without CP it cannot fit.** Activations per GPU: **{b(one.activations_bytes)}** "
            f"(+{b(one.states_bytes)} of model states) on a {b(s.capacity_bytes)} card — "
            f"{verdict(one.fits)}. More PP does not help: 1F1B's first stage holds PP "
            f"micro-batches of L/PP layers each, all {s.pp} × L/{s.pp} = L layers' worth; "
            f"TP {s.tp} is already the whole node.",
            "**Context parallelism cuts the sequence.** Each of C ranks keeps S/C tokens of "
            "every activation, so they fall by C: "
            + ", ".join(f"C = {x.cp}: {b(x.activations_bytes)}" for x in s.rows)
            + f". The smallest C that fits with the {b(s.reserve_bytes)} reserve: **CP = "
            f"{need}** ({next(x.gpus for x in s.rows if x.cp == need)} GPUs)."
            if need
            else "**Context parallelism cuts the sequence**, but "
            + ", ".join(f"C = {x.cp}: {b(x.activations_bytes)}" for x in s.rows)
            + f": {none_fits}.",
            f"**At CP = {c}:** {b(r.activations_bytes)} of activations + {b(r.states_bytes)} of "
            f"states per GPU on {r.gpus} GPUs — {verdict(r.fits)}.",
            f"**The price: K/V around a ring.** Every layer, each rank passes its K/V block "
            f"({format_bytes(s.kv_block_bytes, units)}) C − 1 = {c - 1} times, "
            f"{format_bytes(s.ring_bytes, units)} per layer forward. TP fills the node, so the "
            f"CP ring runs over **{link}**: one hop takes "
            f"{format_seconds(s.hop_s[link])} vs {format_seconds(s.block_compute_s)} of "
            f"attention on the block it overlaps — **{'hidden' if s.hidden else 'exposed'}**. "
            f"It hides while each rank holds ≥ {thr:,.0f} tokens on {link} "
            f"(here S/C = {local:,}); on {s.nvlink}: {s.threshold_tokens[s.nvlink]:,.0f}.",
            f"**What Llama 3 did.** The 405B model's 128K stage ran TP {ll['tp']}, CP "
            f"{ll['cp']}, PP {ll['pp']}, DP {ll['dp']} on {ll['gpus']:,} H100s "
            f"({LLAMA3_SOURCE}): CP {ll['cp']} leaves {ll['seq_len'] // ll['cp']:,} tokens per "
            "rank, far above the hiding threshold.",
        ),
        takeaway=(
            f"At {s.seq_len:,} tokens the activations, not the weights, overflow the GPU: "
            f"{b(one.activations_bytes)} per GPU with TP and PP alone. CP divides them by C; "
            + (f"CP {need} fits" if need else none_fits)
            + ", and the ring's K/V hops hide behind the attention as long as each "
            f"rank keeps ≳ {thr:,.0f} tokens on {link}."
        ),
        headline=(
            f"No CP: {b(one.activations_bytes)} of activations a GPU; "
            + (f"CP {need} fits" if need else f"no CP up to {last.cp} fits ({b(over)} over)")
            + (
                "."  # the ring's word would push the line past 90 characters
                if not need
                else f"; at CP {c} the K/V ring {'hides' if s.hidden else 'is exposed'}."
                if c > 1
                else "; CP 1 has no ring."
            )
        ),
        how=(
            "Activations and states: `core.memory.memory_per_gpu`, the memory page's fullest stage "
            "(Korthikanti et al. 2022 Table 2 per layer at S/C tokens with SP over TP, selective "
            "recompute, flash; the 1F1B first stage holds PP micro-batches of L/PP layers; "
            "states: the first stage's layers and embedding, bf16 weights and gradients, Adam "
            "over DP × CP, ZeRO-1). Ring: "
            "`core.context_parallel.cp_traffic` and `step_times` (block attention 4 b s_c² h d "
            "FLOPs at the dense peak, halved for a balanced causal step; hop = B_kv / link "
            "bandwidth, one NIC per GPU). Reserve and verdict: `core.memory.budget`."
        ),
        question=f"Activations per GPU at CP = {q.cp}",
        answer=bytes_in(q.activations_bytes, unit),
        unit=unit,
        explanation=f"S/C tokens per rank: {b(one.activations_bytes)} / {q.cp}.",
    )


def long_context_figure(s: LongContext, units: str) -> dict:
    cols = [
        (f"CP {r.cp}<br>{r.gpus} GPUs", r.states_bytes, r.activations_bytes, r.fits) for r in s.rows
    ]
    fig = memory_bars(
        cols,
        s.capacity_bytes,
        s.reserve_bytes,
        units,
        f"{s.model} at {s.seq_len:,} tokens: memory per GPU vs context parallelism",
    )
    return fig  # the bar labels name CP and the GPUs (an axis title would sit on the legend)


# ---------- 8 · An MoE on two nodes ----------
def moe_text(s: MoeTwoNodes, units: str) -> Walkthrough:
    b, r = (lambda x: format_bytes(x, units)), s.row
    ins, acr = s.inside, s.across
    fit = next((x.ep for x in s.rows if x.fits), None)
    total = (acr.forward_s + acr.backward_s) * s.moe_layers
    return Walkthrough(
        title=f"8 · {s.model} on two nodes",
        intro=(
            f"{s.model} on {s.nodes} × {s.gpus_per_node} H100: DP 16 (ZeRO-1), micro-batch 1 "
            f"of {s.seq_len:,} tokens, full recompute. The experts fold into the same GPUs "
            "(expert parallelism EP): where should an EP group sit?"
        ),
        steps=(
            f"**Total vs active.** {format_count(s.total_params)} parameters, but each token "
            f"uses only {format_count(s.active_params)} (top-{s.top_k} of {s.experts} experts "
            f"per layer): the compute of a {format_count(s.active_params)} model, the memory "
            f"of a {format_count(s.total_params)} one.",
            "**Shard the experts.** Model states per GPU: "
            + ", ".join(f"EP {x.ep}: {b(x.states_bytes)}" for x in s.rows)
            + f" (+{b(s.activations_bytes)} of layer inputs). "
            + (
                f"EP {fit} is the first that fits with the reserve"
                if fit
                else f"None fits with the reserve, not even EP {s.rows[-1].ep}"
            )
            + f"; at EP {s.ep}: {verdict(r.fits)}.",
            f"**The all-to-all.** Each MoE layer sends every token to its experts and "
            f"back (top-{s.top_k}): per GPU a buffer of {b(ins.buffer_bytes)} per all-to-all, "
            f"2 forward + 2 backward + 2 recomputed. EP {s.ep} inside one node: "
            f"{b(ins.nvlink_bytes)} over NVLink, nothing on the NICs, "
            f"{format_seconds(ins.all_to_all_s)} each.",
            f"**Across the two nodes** ({max(s.ep // 2, 1)} GPUs of the group on each): "
            f"{b(acr.nic_bytes)} of every all-to-all goes through the NICs, "
            f"{format_seconds(acr.all_to_all_s)} each — "
            f"{acr.all_to_all_s / ins.all_to_all_s:.3g}× slower."
            if s.ep > 1
            else "**Across the two nodes**: at EP 1 there is no all-to-all at all.",
            f"**Against compute.** The expert GEMMs of a layer take "
            f"{format_seconds(s.expert_compute_s)} (forward, backward, recompute); the "
            f"all-to-alls add {s.overhead(ins):.1%} inside a node vs {s.overhead(acr):.1%} "
            f"across nodes ({format_seconds(total)} per micro-batch over its {s.moe_layers} MoE "
            "layers). "
            "Keep EP inside the NVLink domain and let DP cross the nodes; beyond one node, "
            "DeepSeek-V3 limits each token to 4 nodes for the same reason.",
        ),
        takeaway=(
            f"EP shards the expert weights ({b(s.rows[0].states_bytes)} → {b(r.states_bytes)} "
            f"per GPU at EP {s.ep}) for an all-to-all per MoE layer; placed inside a node it "
            f"costs {s.overhead(ins):.1%} of the expert compute, across nodes "
            f"{s.overhead(acr):.1%}."
            if s.ep > 1
            else f"At EP 1 every GPU holds all the experts, {b(r.states_bytes)} of states "
            f"({verdict(r.fits)}), and sends no all-to-all: raise EP to shard them."
        ),
        headline=(
            f"EP {s.ep}: states {b(s.rows[0].states_bytes)} → {b(r.states_bytes)} a GPU; "
            f"all-to-all adds {s.overhead(ins):.1%} in a node, {s.overhead(acr):.1%} across."
            if s.ep > 1
            else f"EP 1: {b(r.states_bytes)} of states a GPU, no all-to-all: raise EP to shard "
            "the experts."
        ),
        how=(
            "Parameters: `core.expert_parallel.counts` (every tensor of the published config). "
            "States: `core.expert_parallel.ep_memory` (dense part ÷ TP, experts ÷ EP, Adam over "
            "DP and EDP = 16/EP). All-to-all: `core.planner.cp_ep.ep_layer` on "
            "`core.collectives.two_tier_all_to_all` (S = tokens × top-k × h × 2 B; NVLink leg "
            "and NIC leg in parallel, links at the planner's achievable efficiency). Expert "
            "compute: 4 × 6 h f × top-k FLOPs per token at 70% of the bf16 peak."
        ),
        question=f"EP {s.ep} across both nodes: bytes one GPU sends through its NIC per "
        "all-to-all (MB)",
        answer=acr.nic_bytes / 1e6,
        unit="MB",
        explanation=(
            f"S × (p − g)/p = {ins.buffer_bytes / 1e6:.4g} MB × {max(s.ep // 2, 1)}/{s.ep}: the "
            "share of the group on the other node."
        ),
    )


def moe_figure(s: MoeTwoNodes) -> dict:
    """Per MoE layer and micro-batch: all-to-all seconds on NVLink vs NICs, inside vs across."""
    labels = [f"EP {s.ep} inside a node", f"EP {s.ep} across 2 nodes"]
    layers = (s.inside, s.across)
    traces = [
        {
            "type": "bar",
            "name": "expert GEMMs",
            "x": labels,
            "y": [s.expert_compute_s * 1e3] * 2,
            "marker": {"color": COLOURS["compute"]},
            "hovertemplate": "expert compute: %{y:.3g} ms<extra></extra>",
        },
        {
            "type": "bar",
            "name": "all-to-all (exposed)",
            "x": labels,
            "y": [(x.forward_s + x.backward_s) * 1e3 for x in layers],
            "marker": {"color": COLOURS["exposed"]},
            "hovertemplate": "6 all-to-alls: %{y:.3g} ms<extra></extra>",
        },
    ]
    notes = [
        {
            "x": lab,
            "y": (s.expert_compute_s + x.forward_s + x.backward_s) * 1e3,
            "yanchor": "bottom",
            "showarrow": False,
            "text": f"+{s.overhead(x):.1%} · NIC {x.nic_bytes / 1e6:.3g} MB",
        }
        for lab, x in zip(labels, layers)
    ]
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"{s.model}: one MoE layer, one micro-batch (ms)"},
            "barmode": "stack",
            "font": FONT,
            "height": 420,
            "annotations": notes,
            "yaxis": {"title": {"text": "milliseconds per MoE layer"}},
            "legend": bottom_legend(-0.15),
            "margin": {"t": 60, "b": 40},
        },
    }
