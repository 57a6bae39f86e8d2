"""Step time from the stages' work: the simulated pipeline makespan, the exposed DP / ZeRO
communication as it runs layer by layer, the optimizer step.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache

from core.hardware import Cluster
from core.model import ModelSpec
from core.parallel import GroupSpan, Layout
from core.pipeline import simulate
from core.planner.comm import group_collective_s
from core.planner.stage_work import StageTimes, layer_params
from core.training import Training, get_recipe


@dataclass(frozen=True, kw_only=True)
class Breakdown:
    """Seconds of one step on the critical path; the parts sum to the step time."""

    compute_s: float  # GEMMs, forward + backward, no recompute (the busiest stage)
    memory_bound_s: float  # elementwise kernels (norms, dropout, softmax, GeLU) limited by HBM
    recompute_s: float
    tp_s: float  # exposed TP collectives
    pp_p2p_s: float
    pp_bubble_s: float  # idle time of the busiest stage: simulated makespan − its busy time
    zero_gather_s: float  # exposed ZeRO-3 per-layer gathers
    dp_s: float  # exposed gradient sync (and ZeRO-1/2 parameter all-gather)
    optimizer_s: float  # the memory-bound optimizer step
    cp_s: float = 0.0  # exposed ring-attention K/V hops (context parallelism)
    ep_s: float = 0.0  # MoE token all-to-alls (expert parallelism)

    LABELS = {
        "compute_s": "compute",
        "memory_bound_s": "memory-bound ops",
        "recompute_s": "recompute",
        "tp_s": "exposed TP",
        "pp_p2p_s": "PP p2p",
        "pp_bubble_s": "PP bubble",
        "zero_gather_s": "ZeRO-3 gathers",
        "dp_s": "exposed DP",
        "optimizer_s": "optimizer",
        "cp_s": "exposed CP ring",
        "ep_s": "EP all-to-all",
    }

    def parts(self) -> dict[str, float]:
        """Display label -> seconds, in stacking order."""
        return {self.LABELS[f.name]: getattr(self, f.name) for f in fields(self)}

    @property
    def total_s(self) -> float:
        return sum(getattr(self, f.name) for f in fields(self))


def chain_exposed_s(comm_s: float, compute_s: float, n: int) -> float:
    """Exposed seconds of n per-layer collectives on their own stream, each issued when its
    layer's compute (compute_s each, back to back) ends: the last one always shows; each earlier
    one only by what it exceeds its neighbour's compute, c + (n − 1) max(0, c − b)."""
    return 0.0 if n <= 0 or comm_s <= 0 else comm_s + (n - 1) * max(0.0, comm_s - compute_s)


def dp_sync_parts(
    model: ModelSpec,
    cluster: Cluster,
    span: GroupSpan,
    lay: Layout,
    training: Training,
    stages: tuple[StageTimes, ...],
    stage_params: tuple[int, ...],
) -> tuple[tuple[float, float], tuple[float, float]]:
    """((gradient sync, parameter gather) before overlap, (the same) exposed) seconds of the
    once-per-step DP communication: gradients after the last backward (DDP all-reduce; ZeRO-1/2
    reduce-scatter), parameters before the next forward (ZeRO-1/2 all-gather).

    As Megatron-Core runs them (NVIDIA/Megatron-LM megatron/core/distributed/
    distributed_data_parallel.py, param_and_grad_buffer.py): without overlap_grad_reduce /
    overlap_param_gather the buffer goes as one collective after the backward (before the
    forward); with them it is bucketed, here one bucket per layer, each issued as its layer is
    done. Stage r finishes its last backward Σ_{j<r} B_j before stage 0 (the drain) and starts its
    first forward Σ_{j<r} F_j after it (the fill): that slack hides some of its syncs; the step
    waits for the latest stage."""
    if lay.zero_stage == 3 or span.size == 1:
        return (0.0, 0.0), (0.0, 0.0)  # ZeRO-3 syncs layer by layer in every micro-batch
    eff, recipe, tp = training.efficiency, get_recipe(training.recipe), lay.tp
    grad_kind = "all_reduce" if lay.zero_stage == 0 else "reduce_scatter"
    gather = lay.zero_stage in (1, 2)  # distributed optimizer: gather the updated parameters
    p_layer = layer_params(model, tp, lay)

    def coll(kind: str, params: float, nbytes: int) -> float:
        return group_collective_s(kind, span, params * nbytes, cluster, eff)

    total_g = total_p = exposed_g = exposed_p = drain = fill = 0.0
    for st, psi in zip(stages, stage_params):
        n, edge = st.layers, max(0, psi - st.layers * p_layer)  # embedding / head / final norm
        whole_g = coll(grad_kind, psi, recipe.grad_bytes)
        whole_p = coll("all_gather", psi, recipe.param_bytes) if gather else 0.0
        total_g, total_p = max(total_g, whole_g), max(total_p, whole_p)
        if training.overlap_dp:
            c = coll(grad_kind, p_layer, recipe.grad_bytes)
            c_edge = coll(grad_kind, edge, recipe.grad_bytes)
            g = chain_exposed_s(c, st.layer_backward_s, n)
            # Stage 0's embedding gradient is the last one computed: its bucket always shows. The
            # LM head's is the first: idle gaps in the chain absorb it.
            idle = n * max(0.0, st.layer_backward_s - c)
            g += c_edge if st.stage == 0 else max(0.0, c_edge - idle)
        else:
            g = whole_g
        if gather and training.overlap_param_gather:
            a = coll("all_gather", p_layer, recipe.param_bytes)
            a_edge = coll("all_gather", edge, recipe.param_bytes)
            exposed_p = max(exposed_p, a_edge + chain_exposed_s(a, st.layer_forward_s, n) - fill)
        else:
            exposed_p = max(exposed_p, whole_p)
        exposed_g = max(exposed_g, g - drain)
        drain, fill = drain + st.backward_s, fill + st.forward_s
    return (total_g, total_p), (exposed_g, exposed_p)


