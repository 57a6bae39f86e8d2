"""Six guided design exercises, composed from the other cores: their numbers and a preloaded page
link.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core import data_parallel as dsc
from core.data_parallel import cluster_for, dp_step
from core.hardware import GPU_PRESETS, Cluster, make_cluster
from core.memory import (
    MemoryResult,
    ParallelConfig,
    TrainingConfig,
    ZeroComm,
    get_recipe,
    layer_allgather_bytes,
    memory_per_gpu,
    model_state_bytes_per_gpu,
    zero_comm_bytes_per_gpu,
)
from core.model import preset
from core.parallel import ORDERS, ZERO_LABELS, Layout, group_span
from core.pipeline import closed_form_bubble_share, simulate
from core.planner import Breakdown, Training, evaluate, search
from core.tensor_parallel import tp_comm_plan

GPU = "H100 SXM"
RESERVE = 0.05  # the memory page's default reserve: 5 % of HBM for temporaries and fragmentation
SEQ = 4096  # the memory page's default sequence length (micro-batch 1, flash attention on)


@dataclass(frozen=True, kw_only=True)
class Link:
    """A page and the URL parameters (widget key -> displayed label) that preload its widgets."""

    page: str
    label: str
    params: tuple[tuple[str, str], ...]  # dict(params) is st.page_link's query_params


def _link(page: str, label: str, **params: str | int) -> Link:
    return Link(
        page=f"app_pages/{page}.py",
        label=label,
        params=tuple((k, str(v)) for k, v in params.items()),
    )


def _memory(model: str, dp: int, zero: int, recompute: str = "none"):
    """The memory page's per-GPU result for one setting (its defaults: mb 1, s 4096, flash,
    1F1B).
    """
    return memory_per_gpu(
        preset(model),
        ParallelConfig(dp=dp, zero_stage=zero),
        TrainingConfig(micro_batch=1, seq_len=SEQ, recompute=recompute, flash_attention=True),
    )


@dataclass(frozen=True, kw_only=True)
class Sizing:
    """1 · A 70B run: model states at 16 B/param, ZeRO-3 over N GPUs, then activations on top."""

    num_params: int
    bytes_per_param: int
    states_bytes: int  # the whole model's weights + gradients + Adam states
    shard_degree: int
    states_per_gpu_bytes: int  # ZeRO-3: 16 Ψ / N
    model: str  # the preset whose layer shape sizes the activations
    model_params: int
    model_states_per_gpu_bytes: int
    activations_bytes: dict[str, float]  # per recompute mode
    extra_compute: dict[str, float]  # recompute FLOPs / model FLOPs
    capacity_bytes: float
    reserve_bytes: float
    links: tuple[Link, ...]

    def used_bytes(self, mode: str) -> float:
        return self.model_states_per_gpu_bytes + self.activations_bytes[mode] + self.reserve_bytes

    def fits(self, mode: str) -> bool:
        return self.used_bytes(mode) <= self.capacity_bytes


def size_70b(
    shard_degree: int = 16, num_params: int = 70 * 10**9, model: str = "Llama-2 70B"
) -> Sizing:
    """States = 16 Ψ (ZeRO paper Sec. 3.1); ZeRO-3 divides all of them by N; activations do not
    shrink.
    """
    modes = ("none", "selective", "full")
    runs = {m: _memory(model, shard_degree, 3, m) for m in modes}
    cap, spec = GPU_PRESETS[GPU].hbm_bytes, preset(model)
    return Sizing(
        num_params=num_params,
        bytes_per_param=get_recipe("mixed_adam").bytes_per_param,
        states_bytes=model_state_bytes_per_gpu(num_params, 1, 0).total_bytes,
        shard_degree=shard_degree,
        states_per_gpu_bytes=model_state_bytes_per_gpu(num_params, shard_degree, 3).total_bytes,
        model=model,
        model_params=spec.num_params,
        model_states_per_gpu_bytes=round(runs["none"].total_bytes - runs["none"].activations_bytes),
        activations_bytes={m: r.activations_bytes for m, r in runs.items()},
        extra_compute={m: spec.recompute_flops_fraction(SEQ, m) for m in modes},
        capacity_bytes=cap,
        reserve_bytes=RESERVE * cap,
        links=tuple(
            _link(
                "memory",
                f"Memory page: {model}, ZeRO-3 over {shard_degree} GPUs, {m}",
                model=model,
                dp=shard_degree,
                zero=3,
                rc=rc,
            )
            for rc, m in (("full", "full recompute"), ("none", "no recompute"))
        ),
    )


@dataclass(frozen=True, kw_only=True)
class ScaleOut:
    """2 · DP fine on 8 GPUs, slow on 64: bytes per rank, the bottleneck link, each fix measured."""

    run: dsc.SlowerAtScale  # its fixes include one more: a NIC per GPU
    cluster: Cluster  # the node type (8 GPUs, NVLink, NICs) both runs use
    effects: tuple[dsc.FixEffect, ...]
    links: tuple[Link, ...]


def scale_out(large_gpus: int = 64, nics_fix: int = 8) -> ScaleOut:
    """core.data_parallel.scenario's job and cluster, plus the fix that attacks the cause: more NIC
    bandwidth.
    """
    run = dsc.slower_at_scale(large_gpus=large_gpus)
    base, job = dsc.scenario_cluster(), run.job
    nic_fix = dsc.Fix(
        label=f"{nics_fix}× {base.inter_link.name} per node (one NIC per GPU)",
        step=dp_step(job, cluster_for(replace(base, nics_per_node=nics_fix), large_gpus)),
    )
    run = replace(run, fixes=run.fixes + (nic_fix,))
    # The data-parallel page sets tokens per GPU in units of 1,024 (kt) and sizes by label ("1.3B").
    common = dict(
        size=f"{job.num_params / 1e9:g}B",
        kt=round(job.tokens_per_gpu / 1024),
        gpu=base.gpu.name,
        gpn=base.gpus_per_node,
        nic=base.inter_link.name,
        ar=job.all_reduce.value,
        ovl="false",
        at=large_gpus,
    )
    # One bucket after backward hides nothing; its "hidden" time is float rounding (~1e-17 s): zero
    # it.
    effects = tuple(
        replace(e, hidden_s=0.0) if e.hidden_s < 1e-9 else e for e in dsc.fix_effects(run)
    )
    return ScaleOut(
        run=run,
        cluster=base,
        effects=effects,
        links=(
            _link(
                "data_parallel",
                f"Data-parallel page: this job, 8 → {large_gpus} GPUs, "
                f"{base.nics_per_node} NIC per node",
                **common,
                nics=base.nics_per_node,
            ),
            _link("data_parallel", f"… with {nics_fix} NICs per node", **common, nics=nics_fix),
        ),
    )


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
            _link("planner", f"Planner: TP = {lay.tp} inside each node, PP = {lay.pp} across", **q),
            _link(
                "planner",
                f"Planner: the same layout, order {bad.order} (TP across nodes)",
                **q,
                order=bad.order,
            ),
        ),
    )


@dataclass(frozen=True, kw_only=True)
class BubbleRow:
    """One schedule at one M: simulated and closed-form bubble fraction, peak activations held."""

    simulated: float
    closed_form: float
    peak_activations: int  # micro-batches' activations the fullest rank holds at once


@dataclass(frozen=True, kw_only=True)
class Schedules:
    """4 · GPipe vs 1F1B at P stages, M = 8 and M = 64."""

    stages: int
    rows: dict[tuple[str, int], BubbleRow]  # (schedule, M) -> row
    links: tuple[Link, ...]


def gpipe_vs_1f1b(stages: int = 8, microbatches: tuple[int, ...] = (8, 64)) -> Schedules:
    """Simulate both schedules (t_F = 1, t_B = 2) and evaluate the GPipe paper's (P−1)/(M+P−1)."""
    rows = {}
    for m in microbatches:
        for s in ("gpipe", "1f1b"):
            r = simulate(s, stages, m)
            rows[s, m] = BubbleRow(
                simulated=r.bubble_fraction,
                closed_form=closed_form_bubble_share(s, stages, m),
                peak_activations=max(r.peak_activations),
            )
    return Schedules(
        stages=stages,
        rows=rows,
        links=tuple(
            _link(
                "pipeline",
                f"Pipeline page: GPipe vs 1F1B, P = {stages}, M = {m}",
                p=stages,
                m=m,
                sched="GPipe",
                cmp="true",
                sched2="1F1B",
            )
            for m in microbatches
        ),
    )


