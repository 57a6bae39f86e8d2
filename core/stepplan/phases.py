"""One training step as phases: where parameters, gradients, optimizer state and activations live
in each, what each group sends, and which GPUs compute or wait, timed by the planner.

The pipeline part (forward fill, steady state, backward drain) is the planner's own simulation
cut into windows (core.stepplan.windows); the exposed gradient sync, the optimizer step and the
ZeRO-1/2 parameter all-gather follow it with the planner's durations (core.planner.step_time
step_breakdown). Bytes per phase are ring bytes each GPU sends (ZeRO paper Sec. 7; Megatron TP
collectives from core.tensor_parallel; Narayanan et al. 2021 scatter/gather for PP sends), at the
S/C tokens a CP rank holds; CP ring and EP all-to-all bytes are the planner's (core.stepplan.cpep),
and every group is the planner's grid's (core.planner.grid), so it crosses nodes where it is costed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from core.hardware import Cluster
from core.parallel import Layout
from core.pipeline import MAX_OPS
from core.planner import ACT_BYTES, Evaluation, Training, dp_sync_parts, evaluate
from core.planner.grid import GridPlacement
from core.stepplan.cpep import CpEpBytes, cp_ep_bytes
from core.stepplan.drawn import Drawn, drawn_ranks
from core.stepplan.windows import Window, pipeline_windows
from core.tensor_parallel import tp_comm_plan
from core.training import get_recipe

MAX_STEP_OPS = MAX_OPS // 5  # simulated F and B ops of one drawn step (the pipeline page's limit
# would take seconds per redraw)


@dataclass(frozen=True, kw_only=True)
class Traffic:
    """What one kind of group sends during a phase; bytes sent by one GPU of each stage."""

    kind: str  # tp, cp_ring, ep_all_to_all, pp_forward, pp_backward, zero3_gather,
    # zero3_scatter, dp_all_reduce, dp_reduce_scatter, dp_all_gather
    dim: str  # the group it runs in: tp, cp, ep, pp or dp
    bytes_per_gpu: tuple[float, ...]  # indexed by pipeline stage
    crosses_node: bool  # some group of this kind spans more than one node
    link: str  # the link its groups use, e.g. "NVLink 4" or "InfiniBand NDR"
    nic_bytes_per_gpu: tuple[float, ...] = ()  # the part sent through the NICs (EP), by stage


@dataclass(frozen=True, kw_only=True)
class Holding:
    """What one GPU of a stage holds in a phase (bytes) and the unsharded amount of each part."""

    parameters_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    full_parameters_bytes: float  # what it would hold with no ZeRO sharding
    full_gradients_bytes: float
    full_optimizer_bytes: float
    peak_activations_bytes: float  # the stage's most activations at once (core.memory)
    gradients_live: bool  # False before the first backward: the buffer holds nothing yet


@dataclass(frozen=True, kw_only=True)
class Phase:
    key: str  # rest, fill, steady, drain, grad_sync, optimizer, param_gather
    start_s: float
    end_s: float
    hidden_s: float  # communication of this phase overlapped with compute before start_s
    busy: tuple[float, ...]  # compute share of the phase per stage; () for the untimed rest
    traffic: tuple[Traffic, ...]
    holdings: tuple[Holding, ...]  # per stage

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True, kw_only=True, eq=False)
class StepPlan:
    evaluation: Evaluation
    placement: GridPlacement  # the planner's grid: the groups it costs are the groups drawn
    phases: tuple[Phase, ...]

    @cached_property
    def drawn(self) -> Drawn:
        """The GPUs the picture shows (whole CP rings and EP groups when it can)."""
        return drawn_ranks(self.placement)

    @property
    def layout(self) -> Layout:
        return self.evaluation.layout

    @property
    def step_time_s(self) -> float:
        return self.phases[-1].end_s


def _psi(st) -> int:
    """Parameters on one GPU of a stage before ZeRO: dense and routed-expert (÷ EP) alike."""
    return st.params_on_gpu + getattr(st, "expert_params_on_gpu", 0)


def _holdings(ev: Evaluation, peaks, held, live: bool) -> tuple[Holding, ...]:
    """Per stage: core.memory's bytes; activations scaled by the micro-batches held now."""
    rec = get_recipe(ev.training.recipe)
    return tuple(
        Holding(
            parameters_bytes=st.parameters_bytes,
            gradients_bytes=st.gradients_bytes,
            optimizer_bytes=st.optimizer_bytes,
            activations_bytes=st.activations_bytes * (h / peak if peak else 0.0),
            full_parameters_bytes=rec.param_bytes * _psi(st),
            full_gradients_bytes=rec.grad_bytes * _psi(st),
            full_optimizer_bytes=rec.optimizer_bytes * _psi(st),
            peak_activations_bytes=st.activations_bytes,
            gradients_live=live,
        )
        for st, h, peak in zip(ev.memory.stages, held, peaks)
    )


