"""Words of the training-step page: phase titles and captions, traffic names, the drawn-GPU note,
takeaway, "how this is computed" and the self-check.
"""

from __future__ import annotations

import textwrap

from core.stepplan import Phase, StepPlan
from core.units import ByteSystem, format_bytes, format_seconds
from figures.step.grid import IDLE_BELOW

SUB_CHARS = 110  # a subtitle line (Plotly does not wrap)
QUESTION = (
    "In one training step of this layout, where do parameters, gradients, optimizer state and "
    "activations live, what is replicated and what sharded, what is sent over which link, and "
    "when does each GPU wait?"
)
LAYOUT_HELP = (
    "The planner's pick for this cluster (with its own CP and EP), or your own DP × TP × PP × "
    "ZeRO with the CP and EP inputs (custom)."
)
TITLES = {
    "rest": "Before the step",
    "fill": "Forward: the pipeline fills",
    "steady": "Steady state: forwards and backwards interleave",
    "drain": "Backward: the pipeline drains",
    "grad_sync": "Gradient sync across the DP replicas",
    "optimizer": "Optimizer step",
    "param_gather": "All-gather the updated parameters",
}
TITLES_PP1 = {  # one stage: micro-batches one after another (gradient accumulation)
    "fill": "Forward of the first micro-batch",
    "steady": "Forward + backward of the other micro-batches (gradient accumulation)",
    "drain": "Backward of the last micro-batch",
}
SHORT = {
    "rest": "start",
    "fill": "fill",
    "steady": "steady",
    "drain": "drain",
    "grad_sync": "sync",
    "optimizer": "optim.",
    "param_gather": "gather",
}
TRAFFIC = {
    "tp": "TP all-reduce (activations)",
    "cp_ring": "CP ring: K/V blocks → next CP rank",
    "ep_all_to_all": "EP all-to-all: tokens to experts and back",
    "pp_forward": "PP send: activations → next stage",
    "pp_backward": "PP send: gradients ← previous stage",
    "zero3_gather": "ZeRO-3 all-gather of weights",
    "zero3_scatter": "ZeRO-3 reduce-scatter of gradients",
    "dp_all_reduce": "DP all-reduce of gradients",
    "dp_reduce_scatter": "DP reduce-scatter of gradients",
    "dp_all_gather": "DP all-gather of updated weights",
}
TRAFFIC_SP = {"tp": "TP reduce-scatter + all-gather (SP)"}
PARTS = {
    "parameters": "parameters",
    "gradients": "gradients",
    "optimizer": "optimizer state",
    "activations": "activations",
}
DOING = {
    "rest": "No traffic yet. Each GPU holds its parameters and optimizer state; the gradient "
    "buffers are empty (outlined) and no activations are stored.",
    "fill": "Each stage runs forwards and passes activations on; later stages wait for their "
    "first micro-batch (greyed).",
    "steady": "Every stage alternates one forward and one backward; activations of the "
    "micro-batches in flight stay stored until their backward, and gradients accumulate.",
    "drain": "Only backwards remain; they flow from the last stage to the first, so the later "
    "stages run out of work first.",
    "grad_sync": "Every DP group sums its gradients; the part not hidden behind the last "
    "backward is exposed here and every GPU waits for the network.",
    "optimizer": "Each GPU updates the parameters whose optimizer state it holds "
    "(memory-bound: it reads and writes the optimizer state).",
    "param_gather": "Each GPU updated only its shard of the parameters; the DP group "
    "all-gathers them so every replica starts the next step with all its weights.",
}


DOING_PP1 = {  # one stage: no pipeline to fill, micro-batches one after another
    "fill": "Each GPU runs the forward of its first micro-batch and stores its activations; no "
    "gradients yet.",
    "steady": "Each GPU runs the backward of one micro-batch, then the forward of the next; "
    "gradients accumulate in the buffer until the last micro-batch.",
    "drain": "The backward of the last micro-batch: its activations are freed and the "
    "gradients of the whole step are complete.",
}


def doing(plan: StepPlan, phase: Phase) -> str:
    words = DOING_PP1 if plan.layout.pp == 1 else {}
    return words.get(phase.key, DOING[phase.key])


def title(plan: StepPlan, phase: Phase) -> str:
    words = TITLES_PP1 if plan.layout.pp == 1 else {}
    return words.get(phase.key, TITLES[phase.key])


def traffic_name(plan: StepPlan, kind: str) -> str:
    return (TRAFFIC_SP if plan.layout.sequence_parallel else {}).get(kind, TRAFFIC[kind])


def _where(t) -> str:
    return f"across nodes ({t.link})" if t.crosses_node else f"inside a node ({t.link})"


def traffic_line(plan: StepPlan, t, units: ByteSystem) -> str:
    """e.g. "TP all-reduce: up to 2.1 TiB per GPU, inside a node (NVLink 4)"."""
    most = max(t.bytes_per_gpu)
    return f"{traffic_name(plan, t.kind)}: up to {format_bytes(most, units)} per GPU, {_where(t)}"


