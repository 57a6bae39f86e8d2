"""Step-time pieces: per-micro-batch stage times, collectives on the links a placement gives,
makespan.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache

from core.hardware import Cluster
from core.model import ModelSpec
from core.parallel import GroupSpan, Layout
from core.pipeline import simulate
from core.planner.comm import dp_sync_s, group_collective_s, p2p_s
from core.tensor_parallel import tp_comm_plan
from core.training import Training, get_recipe

ACT_BYTES = 2  # bf16/fp16 activations
# Vocab-parallel cross entropy in fp32 per logit: forward reads the 2-byte logit, writes and
# re-reads
# a 4-byte probability (10 B); backward reads it and writes a 2-byte gradient (6 B) [derived
# estimate].
LOSS_FWD_BYTES, LOSS_BWD_BYTES = 10, 6


def layer_traffic_bytes(
    model: ModelSpec,
    seq_len: int,
    micro_batch: int,
    tp: int,
    sequence_parallel: bool,
    flash_attention: bool,
) -> tuple[float, float, float]:
    """(forward, backward, attention-core forward) HBM bytes of the non-matmul kernels per layer."""
    # Per micro-batch on one GPU. One read per input, one write per output, Megatron's fused
    # kernels, 1-byte dropout masks as half an element [derived]:
    #   kernel                   forward (elements)               backward
    #   2 norms                  2 x (r x, w y) = 4n              2 x (r x, r dy, w dx) = 6n
    #   2 bias-dropout-residual  2 x (r 2n, w n, mask n/2) = 7n   2 x (r dy, mask, w dx) = 5n
    #   GeLU / SwiGLU            r f, w f = 2f / 3f               3f / 5f
    #   scores (no flash)        QK^T w S, softmax 2S, dropout 2.5S, AV r S = 6.5S   9.5S
    #   flash attention          r q k v, w o                     r q k v o do, w dq dk dv
    # n = b s h (÷ t under sequence parallelism), f = b s ffn / t, S = b a s^2 / t (the scores).
    tok, t = micro_batch * seq_len, tp
    n = tok * model.hidden_size / (t if sequence_parallel else 1)
    f = tok * model.ffn_hidden_size / t
    act_f, act_b = (3 * f, 5 * f) if model.gated_mlp else (2 * f, 3 * f)
    if flash_attention:
        q, kv = tok * model.q_width / t, tok * model.num_kv_heads * model.d_head / t
        core_f, core_b = 2 * q + 2 * kv, 4 * q + 4 * kv
    else:
        scores = micro_batch * model.num_heads * seq_len * seq_len / t
        core_f, core_b = 6.5 * scores, 9.5 * scores
    return (
        ACT_BYTES * (11 * n + act_f + core_f),
        ACT_BYTES * (11 * n + act_b + core_b),
        ACT_BYTES * core_f,
    )


@dataclass(frozen=True, kw_only=True)
class StageTimes:
    """Seconds per micro-batch on the slowest pipeline stage (the last: layers + LM head + loss)."""

    matmul_s: float  # forward + backward GEMMs at the achievable matmul efficiency
    memory_bound_s: float  # elementwise kernels at the achievable HBM bandwidth
    recompute_s: float  # forward work repeated in the backward pass
    tp_s: float  # exposed TP all-reduces (forward, backward, recomputed forward)
    p2p_s: float  # activation and gradient sends, v times with v chunks
    zero_gather_s: float  # exposed ZeRO-3 per-layer all-gathers / reduce-scatters
    forward_s: float  # the F op the pipeline simulator runs (all of the above, forward part)
    backward_s: float  # the B op


def stage_times(
    model: ModelSpec,
    cluster: Cluster,
    spans: dict[str, GroupSpan],
    lay: Layout,
    training: Training,
    stage_params: int,
) -> StageTimes:
    """Per-micro-batch work of the last stage: FLOPs from core.model, comm from core.collectives."""
    eff, recipe, recompute = training.efficiency, get_recipe(training.recipe), training.recompute
    t, L, s, micro_batch = spans["tp"].size, model.num_layers, training.seq_len, lay.micro_batch
    tok, layers = micro_batch * s, model.num_layers // lay.pp
    flop_s = cluster.gpu.bf16_flops_per_s * eff.matmul
    hbm = cluster.gpu.hbm_bandwidth_bytes_per_s * eff.hbm
    layer_fwd = model.layer_forward_flops_per_token(s) / L * tok / t
    # Logits: flops_per_token = 3 x (layer forward) + 3 x (head forward), so the head's forward is:
    head_fwd = (model.flops_per_token(s) - 3 * model.layer_forward_flops_per_token(s)) / 3 * tok / t
    mm_f = (layers * layer_fwd + head_fwd) / flop_s
    tr_f, tr_b, tr_core = layer_traffic_bytes(
        model, s, micro_batch, t, lay.sequence_parallel, training.flash_attention
    )
    logits = tok * model.vocab_size / t
    mem_f = (layers * tr_f + LOSS_FWD_BYTES * logits) / hbm
    mem_b = (layers * tr_b + LOSS_BWD_BYTES * logits) / hbm
    core = model.attention_core_forward_flops_per_token(s) / L * tok / t  # QK^T and AV
    rec = (
        layers
        * {
            "none": 0.0,
            "full": layer_fwd / flop_s + tr_f / hbm,  # repeat the whole forward
            "selective": core / flop_s + tr_core / hbm,
        }[recompute]
    )
    # TP collectives per layer (2 forward, 2 backward, +2 with full recompute; SP: RS + AG) from
    # core.tensor_parallel.comm, each timed on the link the placement gives the TP group.
    plan = tp_comm_plan(
        model,
        tp=t,
        micro_batch=micro_batch,
        seq_len=s,
        bytes_per_element=ACT_BYTES,
        sequence_parallel=lay.sequence_parallel,
        full_recompute=recompute == "full",
    )
    each = {
        k: group_collective_s(k, spans["tp"], plan.message_bytes, cluster, eff)
        for k in ("all_reduce", "reduce_scatter", "all_gather")
    }
    hide = 1.0 - eff.tp_overlap
    tp_f = layers * hide * sum(n * each[k] for k, n in plan.forward.items())
    tp_b = layers * hide * sum(n * each[k] for k, n in plan.backward.items())
    # Scatter/gather optimisation: each TP rank sends b s h / t (Narayanan et al. 2021); v chunks
    # mean v boundaries per micro-batch per direction.
    send = lay.num_chunks * p2p_s(
        spans["pp"], tok * model.hidden_size * ACT_BYTES / t, cluster, eff
    )
    z_f = z_b = 0.0
    if lay.zero_stage == 3 and spans["dp"].size > 1:
        # Per layer, prefetched behind the previous layer's compute: weights gathered before forward
        # and again before backward, gradients reduce-scattered after it (ZeRO paper Sec. 7).
        layer_bytes = stage_params / layers
        ag = group_collective_s(
            "all_gather", spans["dp"], layer_bytes * recipe.param_bytes, cluster, eff
        )
        rs = group_collective_s(
            "reduce_scatter", spans["dp"], layer_bytes * recipe.grad_bytes, cluster, eff
        )
        z_f = layers * max(0.0, ag - (mm_f + mem_f) / layers)
        z_b = layers * max(0.0, ag + rs - (2 * mm_f + mem_b + rec) / layers)
    fwd = mm_f + mem_f + tp_f + send + z_f
    bwd = 2 * mm_f + mem_b + rec + tp_b + send + z_b
    return StageTimes(
        matmul_s=3 * mm_f,
        memory_bound_s=mem_f + mem_b,
        recompute_s=rec,
        tp_s=tp_f + tp_b,
        p2p_s=2 * send,
        zero_gather_s=z_f + z_b,
        forward_s=fwd,
        backward_s=bwd,
    )


@dataclass(frozen=True, kw_only=True)
class Breakdown:
    """Seconds of one step on the critical path; the parts sum to the step time."""

    compute_s: float  # GEMMs, forward + backward, no recompute
    memory_bound_s: float  # elementwise kernels (norms, dropout, softmax, GeLU) limited by HBM
    recompute_s: float
    tp_s: float  # exposed TP collectives
    pp_p2p_s: float
    pp_bubble_s: float  # idle time of the slowest stage: simulated makespan − its busy time
    zero_gather_s: float  # exposed ZeRO-3 per-layer gathers
    dp_s: float  # exposed gradient sync (and ZeRO-1/2 parameter all-gather)
    optimizer_s: float  # the memory-bound optimizer step

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
    }

    def parts(self) -> dict[str, float]:
        """Display label -> seconds, in stacking order."""
        return {self.LABELS[f.name]: getattr(self, f.name) for f in fields(self)}

    @property
    def total_s(self) -> float:
        return sum(getattr(self, f.name) for f in fields(self))


def step_breakdown(
    st: StageTimes,
    cluster: Cluster,
    spans: dict[str, GroupSpan],
    lay: Layout,
    training: Training,
    params: int,
) -> tuple[Breakdown, float]:
    """(breakdown, DP sync before overlap): pipeline makespan, exposed DP sync, optimizer step."""
    # params: parameters on the GPU of the stage holding the most (it syncs and updates last).
    eff, recipe = training.efficiency, get_recipe(training.recipe)
    m = training.num_microbatches(lay)
    busy = st.forward_s + st.backward_s
    makespan = makespan_per_microbatch(lay.schedule, lay.pp, m, lay.num_chunks) * busy
    sync = dp_sync_s(lay.zero_stage, spans["dp"], params, recipe, cluster, eff)
    # Overlap window: one micro-batch's bwd (fwd), as calculon-ai/calculon calculon/llm/llm.py
    dp = (
        max(0.0, sync[0] - st.backward_s) + max(0.0, sync[1] - st.forward_s)
        if training.overlap_dp
        else sum(sync)
    )
    # The optimizer step is memory-bound: read + write optimizer state, read grads, write weights.
    sharded = -(-params // lay.dp) if lay.zero_stage >= 1 else params
    opt = sharded * (2 * recipe.optimizer_bytes + recipe.grad_bytes + recipe.param_bytes)
    return Breakdown(
        compute_s=m * st.matmul_s,
        memory_bound_s=m * st.memory_bound_s,
        recompute_s=m * st.recompute_s,
        tp_s=m * st.tp_s,
        pp_p2p_s=m * st.p2p_s,
        pp_bubble_s=max(0.0, makespan - m * busy),
        zero_gather_s=m * st.zero_gather_s,
        dp_s=dp,
        optimizer_s=opt / (cluster.gpu.hbm_bandwidth_bytes_per_s * eff.hbm),
    ), sum(sync)


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
