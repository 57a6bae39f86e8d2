"""The planner's answer in words: why this layout (core.planner.explain), what to change when
nothing fits (core.planner.closest_fit), and what the model was fitted on, each with its number.
"""

from __future__ import annotations

from core.parallel import ZERO_STAGES
from core.planner import Closest, Evaluation, ValidationRow, Why
from core.schedule_names import SCHEDULES
from core.units import format_bytes, format_seconds


def short_label(ev: Evaluation) -> str:
    """'TP 8 × PP 4 × DP 16, ZeRO-1, Interleaved 1F1B v=4': human labels, degree-1 parts out."""
    lay = ev.layout
    parts = [
        f"{k} {getattr(lay, k.lower())}"
        for k in ("TP", "PP", "CP", "DP", "EP")
        if getattr(lay, k.lower()) > 1
    ]
    sched = SCHEDULES[lay.schedule].label + (f" v={lay.num_chunks}" if lay.num_chunks > 1 else "")
    extra = [ZERO_STAGES[lay.zero_stage].label] if lay.dp > 1 else []
    extra += ["SP"] if lay.sequence_parallel and lay.tp > 1 else []
    extra += [sched] if lay.pp > 1 else []
    if lay.layers_per_stage and len(set(lay.layers_per_stage)) > 1:
        n = lay.layers_per_stage
        extra.append(f"layers {n[0]} / {n[1]} … / {n[-1]}")
    return " × ".join(parts or ["1 GPU"]) + (", " + ", ".join(extra) if extra else "")


def why_markdown(why: Why, units: str = "binary") -> str:
    """One paragraph: the wall that decided the layout and what would flip it, with numbers."""
    b, ev = (lambda x: format_bytes(x, units)), why.best
    lay, bd, gpn = ev.layout, ev.breakdown, ev.cluster.gpus_per_node
    out = []
    if why.memory_floor and why.below_floor is not None:
        mp = "TP × PP × CP" if lay.cp > 1 else "TP × PP"
        out.append(
            f"**Memory sets the floor:** every layout with {mp} below {why.memory_floor} runs "
            f"out of memory (the closest needs {b(why.below_floor.total_bytes)} per GPU, "
            f"{b(why.usable_bytes)} usable), so {mp} ≥ {why.memory_floor}."
        )
    if lay.zero_stage == 3 and lay.dp > 1:
        hide = ev.stage.layer_forward_s
        verdict = (
            "hide behind compute"
            if why.zero3_layer_gather_s <= hide
            else f"show: {format_seconds(bd.zero_gather_s)} per step exposed"
        )
        out.append(
            f"**ZeRO-3's gathers {verdict}:** at this batch each GPU holds "
            f"{why.sequences_per_gpu:g} sequences, so one layer's forward takes "
            f"{format_seconds(hide)} against a {format_seconds(why.zero3_layer_gather_s)} "
            "parameter all-gather, prefetched one layer ahead."
        )
    if why.other_tp is not None:
        o = why.other_tp
        delta = o.step_time_s / ev.step_time_s - 1
        out.append(
            f"**TP {o.layout.tp}** (best such layout: {short_label(o)}) would add "
            f"{format_seconds(max(0.0, o.breakdown.tp_s - bd.tp_s))} of exposed TP all-reduce per "
            f"step: {delta:+.0%} step time."
        )
    elif lay.tp < gpn:
        out.append(f"No layout with TP = {gpn} fits or runs here.")
    out += cp_ep_sentences(ev)
    if lay.pp > 1:
        out.append(
            f"**The bubble** at {ev.num_microbatches} micro-batches on {lay.pp} stages is "
            f"{format_seconds(bd.pp_bubble_s)} ({why.bubble_share:.0%} of the step)."
        )
    if why.runner_up is not None:
        r = why.runner_up
        out.append(
            f"Runner-up: {short_label(r)}, {r.step_time_s / ev.step_time_s - 1:+.1%} slower."
        )
    flips = [
        f"{f.detail} → "
        + (
            "nothing fits"
            if f.winner is None
            else f"{short_label(f.winner)} ({format_seconds(f.winner.step_time_s)})"
            if f.flips
            else "same choice"
        )
        for f in why.flips
    ]
    if flips:
        out.append("**What would flip it:** " + "; ".join(flips) + ".")
    return " ".join(out)


def cp_ep_sentences(ev: Evaluation) -> list[str]:
    """What CP and EP cost this layout, when they are > 1 (core.planner.cp_ep's parts)."""
    lay, bd, sp, out = ev.layout, ev.breakdown, ev.spans, []
    s = ev.training.seq_len
    if lay.cp > 1:
        shown = (
            "all hidden behind the block attention"
            if bd.cp_s == 0
            else f"{format_seconds(bd.cp_s)} per step exposed"
        )
        out.append(
            f"**Context parallelism {lay.cp}:** each GPU holds {s // lay.cp:,} of the {s:,} "
            f"tokens (activations ÷ {lay.cp}); the ring passes K/V blocks over {sp['cp'].link}, "
            f"{shown}."
        )
    if lay.ep > 1:
        out.append(
            f"**Expert parallelism {lay.ep}:** each GPU holds 1/{lay.ep} of every MoE layer's "
            f"experts; the token all-to-alls run over {sp['ep'].link}: "
            f"{format_seconds(bd.ep_s)} per step ({bd.ep_s / ev.step_time_s:.0%})."
        )
    return out


def closest_markdown(cl: Closest, units: str = "binary") -> str:
    """The layout closest to fitting and each single fix, with its bytes or its winner."""
    b, lay = (lambda x: format_bytes(x, units)), cl.memory.layout
    lines = [
        f"**Nothing fits.** Closest: {lay.label}, {b(cl.memory.total_bytes)} on its fullest GPU "
        f"against {b(cl.usable_bytes)} usable ({b(cl.over_bytes)} over). One change at a time:"
    ]
    for f in cl.fixes:
        if f.memory is not None:
            got = f"{b(f.memory.total_bytes)} per GPU"
        else:
            got = (
                f"fastest {short_label(f.winner)}, {format_seconds(f.winner.step_time_s)}"
                if f.winner
                else "still nothing fits"
            )
        lines.append(f"- **{f.change}**: {got} — {'fits' if f.fits else 'still over'}")
    return "\n".join(lines)


CAVEAT = (
    "Fitted on A100 only (Narayanan et al. 2021 Table 1: mean error {mean:.0%}, worst "
    "{worst:.0%}). On {gpu}, not fitted: {validation}"
)


def mfu_caveat(ev: Evaluation, mean: float, worst: float, rows: list[ValidationRow]) -> str:
    """What the MFU was fitted on, its error there, and a plain caveat for other hardware."""
    gpu = ev.cluster.gpu.name
    if gpu.startswith("A100"):
        return (
            f"MFU model fitted on this GPU (A100, Narayanan et al. 2021 Table 1): mean error "
            f"{mean:.0%}, worst {worst:.0%}; other layouts and models are extrapolation."
        )
    seen = "; ".join(
        f"{r.run.name}: predicted {(r.fitting or r.fastest).mfu:.0%} vs published {r.run.mfu:.0%}"
        for r in rows
    )
    return CAVEAT.format(mean=mean, worst=worst, gpu=gpu, validation=seen or "no published run") + (
        ". Treat MFU as ± 15–20%."
    )
