"""Words of the training-step page about its inputs and about CP / EP: the one-line caption of
the cluster, batch and layout drawn, the CP and EP help, and how CP, EP and MoE models are drawn.
"""

from __future__ import annotations

from core.stepplan import StepPlan
from core.units import ByteSystem, format_bytes

INPUTS = "Cluster, batch and recompute"
CP_HELP = (
    "Context-parallel ranks of the custom layout: each sequence split over CP GPUs whose K/V "
    "blocks rotate around a ring in every attention layer. GPUs = DP × TP × PP × CP (CP ranks "
    "right after TP, Megatron-Core order tp-cp-ep-dp-pp). A planner pick brings its own CP."
)
EP_HELP = (
    "Expert-parallel ranks of the custom layout (MoE models): each GPU holds 1/EP of the "
    "experts; tokens go to their experts and back by two all-to-alls around every MoE layer. EP "
    "divides DP × CP. A planner pick brings its own EP."
)


def drawn_caption(plan: StepPlan, nodes, gpn, gpu, gb, seq, step: str) -> str:
    """One line: the cluster and batch the expander holds, the layout drawn and its step time."""
    return (
        f"{nodes} × {gpn} {gpu} · {gb:,} sequences of {seq:,} tokens · drawn: "
        f"**{plan.layout.label}** · step {step} (the planner's)."
    )


def cp_ep_note(
    plan: StepPlan, pick: str, cp: int, ep: int, units: ByteSystem = ByteSystem.BINARY
) -> str | None:
    """How CP / EP are drawn, and how the page's CP / EP inputs relate to the layout drawn."""
    lay, out = plan.layout, []
    if pick != "custom" and (cp, ep) != (lay.cp, lay.ep):
        out.append(
            f"The CP and EP inputs ({cp}, {ep}) set the custom layout only: the planner's pick "
            f"brings its own CP {lay.cp} and EP {lay.ep}. Choose “custom” to draw yours."
        )
    if lay.cp > 1 or lay.ep > 1:
        what = " and ".join(f"{n} {v}" for n, v in (("CP", lay.cp), ("EP", lay.ep)) if v > 1)
        where = ["CP ranks right after TP"] * (lay.cp > 1)
        where += [f"EP groups of {lay.ep} consecutive GPUs among them"] * (lay.ep > 1)
        out.append(
            f"{what} on the planner's own grid: {lay.dp} DP replicas × CP {lay.cp} = "
            f"{lay.dp * lay.cp} GPUs per (TP, PP) position sync gradients together; "
            f"{', '.join(where)} (Megatron-Core order tp-cp-ep-dp-pp). Times, bytes and memory "
            "are the Planner page's for this layout."
        )
    ep_t = [t for p in plan.phases for t in p.traffic if t.kind == "ep_all_to_all"]
    if ep_t:
        total = sum(t.bytes_per_gpu[0] for t in ep_t)
        nic = sum(t.nic_bytes_per_gpu[0] for t in ep_t if t.nic_bytes_per_gpu)
        out.append(
            f"EP all-to-alls, one GPU of stage 0 per step: {format_bytes(total, units)}, of "
            f"which {format_bytes(nic, units)} through the NICs (the group's peers on other "
            "nodes)."
        )
    return " ".join(out) or None