@dataclass(frozen=True, kw_only=True)
class Sharding:
    """5 · DDP vs FSDP FULL_SHARD for a 13B model on N GPUs."""

    model: str
    num_params: int
    num_layers: int
    dp: int
    ddp: MemoryResult  # ZeRO stage 0 (FSDP NO_SHARD)
    fsdp: MemoryResult  # ZeRO-3 (FSDP FULL_SHARD)
    capacity_bytes: float
    reserve_bytes: float
    layer_gather_bytes: int  # one layer's full weights, all-gathered before forward and backward
    ddp_comm: ZeroComm
    fsdp_comm: ZeroComm
    links: tuple[Link, ...]

    def fits(self, row: MemoryResult) -> bool:
        return row.total_bytes + self.reserve_bytes <= self.capacity_bytes


def ddp_vs_fsdp(dp: int = 8, model: str = "Llama-2 13B") -> Sharding:
    """FULL_SHARD = ZeRO-3 (core.memory.FSDP_STRATEGIES); its price is a per-layer all-gather."""
    spec, cap = preset(model), GPU_PRESETS[GPU].hbm_bytes
    return Sharding(
        model=model,
        num_params=spec.num_params,
        num_layers=spec.num_layers,
        dp=dp,
        ddp=_memory(model, dp, 0),
        fsdp=_memory(model, dp, 3),
        capacity_bytes=cap,
        reserve_bytes=RESERVE * cap,
        layer_gather_bytes=layer_allgather_bytes(spec),
        ddp_comm=zero_comm_bytes_per_gpu(spec.num_params, dp, 0),
        fsdp_comm=zero_comm_bytes_per_gpu(spec.num_params, dp, 3),
        links=tuple(
            _link(
                "memory", f"Memory page: {model} on {dp} GPUs, {name}", model=model, dp=dp, zero=z
            )
            for z, name in ((0, "DDP (ZeRO stage 0)"), (3, "FULL_SHARD (ZeRO-3)"))
        ),
    )


@dataclass(frozen=True, kw_only=True)
class Sentence(Placement):
    """6 · TP in the node, PP across nodes, ZeRO on top: each clause against its counterfactual."""

    ddp: Outcome  # the chosen layout without ZeRO
    zero_stage: int  # the lowest stage that fits
    fastest_label: str  # what the planner's full search finds on this cluster
    fastest_step_s: float


def sentence(model: str = "Llama-2 70B", nodes: int = 8, pp: int = 2) -> Sentence:
    """The planner page's default run (B = 1152, s = 4096, selective recompute) with TP = 8, PP =
    pp.
    """
    cluster, spec = make_cluster(num_nodes=nodes), preset(model)
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
            _link(
                "planner",
                f"Planner: the sentence's layout, {ZERO_LABELS[stage]}",
                **q,
                zero=ZERO_LABELS[stage],
            ),
            _link("planner", "Planner: the same without ZeRO (DDP)", **q, zero=ZERO_LABELS[0]),
            _link(
                "planner",
                f"Planner: TP across nodes (order {across.order})",
                **q,
                zero=ZERO_LABELS[stage],
                order=across.order,
            ),
        ),
    )