def _ring(n: int) -> float:
    """Share of a tensor each rank sends in a ring reduce-scatter or all-gather: (n - 1) / n."""
    return (n - 1) / n


class _PerOp:
    """Bytes one GPU of stage r sends per forward / backward op (full-stage units) and per send."""

    def __init__(self, model, ev: Evaluation):
        lay, tr, rec = ev.layout, ev.training, get_recipe(ev.training.recipe)
        # A CP rank holds S/C tokens of each sequence; gradients sync over DP × CP (the planner's
        # "dp" span, core.planner.stage_work and step_time).
        t, d, s = lay.tp, ev.spans["dp"].size, tr.seq_len // lay.cp
        layers = model.num_layers // lay.pp
        plan = tp_comm_plan(
            model,
            tp=t,
            micro_batch=lay.micro_batch,
            seq_len=s,
            bytes_per_element=ACT_BYTES,
            sequence_parallel=lay.sequence_parallel,
            full_recompute=tr.recompute == "full",
        )
        # Ring all-reduce sends 2(t-1)/t of the message, reduce-scatter and all-gather (t-1)/t.
        share = {"all_reduce": 2 * _ring(t), "reduce_scatter": _ring(t), "all_gather": _ring(t)}
        each = plan.message_bytes * layers
        self.tp_fwd = each * sum(n * share[k] for k, n in plan.forward.items())
        self.tp_bwd = each * sum(n * share[k] for k, n in plan.backward.items())
        # Scatter/gather: each TP rank sends its 1/t of the b s h boundary activations.
        self.send = lay.micro_batch * s * model.hidden_size * ACT_BYTES / t
        psi = [_psi(x) for x in ev.memory.stages]  # as core.planner.evaluate syncs them
        self.gather = [_ring(d) * x * rec.param_bytes for x in psi]  # one ZeRO-3 all-gather
        self.scatter = [_ring(d) * x * rec.grad_bytes for x in psi]  # one reduce-scatter
        self.psi, self.dp = psi, d


def _pipeline_traffic(ev: Evaluation, per: _PerOp, w: Window, fb: CpEpBytes) -> tuple[Traffic, ...]:
    lay, spans, out = ev.layout, ev.spans, []

    def add(kind: str, dim: str, values, nic=()) -> None:
        values = tuple(float(x) for x in values)
        if any(values):
            sp = spans[dim]
            out.append(
                Traffic(
                    kind=kind, dim=dim, bytes_per_gpu=values, crosses_node=sp.crosses_node,
                    link=sp.link, nic_bytes_per_gpu=tuple(float(x) for x in nic),
                )
            )  # fmt: skip

    fwd_bwd = list(zip(w.forwards, w.backwards))
    if lay.tp > 1:
        add("tp", "tp", (f * per.tp_fwd + b * per.tp_bwd for f, b in fwd_bwd))
    # Inside each attention layer (CP) and around each MoE layer (EP), forward and backward.
    add(
        "cp_ring",
        "cp",
        (f * x + b * y for (f, b), x, y in zip(fwd_bwd, fb.cp_forward, fb.cp_backward)),
    )
    k = [y / x if x else 0.0 for x, y in zip(fb.ep_forward, fb.ep_backward)]  # backward / forward
    add(
        "ep_all_to_all", "ep",
        (f * x + b * y for (f, b), x, y in zip(fwd_bwd, fb.ep_forward, fb.ep_backward)),
        nic=((f + b * kk) * x for (f, b), kk, x in zip(fwd_bwd, k, fb.ep_nic_forward)),
    )  # fmt: skip
    if lay.pp > 1:
        add("pp_forward", "pp", (n * per.send for n in w.sends_forward))
        add("pp_backward", "pp", (n * per.send for n in w.sends_backward))
    if lay.zero_stage == 3 and per.dp > 1:
        # Weights gathered before each forward and again before each backward, per micro-batch,
        # as the planner times them (core.planner.step_time stage_times).
        fb = zip(w.forwards, w.backwards, per.gather)
        add("zero3_gather", "dp", ((f + b) * g for f, b, g in fb))
        add("zero3_scatter", "dp", (b * x for b, x in zip(w.backwards, per.scatter)))
    return tuple(out)


