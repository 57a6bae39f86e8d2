"""The tensor-parallel page's tables and words: collectives per layer, node boundary, formulas."""

from __future__ import annotations

from core.tensor_parallel import LinkTime, TpCommPlan, TpPoint
from core.units import format_bytes, format_seconds


def _counts(d: dict[str, int]) -> str:
    return " + ".join(f"{n} {k.replace('_', '-')}" for k, n in d.items())


def comm_plan_rows(plans: list[TpCommPlan], units: str) -> list[dict]:
    """One table row per plan: collectives per layer, bytes per collective, bytes sent per GPU."""
    return [
        {
            "mode": "sequence parallel" if p.sequence_parallel else "plain TP",
            "forward, per layer": _counts(p.forward),
            "backward, per layer": _counts(p.backward),
            "sent per GPU per layer": format_bytes(p.bytes_sent_per_gpu_per_layer, units),
            "per step": format_bytes(p.bytes_sent_per_gpu_per_step, units),
            "layer input held per GPU": format_bytes(p.layer_input_bytes_per_gpu, units),
        }
        for p in plans
    ]


def node_boundary_note(points: tuple[TpPoint, ...], gpus_per_node: int) -> str:
    """'Inside the node … ; across nodes …': comm/compute on both sides of the boundary, in
    numbers.
    """
    inside = [p for p in points if p.valid and p.tp <= gpus_per_node and p.tp > 1]
    outside = [p for p in points if p.valid and p.tp > gpus_per_node]
    parts = []
    if inside:
        worst = max(inside, key=lambda p: p.comm_to_compute)
        parts.append(
            f"inside one node (TP ≤ {gpus_per_node}, {worst.link_label}) TP communication is "
            f"at most {worst.comm_to_compute:.0%} of the layer's compute (TP={worst.tp})"
        )
    for p in outside:
        parts.append(
            f"TP={p.tp} rides {p.link_label}: communication {p.comm_to_compute:.0%} of compute"
        )
    bad = [p for p in points if not p.valid]
    if bad:
        parts.append(
            "invalid: " + ", ".join(f"TP={p.tp}" for p in bad) + " (hover the chart for the rule)"
        )
    return "; ".join(parts) + "." if parts else ""


def how_computed_lines(
    proof_diffs: tuple[float, float] | None,
    plan: TpCommPlan | None,
    times: tuple[LinkTime, ...] | None,
    mfu: float,
    units: str,
) -> list[tuple[str, str]]:
    """(formula, measured) markdown pairs: the formula text never changes, so the browser's
    KaTeX render of it is reused across reruns; only the plain measured line is redrawn."""
    pairs = [
        (
            r"**MLP.** $Y = \mathrm{GeLU}(X W_1)\,W_2$ with $W_1 = [W_1^{(1)} \cdots W_1^{(t)}]$ "
            r"(columns) "
            r"and $W_2 = [W_2^{(1)}; \cdots; W_2^{(t)}]$ (rows): $Y = \sum_i \mathrm{GeLU}(X "
            r"W_1^{(i)})"
            r"\,W_2^{(i)}$, one all-reduce (g). Backward: $dX = \sum_i dA^{(i)} W_1^{(i)\top}$, "
            r"one "
            r"all-reduce (f). Attention: the same, each GPU owning whole heads.",
            ""
            if proof_diffs is None
            else f"Measured max |sharded − unsharded|: forward {proof_diffs[0]:.1e}, backward "
            f"{proof_diffs[1]:.1e}.",
        )
    ]
    if plan is not None:
        kinds = f"forward {_counts(plan.forward)}, backward {_counts(plan.backward)}"
        pairs.append(
            (
                r"**Bytes.** $M = b\,s\,h \times 2$ B per collective; a ring all-reduce sends "
                r"$2\frac{t-1}{t}M$ per GPU (a reduce-scatter or an all-gather half of that).",
                f"This run: M = {format_bytes(plan.message_bytes, units)}; per layer per step "
                f"({kinds}): {format_bytes(plan.bytes_sent_per_gpu_per_layer, units)}; × "
                f"{plan.num_layers} layers = "
                f"{format_bytes(plan.bytes_sent_per_gpu_per_step, units)}.",
            )
        )
    if times:
        pairs.append(
            (
                r"**Time.** $t_{AR} = 2(t-1)\,\alpha + 2\frac{t-1}{t}\frac{M}{B}$ per all-reduce "
                r"($B$, $\alpha$ of the link); compute $= 3 \times$ one layer's forward FLOPs "
                r"$/\,t$ "
                r"at the assumed MFU.",
                f"This run: compute at an assumed {mfu:.0%} MFU = "
                f"{format_seconds(times[0].compute_s)}; communication per layer: "
                + ", ".join(
                    f"{x.link.name} {format_seconds(x.comm_s)} ({x.comm_to_compute:.2g}× compute)"
                    for x in times
                )
                + ".",
            )
        )
    return pairs
