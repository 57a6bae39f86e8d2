"""Words of the training-step page about its inputs and about CP / EP: the one-line caption of
the cluster, batch and layout drawn, the CP and EP help, and how CP, EP and MoE models are drawn.
"""

from __future__ import annotations

from core.expert_parallel import counts
from core.stepplan import StepPlan

INPUTS = "Cluster, batch and recompute"
CP_HELP = (
    "Context-parallel ranks: each sequence split over CP GPUs whose K/V blocks rotate around a "
    "ring in every attention layer. Taken from the layout's DP GPUs (Megatron-Core order "
    "tp-cp-ep-dp-pp)."
)
EP_HELP = (
    "Expert-parallel ranks (MoE models): each GPU holds 1/EP of the experts; tokens go to their "
    "experts and back by two all-to-alls around every MoE layer. EP divides DP × CP."
)


def drawn_caption(plan: StepPlan, nodes, gpn, gpu, gb, seq, step: str) -> str:
    """One line: the cluster and batch the expander holds, the layout drawn and its step time."""
    lay, f = plan.layout, plan.fold
    label = lay.label
    if f.cp > 1:  # the planner's DP counts DP × CP GPUs
        label = label.replace(f"DP {lay.dp}", f"DP {lay.dp // f.cp} × CP {f.cp}", 1)
    fold = f" · EP {f.ep}" if f.ep > 1 else ""
    return (
        f"{nodes} × {gpn} {gpu} · {gb:,} sequences of {seq:,} tokens · drawn: **{label}**"
        f"{fold} · step {step} (the planner's)."
    )


def fold_note(plan: StepPlan) -> str | None:
    """How CP / EP and an MoE model are drawn while the planner models neither."""
    f, lay, out = plan.fold, plan.layout, []
    if f.active:
        what = " and ".join(f"{n} {v}" for n, v in (("CP", f.cp), ("EP", f.ep)) if v > 1)
        out.append(
            f"{what}: {lay.dp // f.cp} DP replicas × CP {f.cp} = {lay.dp} GPUs per (TP, PP) "
            f"position, EP groups of {f.ep} among them (Megatron-Core order tp-cp-ep-dp-pp); the "
            f"gradient sync runs over all {lay.dp}. Times and memory are the planner's for "
            f"DP = {lay.dp} (it does not model CP or EP yet); the "
            f"{what} arrows carry their own bytes."
        )
    if f.moe:
        n = counts(f.moe)
        out.append(
            f"{f.moe.name} is timed and its memory drawn as its active path "
            f"({n.active / 1e9:.1f} B of {n.total / 1e9:.1f} B parameters: {f.moe.top_k} of "
            f"{f.moe.experts} experts per token); the experts a GPU holds beyond them are not "
            "in the bars."
        )
    return " ".join(out) or None
