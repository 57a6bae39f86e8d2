"""Placement scenarios: scaling out across nodes, and where TP, PP and DP go."""

from __future__ import annotations

from core.scenarios import Placement, ScaleOut
from core.units import (
    bytes_in,
    format_bandwidth,
    format_bytes,
    format_count,
    format_seconds,
    gib_or_gb,
)
from figures.data_parallel import (
    SCALING_EFFICIENCY,
    dtype_name,
    fix_notes,
    percent,
    scenario_figure,
)
from figures.scenarios.common import FONT, Walkthrough, breakdown_bars, sec, verdict


# ---------- 2 · DP slower at scale ----------
def _link(step) -> str:
    """The bottleneck's name without its note: "NVLink 3 (inside the node, at 77%)" → "NVLink 3"
    (core.data_parallel.allreduce.bottleneck writes the note in parentheses)."""
    return step.bottleneck_link.split(" (")[0]


def scale_out_text(s: ScaleOut, units: str, bw_units: str) -> Walkthrough:
    r, b, c = s.run, (lambda x: format_bytes(x, units)), s.cluster
    small, large, job = r.small, r.large, r.job
    sync = "one all-reduce after backward" if job.bucket_bytes is None else "bucketed all-reduce"
    helps = sorted(
        (e for e in s.effects if e.helps and e.label != "both"), key=lambda e: -e.tokens_per_s_gain
    )
    hurts = [e.label for e in s.effects if not e.helps]
    unit = gib_or_gb(units)[0]
    return Walkthrough(
        title=f"2 · A data-parallel job that is fine on {small.num_gpus} GPUs and slow on "
        f"{large.num_gpus}",
        intro=(
            f"{format_count(job.num_params)} parameters, DDP with "
            f"{job.grad_bytes_per_param:g}-byte ({dtype_name(job.grad_bytes_per_param)}) "
            f"gradients, {job.tokens_per_gpu:,.0f} tokens per "
            f"GPU, {sync}; nodes of {c.gpus_per_node}× {c.gpu.name} ({c.intra_link.name}) with "
            f"{c.nics_per_node}× {c.inter_link.name} each — **a thin network**: "
            f"{format_bandwidth(c.node_injection_bytes_per_s / c.gpus_per_node, bw_units)} of "
            "NIC per GPU where a DGX A100 has 25 GB/s (one 200 Gb/s HDR NIC per GPU). From "
            f"{small.num_gpus} to {large.num_gpus} GPUs every step takes "
            f"**{r.step_ratio:.3g}× longer**."
        ),
        steps=(
            f"**Bytes per rank.** The gradient is {b(job.grad_bytes)}. A ring all-reduce sends "
            f"2(N−1)/N of it per rank: {b(r.sim_bytes_sent_per_rank_small)} at N = "
            f"{small.num_gpus}, {b(r.sim_bytes_sent_per_rank_large)} at N = {large.num_gpus} "
            "(counted by the ring simulator). The bytes barely grew.",
            f"**The bottleneck link.** On {small.num_gpus} GPUs the ring never leaves "
            f"{small.bottleneck_link}, "
            f"{format_bandwidth(small.bottleneck_bytes_per_s, bw_units)}; on {large.num_gpus} it "
            f"crosses nodes through **{large.bottleneck_link}**, "
            f"{format_bandwidth(large.bottleneck_bytes_per_s, bw_units)}: "
            f"{r.bandwidth_drop:.3g}× less. The all-reduce goes from "
            f"{format_seconds(small.comm_s)} to {format_seconds(large.comm_s)} while compute "
            f"stays {format_seconds(large.compute_s)}.",
            f"**The bill.** Step {format_seconds(small.step_s)} → "
            f"{format_seconds(large.step_s)}; tokens/s ×{r.speedup:.3g} for "
            f"{r.gpu_ratio:g}× the GPUs; scaling efficiency {percent(small.efficiency)} → "
            f"**{percent(large.efficiency)}** ({SCALING_EFFICIENCY}). NCCL picks "
            f"{large.algorithms} for the one {b(job.grad_bytes)} all-reduce.",
            f"**Each fix, applied at {large.num_gpus} GPUs:**\n"
            + "\n".join("   " + x for x in fix_notes(s.effects)),
            f"**The same job on a DGX-class network** (8× InfiniBand HDR per node): "
            f"{format_seconds(r.dgx_large.step_s)} per step at {large.num_gpus} GPUs, scaling "
            f"efficiency {percent(r.dgx_large.efficiency)}; with bucketing + overlap "
            f"{percent(r.dgx_large_bucketed.efficiency)}: there the all-reduce fits inside "
            "backward, so overlap hides it (Li et al., VLDB 2020, evaluation).",
            "**Honest verdict.** What works changes the ratio of compute to bytes on the slow "
            "link: "
            + ", ".join(f"{e.label} (×{e.tokens_per_s_gain:.3g})" for e in helps)
            + "."
            + (
                f" Not worth it on this thin network: {', '.join(hurts)} — the all-reduce lasts "
                "many backward passes, overlap can hide at most one, and each extra bucket pays "
                "the network latency again."
                if hurts
                else ""
            ),
        ),
        takeaway=(
            "The GPUs did not get slower — the wire did: the all-reduce left "
            f"{small.bottleneck_link} for {large.bottleneck_link}, {r.bandwidth_drop:.3g}× less "
            "bandwidth for the same ≈2× gradient bytes per rank. More tokens per GPU or more NIC "
            "bandwidth fix it; more GPUs do not."
        ),
        headline=(
            f"The wire: {_link(small)} → {_link(large)}, {r.bandwidth_drop:.3g}× less bandwidth; "
            f"steps {r.step_ratio:.3g}× longer."
        ),
        how=(
            "`core.data_parallel.slower_at_scale` prices each run with "
            "`core.data_parallel.dp_step`: compute = 6·N·tokens / (peak × MFU 0.4), the "
            "all-reduce from `core.collectives.nccl_choice` (NCCL's tuner: ring or double binary "
            "tree × LL / LL128 / Simple, constants from NVIDIA/nccl src/graph/tuning.cc, links at "
            "the app's achievable efficiencies), buckets overlapped with backward. Bytes per rank "
            f"({dtype_name(job.grad_bytes_per_param)} gradients, "
            f"{job.grad_bytes_per_param:g} B each) come "
            "from `core.collectives.scan_bytes_per_rank` (the numpy ring). The NIC fix reruns "
            "the same step with one 100 GbE NIC per GPU."
        ),
        question=(
            f"Ring all-reduce of this {b(job.grad_bytes)} gradient over N = {large.num_gpus}: "
            "bytes each rank sends"
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


def setting(p: Placement) -> str:
    t = p.training
    return f"{t.global_batch:,} sequences of {t.seq_len:,} tokens per step, {t.recompute} recompute"


# Like with like: what one GPU sends per micro-batch, forward and backward, for each kind.
LIKE_FOR_LIKE = (
    "bytes one GPU sends per micro-batch, forward + backward: TP, every layer of its stage "
    "(4 all-reduces per layer, 6 with full recompute, 2(t−1)/t of b·s·h·2 each); PP, an interior "
    "stage's activation out and input gradient back (b·s·h·2 each, bf16)"
)


def pp_bytes_per_gpu(hop_bytes: float) -> float:
    """What a GPU of an interior stage sends per micro-batch: its activation forward and the
    gradient of its input backward, one b·s·h·2 message each."""
    return 2 * hop_bytes


def placement_text(p: Placement, units: str) -> Walkthrough:
    b, i, a = (lambda x: format_bytes(x, units)), p.inside, p.across
    pp = pp_bytes_per_gpu(p.pp_hop_bytes)
    ratio = p.tp_bytes_per_microbatch / pp
    return Walkthrough(
        title=f"3 · Place 3D parallelism on {p.nodes} nodes × {p.gpus_per_node} GPUs",
        intro=(
            f"{p.model}, {setting(p)}, on {p.nodes} × {p.gpus_per_node} {p.gpu} with {i.tp_link} "
            f"inside a node and {i.pp_link} between nodes. Layout: **{i.label}**."
        ),
        steps=(
            f"**Why these degrees.** TP × PP = {p.gpus_per_node} × {p.nodes} uses every GPU, so "
            f"DP = 1. Memory per GPU {b(i.memory_bytes)} of {b(i.usable_bytes)} usable: "
            f"{verdict(i.fits)}.",
            f"**TP inside the node** (rank order {i.order}, TP innermost): each TP group is one "
            f"node and its all-reduces run on {i.tp_link}. Per micro-batch every GPU sends "
            f"**{b(p.tp_bytes_per_microbatch)}** of TP traffic, on the critical path of every "
            "layer.",
            "**PP across nodes.** A stage boundary carries one micro-batch's activations, "
            f"b·s·h·2 = {b(p.pp_hop_bytes)} (bf16) each way, so a GPU sends **{b(pp)}** per "
            f"micro-batch — {ratio:.3g}× less than its TP traffic ({LIKE_FOR_LIKE}) — over "
            f"{i.pp_link}: "
            f"exposed pipeline sends {sec(i.breakdown.pp_p2p_s)} of a {sec(i.step_s)} step.",
            f"**Flip it** (order {a.order}): each TP group now spans nodes and its all-reduces "
            f"run on {a.tp_link}. Exposed TP {sec(i.breakdown.tp_s)} → "
            f"**{sec(a.breakdown.tp_s)}**, step {sec(i.step_s)} → **{sec(a.step_s)}** "
            f"({a.step_s / i.step_s:.3g}×); moving PP onto NVLink saves only "
            f"{sec(i.breakdown.pp_p2p_s - a.breakdown.pp_p2p_s)}.",
        ),
        takeaway=(
            f"Per GPU and micro-batch, forward + backward, TP sends {ratio:.3g}× the bytes PP "
            "does, inside every layer: give it the fastest link, the NVLink inside a node. PP's "
            "few small messages survive the network."
        ),
        headline=(
            f"TP sends {ratio:.3g}× PP's bytes; across nodes the step takes "
            f"{a.step_s / i.step_s:.3g}× longer: TP on {i.tp_link}."
        ),
        how=(
            "`core.planner.evaluate` for both rank orders (`core.parallel.group_span` finds "
            "which link each group uses; TP time from `core.tensor_parallel.comm`'s b·s·h·2 "
            "messages, 2(t−1)/t of each per GPU; pipeline from the schedule simulator). TP bytes "
            "per micro-batch = layers per stage × all-reduces per layer (6 with full recompute) "
            "× 2(t−1)/t × b·s·h·2."
        ),
        question="How many times longer is the step when TP crosses nodes?",
        answer=a.step_s / i.step_s,
        unit="×",
        explanation=f"{sec(a.step_s)} / {sec(i.step_s)}.",
    )


def placement_figure(p: Placement) -> dict:
    labels = [f"TP in node ({p.inside.order})", f"TP across nodes ({p.across.order})"]
    return breakdown_bars([p.inside, p.across], labels, "Step time: where TP sits decides it")
