"""The tensor-parallel page's tables and words: collectives per layer, node boundary, formulas."""

from __future__ import annotations

from core.hardware import LinkSpec
from core.tensor_parallel import LinkTime, TpCommPlan, TpPoint
from core.units import format_bandwidth, format_bytes, format_seconds


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
            "per micro-batch, all layers": format_bytes(p.bytes_sent_per_gpu_per_step, units),
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
                r"**Bytes.** $M = b\,s\,h \times 2$ B (bf16) per collective; a ring all-reduce "
                r"sends $2\frac{t-1}{t}M$ per GPU (a reduce-scatter or an all-gather half of "
                r"that).",
                f"This run: M = {format_bytes(plan.message_bytes, units)} (bf16 activations, 2 B "
                f"each); per layer per micro-batch "
                f"({kinds}): {format_bytes(plan.bytes_sent_per_gpu_per_layer, units)}; × "
                f"{plan.num_layers} layers = "
                f"{format_bytes(plan.bytes_sent_per_gpu_per_step, units)}.",
            )
        )
    if times:
        pairs.append(
            (
                r"**Time.** Each collective as NCCL's tuner runs it: $t = \min_{a,\pi}"
                r"[\ell_{a,\pi} + M/\text{algbw}_{a,\pi}]$ over ring / double binary tree and "
                r"LL / LL128 / Simple "
                r"(ring/Simple: $\ell = 8.4\,\mu s + 2(t-1)\,\alpha$, $\text{algbw} = "
                r"B\,\tfrac{t}{2(t-1)}$), $B$ = the link × the app's achievable efficiency (the "
                r"planner's); compute $= 3 \times$ one layer's forward FLOPs $/\,t$ at the assumed "
                r"MFU.",
                f"This run: compute at an assumed {mfu:.0%} MFU = "
                f"{format_seconds(times[0].compute_s)}; communication per layer: "
                + ", ".join(
                    f"{x.link.name} at {x.efficiency:.0%}: {format_seconds(x.comm_s)} "
                    f"({x.comm_to_compute:.2g}× compute; {x.algorithms})"
                    for x in times
                )
                + ".",
            )
        )
    return pairs


def boundary_lessons(
    dgx: tuple[TpPoint, ...],
    thin: tuple[TpPoint, ...],
    gpus_per_node: int,
    scale_up: LinkSpec,
    nic: LinkSpec,
) -> str:
    """What really keeps TP inside a node, in this run's numbers: the DGX-class view (one NIC per
    GPU) and the thin one (one NIC per node), one NIC count each."""
    pick = {p.tp: p for p in dgx if p.valid}
    thin_pick = {p.tp: p for p in thin if p.valid}
    g = gpus_per_node
    if g not in pick or 2 * g not in pick or 2 * g not in thin_pick:
        return ""
    a, b, t = pick[g], pick[2 * g], thin_pick[2 * g]
    return (
        f"**What keeps TP inside a node.** On a DGX-class node (one NIC per GPU) a TP group that "
        f"fills two nodes spreads its node-crossing traffic over all {g} NICs (NCCL runs a channel "
        f"per NIC), so bytes over the wire barely slow: TP={g} → {2 * g} per-layer comm "
        f"{format_seconds(a.comm_s)} → {format_seconds(b.comm_s)} (×{b.comm_s / a.comm_s:.2g}) "
        f"while compute halves; its latency part {format_seconds(a.latency_s)} → "
        f"{format_seconds(b.latency_s)}. What the per-collective model cannot show is what decides "
        "it in practice: (1) a TP layer is many medium messages (4 per layer per micro-batch, 6 "
        "with full recompute) on the critical path, nothing overlaps them, and each now pays "
        "network hops (NCCL's model, Simple: 14 µs per NET hop against 3.4 µs on NVLink); (2) the "
        "NICs "
        "are not free — in a real layout they carry the DP gradient all-reduce and the pipeline "
        f"sends too; (3) per GPU, {scale_up.name} carries "
        f"{scale_up.bandwidth_bytes_per_s / nic.bandwidth_bytes_per_s:.2g}× one {nic.name} NIC's "
        f"bandwidth ({format_bandwidth(scale_up.bandwidth_bytes_per_s, 'decimal')} vs "
        f"{format_bandwidth(nic.bandwidth_bytes_per_s, 'decimal')} per direction), so any "
        "pattern that is not a perfect all-node ring (uneven groups, a busy rail) drops to NIC "
        f"speed. On a thin network (1 NIC per node) the same TP={2 * g} takes "
        f"{format_seconds(t.comm_s)} per layer, ×{t.comm_s / a.comm_s:.2g} the in-node time "
        f"({t.algorithms})."
    )
