"""Per-micro-batch work of each pipeline stage: its layers, plus the embedding on the first stage
and the final norm, LM head and loss on the last, with the collectives each one waits for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.hardware import Cluster
from core.model import ModelSpec
from core.parallel import GroupSpan, Layout
from core.planner.comm import group_collective_s, p2p_s
from core.planner.cp_ep import cp_layer, ep_layer
from core.planner.gemm import matmul_forward_s
from core.tensor_parallel import tp_comm_plan
from core.training import Training, get_recipe

ACT_BYTES = 2  # bf16/fp16 activations
# Vocab-parallel cross entropy in fp32 per logit: forward reads the 2-byte logit, writes and
# re-reads a 4-byte probability (10 B); backward reads it and writes a 2-byte gradient (6 B)
# [derived estimate].
LOSS_FWD_BYTES, LOSS_BWD_BYTES = 10, 6
# Embedding lookup: read a row, write it (2 x 2 B per element) forward; backward reads the gradient
# and read-modify-writes the fp32 gradient row (2 + 4 + 4 B) [derived estimate]. The final norm
# reads and writes b s h (4 B forward) and reads x, dy, writes dx backward (6 B).
EMBED_FWD_BYTES, EMBED_BWD_BYTES, NORM_FWD_BYTES, NORM_BWD_BYTES = 4, 10, 4, 6


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
    """Seconds per micro-batch on one pipeline stage (its layers, plus embedding on the first and
    final norm + LM head + loss on the last)."""

    stage: int
    layers: int
    matmul_s: float  # forward + backward GEMMs, by shape (core.planner.gemm)
    memory_bound_s: float  # elementwise kernels at the achievable HBM bandwidth
    recompute_s: float  # forward work repeated in the backward pass
    tp_s: float  # exposed TP collectives (forward, backward, recomputed forward)
    p2p_s: float  # activation and gradient sends, v times with v chunks
    zero_gather_s: float  # exposed ZeRO-3 per-layer all-gathers / reduce-scatters
    cp_s: float = 0.0  # exposed ring-attention K/V hops (context parallelism)
    ep_s: float = 0.0  # MoE token all-to-alls (expert parallelism)
    forward_s: float  # the F op the pipeline simulator runs (all of the above, forward part)
    backward_s: float  # the B op
    layer_forward_s: float  # one layer's forward (what a prefetched gather can hide behind)
    layer_backward_s: float  # one layer's backward, recompute included

    @property
    def busy_s(self) -> float:
        return self.forward_s + self.backward_s


def stage_times(
    model: ModelSpec,
    cluster: Cluster,
    spans: dict[str, GroupSpan],
    lay: Layout,
    training: Training,
    stage: int,
    layers: int,
) -> StageTimes:
    """Per-micro-batch work of one stage: FLOPs from core.model, comm from core.collectives."""
    eff, recipe, recompute = training.efficiency, get_recipe(training.recipe), training.recompute
    t, s, mb, gpu = spans["tp"].size, training.seq_len, lay.micro_batch, cluster.gpu
    # CP: each rank holds S/C tokens of every activation (its queries attend to all S keys)
    cp = spans["cp"].size if "cp" in spans else 1
    first, last, tok, s_c = stage == 0, stage == lay.pp - 1, mb * s // cp, s // cp
    flop_s = gpu.bf16_flops_per_s * eff.matmul
    hbm = gpu.hbm_bandwidth_bytes_per_s * eff.hbm
    layer_mm, head_mm = matmul_forward_s(model, tok, t, s, flop_s, hbm)
    tr_f, tr_b, tr_core = layer_traffic_bytes(
        model, s_c, mb, t, lay.sequence_parallel, training.flash_attention
    )
    n_act, logits = tok * model.hidden_size, tok * model.vocab_size / t
    edge_f = (EMBED_FWD_BYTES * n_act if first else 0) + (
        NORM_FWD_BYTES * n_act + LOSS_FWD_BYTES * logits if last else 0
    )
    edge_b = (EMBED_BWD_BYTES * n_act if first else 0) + (
        NORM_BWD_BYTES * n_act + LOSS_BWD_BYTES * logits if last else 0
    )
    core = model.attention_core_forward_flops_per_token(s) / model.num_layers * tok / t
    rec_layer = {
        "none": 0.0,
        "full": layer_mm + tr_f / hbm,  # repeat the whole forward
        "selective": core / flop_s + tr_core / hbm,  # QK^T, softmax, AV
    }[recompute]
    # TP collectives per layer (2 forward, 2 backward, +2 with full recompute; SP: RS + AG) from
    # core.tensor_parallel.comm, each timed on the link the placement gives the TP group.
    plan = tp_comm_plan(
        model,
        tp=t,
        micro_batch=mb,
        seq_len=s_c,
        bytes_per_element=ACT_BYTES,
        sequence_parallel=lay.sequence_parallel,
        full_recompute=recompute == "full",
    )
    each = {
        k: group_collective_s(k, spans["tp"], plan.message_bytes, cluster, eff)
        for k in ("all_reduce", "reduce_scatter", "all_gather")
    }
    hide = 1.0 - eff.tp_overlap
    tp_lf = hide * sum(n * each[k] for k, n in plan.forward.items())
    tp_lb = hide * sum(n * each[k] for k, n in plan.backward.items())
    # Vocab-parallel embedding: each TP rank looks up its rows, then one all-reduce (SP: reduce-
    # scatter) sums them (NVIDIA/Megatron-LM megatron/core/tensor_parallel/layers.py).
    embed_tp = hide * each["reduce_scatter" if lay.sequence_parallel else "all_reduce"] * first
    # Scatter/gather optimisation: each TP rank sends b s h / t (Narayanan et al. 2021); v chunks
    # mean v boundaries per micro-batch per direction.
    send = lay.num_chunks * p2p_s(spans["pp"], n_act * ACT_BYTES / t, cluster, eff)
    ring = (
        cp_layer(
            model,
            cluster,
            spans["cp"],
            seq_len=s,
            micro_batch=mb,
            tp=t,
            attention_s=core / flop_s,
            eff=eff,
        )
        if cp > 1
        else None
    )
    cp_lf, cp_lb = (ring.forward_s, ring.backward_s) if ring else (0.0, 0.0)
    moe = _moe_layers(model, stage, layers)
    if moe and spans["ep"].size > 1:  # each TP rank dispatches its sequence-parallel slice
        a2a = ep_layer(
            cluster,
            spans["ep"],
            tokens=tok / t,
            top_k=model.top_k,
            hidden=model.hidden_size,
            eff=eff,
            full_recompute=recompute == "full",
        )
        ep_f, ep_b = moe * a2a.forward_s, moe * a2a.backward_s
    else:
        ep_f = ep_b = 0.0
    f_layer = layer_mm + tr_f / hbm + tp_lf + cp_lf
    b_layer = 2 * layer_mm + tr_b / hbm + rec_layer + tp_lb + cp_lb
    z_f = z_b = 0.0
    if lay.zero_stage == 3 and spans["dp"].size > 1:
        # Per layer, prefetched behind the previous layer's compute: weights gathered before forward
        # and again before backward, gradients reduce-scattered after it (ZeRO paper Sec. 7;
        # PyTorch FSDP forward/backward prefetch). Exposed only where the gather is the longer.
        p_layer = layer_params(model, t, lay)
        dp = spans["dp"]
        ag = group_collective_s("all_gather", dp, p_layer * recipe.param_bytes, cluster, eff)
        rs = group_collective_s("reduce_scatter", dp, p_layer * recipe.grad_bytes, cluster, eff)
        z_f = layers * max(0.0, ag - f_layer)
        z_b = layers * max(0.0, ag + rs - b_layer)
    mm_f = layers * layer_mm + head_mm * last
    mem_f, mem_b = (layers * tr_f + edge_f) / hbm, (layers * tr_b + edge_b) / hbm
    tp_f, tp_b = layers * tp_lf + embed_tp, layers * tp_lb
    rec = layers * rec_layer
    fwd = mm_f + mem_f + tp_f + send + z_f + layers * cp_lf + ep_f
    bwd = 2 * mm_f + mem_b + rec + tp_b + send + z_b + layers * cp_lb + ep_b
    return StageTimes(
        stage=stage,
        layers=layers,
        matmul_s=3 * mm_f,
        memory_bound_s=mem_f + mem_b,
        recompute_s=rec,
        tp_s=tp_f + tp_b,
        p2p_s=2 * send,
        zero_gather_s=z_f + z_b,
        cp_s=layers * (cp_lf + cp_lb),
        ep_s=ep_f + ep_b,
        forward_s=fwd,
        backward_s=bwd,
        layer_forward_s=f_layer,
        layer_backward_s=b_layer,
    )


def layer_params(model: ModelSpec, tp: int, lay: Layout) -> int:
    """The largest layer's parameters on one GPU (an MoE layer's experts ÷ EP as well)."""
    if getattr(model, "num_experts", 0):
        return model.layer_params_per_gpu(tp, lay.ep)
    return model.layer_params_per_gpu(tp)


def _moe_layers(model: ModelSpec, stage: int, layers: int) -> int:
    """MoE layers on a stage of `layers` layers (even splits: stage r holds r·n … r·n + n − 1);
    the first dense_layers keep a dense MLP (DeepSeek-V3: 3)."""
    if not getattr(model, "num_experts", 0):
        return 0
    start = stage * layers
    return max(0, start + layers - max(start, model.dense_layers))


def all_stage_times(
    model: ModelSpec, cluster: Cluster, spans: dict[str, GroupSpan], lay: Layout, training: Training
) -> tuple[StageTimes, ...]:
    """StageTimes of every pipeline stage, first to last (middle stages of equal size computed
    once)."""
    split, out, seen = lay.stage_layers(model.num_layers), [], {}
    for r, n in enumerate(split):
        key = (r == 0, r == lay.pp - 1, n)
        if key not in seen:
            seen[key] = stage_times(model, cluster, spans, lay, training, r, n)
        st = seen[key]
        out.append(st if st.stage == r else replace(st, stage=r))
    return tuple(out)