def timing(phase: Phase) -> str:
    start = format_seconds(phase.start_s) if phase.start_s else "0 s"
    span = f"{start} → {format_seconds(phase.end_s)}"
    exposed = " exposed" if phase.key in ("grad_sync", "param_gather") else ""
    return f"{span} ({format_seconds(phase.duration_s)}{exposed})"


def heading(plan: StepPlan, index: int) -> tuple[str, str]:
    """("<b>Phase k of n: title</b>", its times, or "" before the step)."""
    ph, n = plan.phases[index], len(plan.phases)
    times = "" if ph.key == "rest" else timing(ph)
    return f"<b>Phase {index + 1} of {n}: {title(plan, ph)}</b>", times


def caption(plan: StepPlan, index: int) -> tuple[str, str]:
    """(title, subtitle): "phase k of n: title · times", then what happens."""
    (head, times), ph = heading(plan, index), plan.phases[index]
    hid = ph.hidden_s and f" Another {format_seconds(ph.hidden_s)} of it ran hidden behind compute."
    words = "<br>".join(textwrap.wrap(doing(plan, ph) + (hid or ""), SUB_CHARS))
    return head + (f" · {times}" if times else ""), words


def phase_lines(plan: StepPlan, index: int, units: ByteSystem) -> list[str]:
    """Markdown bullets under the chart: traffic of the phase and who waits."""
    ph = plan.phases[index]
    out = [f"**{title(plan, ph)}.** {doing(plan, ph)}"]
    out += [f"- {traffic_line(plan, t, units)}" for t in ph.traffic]
    if ph.busy and ph.duration_s > 0:
        idle = [s for s, b in enumerate(ph.busy) if b < IDLE_BELOW]
        if idle and len(idle) < len(ph.busy):
            out.append(f"- waiting more than half the phase: stage(s) {_ranges(idle)}")
        elif idle:
            out.append("- every GPU waits for the network in this phase")
    if not ph.traffic and ph.key != "rest":
        out.append("- no communication")
    return out


def _ranges(values: list[int]) -> str:
    return ", ".join(str(v) for v in values) if len(values) < 5 else f"{values[0]}–{values[-1]}"


def drawn_note(plan: StepPlan, drawn) -> str | None:
    lay, total = plan.layout, plan.layout.world_size
    if drawn.count == total:
        return None
    return (
        f"Drawing {drawn.count} of {total:,} GPUs: DP replicas 0–{drawn.dp - 1} of {lay.dp}, "
        f"PP stages 0–{drawn.pp - 1} of {lay.pp}, TP ranks 0–{drawn.tp - 1} of {lay.tp}"
        + (f", CP ranks 0–{drawn.cp - 1} of {lay.cp}" if lay.cp > 1 else "")
        + "; the others repeat the same picture."
    )


def _zero_ranks(plan: StepPlan) -> int:
    """The ranks ZeRO shards over: DP × CP, the planner's gradient group (core.memory)."""
    return plan.layout.dp * plan.layout.cp


def holding_lines(plan: StepPlan, index: int, units: ByteSystem) -> list[str]:
    """Per stage: what one GPU holds in the phase, with replicated / sharded named."""
    out = []
    for s, h in enumerate(plan.phases[index].holdings):
        parts = []
        for key, held, full in (
            ("parameters", h.parameters_bytes, h.full_parameters_bytes),
            ("gradients", h.gradients_bytes, h.full_gradients_bytes),
            ("optimizer", h.optimizer_bytes, h.full_optimizer_bytes),
        ):
            how = f"sharded 1/{_zero_ranks(plan)}" if held < full else "replicated"
            empty = " (empty)" if key == "gradients" and not h.gradients_live else ""
            parts.append(f"{PARTS[key]} {format_bytes(held, units)} {how}{empty}")
        parts.append(f"activations {format_bytes(h.activations_bytes, units)}")
        out.append(f"stage {s}: " + " · ".join(parts))
    return out


def takeaway(plan: StepPlan, presenting: bool = False) -> str:
    """Where the traffic runs, the bubble and the DP sync, and what ZeRO trades (not on a slide)."""
    lay, ev = plan.layout, plan.evaluation
    bubble = ev.breakdown.pp_bubble_s / ev.step_time_s
    where = {
        "tp": "TP traffic stays inside a node"
        if not ev.spans["tp"].crosses_node
        else "TP traffic crosses nodes (slow)",
        "pp": "PP sends cross nodes" if ev.spans["pp"].crosses_node else "PP sends stay in a node",
    }
    parts = [where["tp"]] if lay.tp > 1 else []
    parts += [where["pp"]] if lay.pp > 1 else []
    for dim, what in (("cp", "the CP ring"), ("ep", "EP all-to-alls")):
        if getattr(lay, dim) > 1:  # on the link the planner costs them on
            parts.append(f"{what} run on {ev.spans[dim].link}")
    return (
        f"{'; '.join(parts) or 'No model parallelism: each GPU holds the whole model'}. "
        f"{_waits(bubble, lay.pp, ev.breakdown.dp_s)}."
        + ("" if presenting else " ZeRO shards what the stage's DP replicas hold in common: the "
           "more it shards, the more it must gather.")
    )  # fmt: skip


