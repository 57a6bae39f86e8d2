"""Placement scenarios on the planner: TP inside vs across nodes (3) and the sentence "TP in the
node, PP across nodes, ZeRO on top" (6).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.hardware import make_cluster
from core.model import preset
from core.parallel import ORDERS, ZERO_STAGES, Layout, group_span
from core.planner import Breakdown, evaluate, search
from core.scenarios.common import Link, link
from core.tensor_parallel import tp_comm_plan
from core.training import Training


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """One layout as the planner evaluates it: step time, its parts, where TP and PP traffic
    runs.
    """

    label: str
    order: str
    step_s: float
    breakdown: Breakdown
    tp_link: str
    pp_link: str
    memory_bytes: float
    optimizer_bytes: float
    usable_bytes: float  # HBM minus the planner's headroom
    fits: bool


def _outcome(model, cluster, lay: Layout, training: Training) -> Outcome:
    ev = evaluate(model, cluster, lay, training)
    return Outcome(
        label=ev.layout.label,
        order=lay.order,
        step_s=ev.step_time_s,
        breakdown=ev.breakdown,
        tp_link=ev.spans["tp"].link,
        pp_link=ev.spans["pp"].link,
        memory_bytes=ev.memory.total_bytes,
        optimizer_bytes=ev.memory.optimizer_bytes,
        fits=ev.fits,
        usable_bytes=cluster.gpu.hbm_bytes * (1 - training.memory_headroom),
    )


def _tp_across(lay: Layout, cluster) -> Layout:
    """The same layout in the rank order that spreads each TP group over the most nodes."""
    return max(
        (replace(lay, order=o) for o in ORDERS),
        key=lambda x: group_span(x.dims, "tp", cluster).nodes_per_group,
    )


def _pair(model, cluster, lay: Layout, training: Training) -> dict:
    """The layout and its TP-across twin evaluated, and the bytes per micro-batch a PP hop carries
    vs
    what TP sends per GPU (Megatron: b·s·h·2 per hop; ring 2(t−1)/t of it per TP all-reduce)."""
    plan = tp_comm_plan(
        model,
        tp=lay.tp,
        micro_batch=1,
        seq_len=training.seq_len,
        full_recompute=training.recompute == "full",
    )
    return dict(
        inside=_outcome(model, cluster, lay, training),
        across=_outcome(model, cluster, _tp_across(lay, cluster), training),
        pp_hop_bytes=plan.message_bytes,
        tp_bytes_per_microbatch=plan.bytes_sent_per_gpu_per_layer * model.num_layers / lay.pp,
    )


@dataclass(frozen=True, kw_only=True)
class Placement:
    """3 · 8 nodes × 8 GPUs, TP = 8, PP = 8, DP = 1: TP inside the node vs TP across nodes."""

    model: str
    gpu: str
    nodes: int
    gpus_per_node: int
    training: Training  # global batch, sequence length, recompute
    inside: Outcome
    across: Outcome
    pp_hop_bytes: float
    tp_bytes_per_microbatch: float
    links: tuple[Link, ...]


def placement(
    inter: str = "InfiniBand NDR", model: str = "GPT-3 175B", nodes: int = 8
) -> Placement:
    """The planner page's exercise: GPT-3 175B, s = 2048, B = 64, full recompute, both rank
    orders.
    """
    cluster, spec = make_cluster(num_nodes=nodes, inter_link_name=inter), preset(model)
    training = Training(global_batch=64, seq_len=2048, recompute="full")
    lay = Layout(dp=1, tp=cluster.gpus_per_node, pp=nodes)
    pair = _pair(spec, cluster, lay, training)
    bad = pair["across"]
    q = dict(
        model=model,
        nodes=nodes,
        inter=inter,
        seq=2048,
        gb=64,
        rc="full",
        pick="custom",
        dp=1,
        tp=lay.tp,
        pp=lay.pp,
        cmp="true",
    )
    return Placement(
        model=model,
        gpu=cluster.gpu.name,
        nodes=nodes,
        gpus_per_node=cluster.gpus_per_node,
        training=training,
        **pair,
        links=(
            link("planner", f"Planner: TP = {lay.tp} inside each node, PP = {lay.pp} across", **q),
            link(
                "planner",
                f"Planner: the same layout, order {bad.order} (TP across nodes)",
                **q,
                order=bad.order,
            ),
        ),
    )


@dataclass(frozen=True, kw_only=True)
class Sentence(Placement):
    """6 · TP in the node, PP across nodes, ZeRO on top: each clause against its counterfactual."""

    ddp: Outcome  # the chosen layout without ZeRO
    zero_stage: int  # the lowest stage that fits
    fastest_label: str  # what the planner's full search finds on this cluster
    fastest_step_s: float


def sentence(
    model: str = "Llama-2 70B", nodes: int = 8, pp: int = 2, inter: str = "InfiniBand NDR"
) -> Sentence:
    """The planner page's default run (B = 1152, s = 4096, selective recompute) with TP = 8, PP =
    pp, nodes joined by `inter`.
    """
    cluster, spec = make_cluster(num_nodes=nodes, inter_link_name=inter), preset(model)
    training = Training(global_batch=1152, seq_len=4096, recompute="selective")
    tp = cluster.gpus_per_node
    base = Layout(dp=cluster.num_gpus // (tp * pp), tp=tp, pp=pp)
    ddp = _outcome(spec, cluster, base, training)  # ZeRO stage 0: is sharding needed at all?
    stage = next(
        (
            z
            for z in (1, 2, 3)
            if _outcome(spec, cluster, replace(base, zero_stage=z), training).fits
        ),
        3,
    )
    lay = replace(base, zero_stage=stage)
    best, pair = search(spec, cluster, training).fastest, _pair(spec, cluster, lay, training)
    q, across = (
        dict(model=model, nodes=nodes, pick="custom", dp=lay.dp, tp=tp, pp=pp),
        pair["across"],
    )
    return Sentence(
        model=model,
        gpu=cluster.gpu.name,
        nodes=nodes,
        gpus_per_node=tp,
        training=training,
        **pair,
        ddp=ddp,
        zero_stage=stage,
        fastest_label=best.layout.label,
        fastest_step_s=best.step_time_s,
        links=(
            link(
                "planner",
                f"Planner: the sentence's layout, {ZERO_STAGES[stage].label}",
                **q,
                zero=ZERO_STAGES[stage].label,
            ),
            link("planner", "Planner: the same without ZeRO (DDP)", **q, zero=ZERO_STAGES[0].label),
            link(
                "planner",
                f"Planner: TP across nodes (order {across.order})",
                **q,
                zero=ZERO_STAGES[stage].label,
                order=across.order,
            ),
        ),
    )