def dp_exposed_s(*args) -> tuple[float, float]:
    """(exposed, before overlap) seconds of the step's DP sync: dp_sync_parts, summed."""
    total, exposed = dp_sync_parts(*args)
    return sum(exposed), sum(total)


def step_breakdown(
    model: ModelSpec,
    cluster: Cluster,
    spans: dict[str, GroupSpan],
    lay: Layout,
    training: Training,
    stages: tuple[StageTimes, ...],
    stage_params: tuple[int, ...],
) -> tuple[Breakdown, float]:
    """(breakdown, DP sync before overlap): pipeline makespan, exposed DP sync, optimizer step."""
    eff, recipe = training.efficiency, get_recipe(training.recipe)
    m = training.num_microbatches(lay)
    makespan = pipeline_makespan_s(
        lay.schedule,
        lay.pp,
        m,
        lay.num_chunks,
        tuple(st.forward_s for st in stages),
        tuple(st.backward_s for st in stages),
    )
    ref = max(stages, key=lambda st: (st.busy_s, st.stage))  # the busiest stage
    dp, sync = dp_exposed_s(model, cluster, spans["dp"], lay, training, stages, stage_params)
    # The optimizer step is memory-bound: read + write optimizer state, read grads, write weights.
    params = max(stage_params)
    sharded = -(-params // (lay.dp * lay.cp)) if lay.zero_stage >= 1 else params
    opt = sharded * (2 * recipe.optimizer_bytes + recipe.grad_bytes + recipe.param_bytes)
    return Breakdown(
        compute_s=m * ref.matmul_s,
        memory_bound_s=m * ref.memory_bound_s,
        recompute_s=m * ref.recompute_s,
        tp_s=m * ref.tp_s,
        pp_p2p_s=m * ref.p2p_s,
        pp_bubble_s=max(0.0, makespan - m * ref.busy_s),
        zero_gather_s=m * ref.zero_gather_s,
        dp_s=dp,
        optimizer_s=opt / (cluster.gpu.hbm_bandwidth_bytes_per_s * eff.hbm),
        cp_s=m * ref.cp_s,
        ep_s=m * ref.ep_s,
    ), sync


def pipeline_makespan_s(
    schedule: str, p: int, m: int, v: int, forward_s: tuple, backward_s: tuple
) -> float:
    """Simulated makespan of a step whose stages take forward_s[r] / backward_s[r] per
    micro-batch (B split into equal I and W halves for the zero-bubble schedules)."""
    busy = [f + b for f, b in zip(forward_s, backward_s)]
    if p == 1 or len(set(zip(forward_s, backward_s))) == 1:
        return makespan_per_microbatch(schedule, p, m, v) * busy[0]
    if schedule == "gpipe":  # all forwards, then all backwards: two flow shops of identical jobs
        return sum(forward_s) + sum(backward_s) + (m - 1) * (max(forward_s) + max(backward_s))
    # Uneven stages: simulate P + 2 micro-batches (2P interleaved: whole groups of P) with the
    # durations relative to the busiest stage, rounded to 1% so near-equal shapes share a cache
    # entry (≤ 0.5% of each op); each further micro-batch adds one F + B of the busiest stage,
    # the steady-state period. Where the first stage is the busiest the pipe settles later, so
    # this overstates by up to ~2.5% (tests check it against full simulations).
    top = max(busy)
    m0 = min(m, 2 * p if schedule == "interleaved_1f1b" else p + 2)
    key = tuple(round(x / top, 2) for x in (*forward_s, *backward_s))
    return top * (_relative_makespan(schedule, p, m0, v, key) + (m - m0))


@lru_cache(maxsize=8192)
def _relative_makespan(schedule: str, p: int, m: int, v: int, key: tuple) -> float:
    f, b = key[:p], key[p:]
    half = tuple(x / 2 for x in b)
    return simulate(schedule, p, m, v, f, half, half).makespan_s


@lru_cache(maxsize=8192)
def makespan_per_microbatch(
    schedule: str, num_stages: int, num_microbatches: int, num_chunks: int = 1
) -> float:
    """Simulated pipeline makespan in units of one micro-batch's F + B on one stage."""
    # At uniform stage times the makespan of GPipe, 1F1B and interleaved 1F1B is proportional to
    # F + B (tests check several F : B ratios), and past warm-up every extra micro-batch adds one
    # F + B. So the simulator runs once per (schedule, P, v) up to M0 = 2P micro-batches and larger
    # M extend it by M - M0 (tests check full simulations and Narayanan's (M + (P-1)/v)).
    p, m, v = num_stages, num_microbatches, num_chunks
    if p == 1:
        return float(m)
    m0 = 2 * p  # a multiple of P, as interleaved 1F1B needs
    if m > m0:
        return makespan_per_microbatch(schedule, p, m0, v) + (m - m0)
    third = 1.0 / 3.0  # F, and B split into two equal halves I + W
    return simulate(schedule, p, m, v, third, third, third).makespan_s


def clear_caches() -> None:
    """Forget every memoised pipeline makespan (for cold benchmarks)."""
    makespan_per_microbatch.cache_clear()
    _relative_makespan.cache_clear()