def step_plan(model, cluster: Cluster, layout: Layout, training: Training) -> StepPlan:
    """The phases of one step of `layout` (CP and EP included) for `model` (a core.model or
    core.expert_parallel MoeSpec), timed and sized by the planner's evaluate of exactly that
    layout, on the planner's grid: every group's traffic on the link the planner costs it on."""
    if layout.shard_degree is not None:
        raise ValueError(
            f"shard_degree={layout.shard_degree}: the step drawing shards ZeRO state over all "
            f"{layout.dp} DP ranks; leave shard_degree unset (HSDP is not drawn)"
        )
    ev = evaluate(model, cluster, layout, training)
    lay, m = ev.layout, ev.num_microbatches
    ops = 2 * lay.pp * m * lay.num_chunks
    if ops > MAX_STEP_OPS:
        raise ValueError(
            f"{ops:,} F and B operations (2 × PP {lay.pp} × {m} micro-batches × v "
            f"{lay.num_chunks}) exceed the {MAX_STEP_OPS:,} this drawing simulates; use a "
            "smaller global batch or a larger micro-batch"
        )
    result = ev.pipeline()
    peaks, per = result.peak_activation_stages, _PerOp(model, ev)
    fb = cp_ep_bytes(model, ev)
    p, d, zero = lay.pp, per.dp, lay.zero_stage
    phases = [
        Phase(
            key="rest",
            start_s=0.0,
            end_s=0.0,
            hidden_s=0.0,
            busy=(),
            traffic=(),
            holdings=_holdings(ev, peaks, [0.0] * p, live=False),
        )
    ]
    for w in pipeline_windows(result):
        phases.append(
            Phase(
                key=w.key,
                start_s=w.start_s,
                end_s=w.end_s,
                hidden_s=0.0,
                busy=w.busy,
                traffic=_pipeline_traffic(ev, per, w, fb),
                holdings=_holdings(ev, peaks, w.held, live=w.key != "fill"),
            )
        )
    span = ev.spans["dp"]
    # The planner's DP sync as step_breakdown times it (core.planner.step_time dp_sync_parts).
    args = (model, cluster, span, lay, training, ev.stages, tuple(per.psi))
    sync, exposed = dp_sync_parts(*args)
    after = _holdings(ev, peaks, [0.0] * p, live=True)
    t = result.makespan_s

    def tail(key: str, dur: float, hidden: float, busy: float, traffic) -> None:
        nonlocal t
        phases.append(
            Phase(
                key=key,
                start_s=t,
                end_s=t + dur,
                hidden_s=hidden,
                busy=(busy,) * p,
                traffic=tuple(traffic),
                holdings=after,
            )
        )
        t += dur

    def dp_traffic(kind: str, values) -> Traffic:
        return Traffic(
            kind=kind,
            dim="dp",
            bytes_per_gpu=tuple(values),
            crosses_node=span.crosses_node,
            link=span.link,
        )

    if d > 1 and zero < 3:
        kind = "dp_all_reduce" if zero == 0 else "dp_reduce_scatter"
        k = 2 if zero == 0 else 1  # all-reduce = reduce-scatter + all-gather
        tail(
            "grad_sync",
            exposed[0],
            sync[0] - exposed[0],
            0.0,
            [dp_traffic(kind, [k * x for x in per.scatter])],
        )
    tail("optimizer", ev.breakdown.optimizer_s, 0.0, 1.0, ())
    if d > 1 and zero in (1, 2):
        traffic = [dp_traffic("dp_all_gather", per.gather)]
        tail("param_gather", exposed[1], sync[1] - exposed[1], 0.0, traffic)
    return StepPlan(evaluation=ev, placement=ev.placement, phases=tuple(phases))