def _waits(bubble: float, pp: int, dp_s: float) -> str:
    """The bubble and the exposed DP sync in words (a planner zero is "hidden", not "0 ns")."""
    wait = f"Stages wait {bubble:.1%} of the step in the pipeline bubble" if pp > 1 else "No bubble"
    return wait + (
        f"; the DP sync exposes {format_seconds(dp_s)}" if dp_s else "; the DP sync hides"
    )


HOW = (
    "**How this is computed.** The planner's model of this layout (Planner page) gives the "
    "per-micro-batch forward and backward times; its pipeline simulation is cut at the first "
    "backward and the end of the last forward into fill, steady state and drain, and each GPU's "
    "compute share in each window is read off the simulated ops (greyed below one half). The "
    "exposed gradient sync, the optimizer step and the ZeRO-1/2 parameter all-gather follow "
    "with the planner's durations. Bytes per GPU are ring bytes: an all-reduce sends "
    "2(n−1)/n of the message, a reduce-scatter or all-gather (n−1)/n; Megatron TP runs 2 "
    "all-reduces of b·s·h activations per layer forward and 2 backward (Shoeybi et al. 2019); "
    "a PP send carries b·s·h/t per TP rank (Narayanan et al. 2021); ZeRO-3 gathers each "
    "stage's weights before every forward and backward and reduce-scatters gradients after "
    "it (ZeRO paper Sec. 7), once per micro-batch as the planner times it. Memory per GPU "
    "comes from the Memory page's model (core.memory): bars are filled by the share of the "
    "unsharded amount a GPU holds; activations by the micro-batches in flight. CP and EP are "
    "the planner's own (the same grid, times and bytes as the Planner page): CP ranks sit right "
    "after TP (Megatron-Core order tp-cp-ep-dp-pp), an EP group is EP consecutive GPUs of a "
    "DP × CP group, and gradients sync over DP × CP. A CP ring sends C − 1 K/V blocks of "
    "2·b·(S/C)·(h_kv/t)·d bytes per layer forward and twice that backward (Liu et al. 2023, "
    "arXiv:2310.01889); an EP group runs a dispatch and a combine all-to-all per MoE layer, "
    "each GPU sending (E_p − 1)/E_p of its b·S/(C·t) tokens × top-k × h bytes (uniform "
    "routing), split between NVLink and the NICs by where the group's GPUs sit."
)


def self_checks(plan: StepPlan) -> list[dict]:
    """Questions whose answers this layout's phases hold (self_check keyword arguments)."""
    lay, out = plan.layout, []
    fill = next(p for p in plan.phases if p.key == "fill")
    p = lay.pp
    h = plan.phases[0].holdings[0]
    out.append(
        {
            "question": "What percentage of its stage's unsharded optimizer state does one GPU "
            "hold?",
            "answer": round(100 * h.optimizer_bytes / h.full_optimizer_bytes, 1),
            "key": "q0",
            "rel_tol": 0.02,
            "unit": "%",
            "explanation": f"ZeRO-1 and up shard it over the {_zero_ranks(plan)} DP × CP ranks "
            "(1/(DP × CP) each, rounded up to whole elements; routed experts over DP × CP / EP); "
            "DDP keeps it all on every GPU.",
        }
    )
    if p > 1:
        note = f" In 1F1B the fill lasts P forwards: (P − 1)/P = {p - 1}/{p}." * (
            lay.schedule == "1f1b"
        )
        out.append(
            {
                "question": "The pipeline fills: what percentage of the fill phase does the last "
                f"of the {p} stages wait?",
                "answer": round(100 * (1 - fill.busy[-1]), 1),
                "key": "q1",
                "rel_tol": 0.02,
                "unit": "%",
                "explanation": f"It cannot start before the {p - 1} stages ahead of it have each "
                f"run a forward of the first micro-batch.{note}",
            }
        )
    sync = next((x for x in plan.phases if x.key == "grad_sync"), None)
    if sync:
        t = sync.traffic[0]
        d, k = _zero_ranks(plan), 2 if t.kind == "dp_all_reduce" else 1
        out.append(
            {
                "question": "How many GB (10⁹ B) does one GPU of stage 0 send in the gradient "
                "sync?",
                "answer": round(t.bytes_per_gpu[0] / 1e9, 3),
                "key": "q2",
                "rel_tol": 0.01,
                "unit": "GB",
                "explanation": f"A ring {'all-reduce' if k == 2 else 'reduce-scatter'} sends "
                f"{k}(d − 1)/d of the gradients: {k} × {d - 1}/{d} × Ψ × bytes per gradient.",
            }
        )
    return out
