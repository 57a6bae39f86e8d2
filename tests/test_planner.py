"""Planner: a small case timed by hand, the 8 x 8 placement exercise, search rejections, the boring
layout.
"""

import pytest

from core.hardware import make_cluster
from core.model import ParamsOnly, gpt_spec, preset
from core.parallel import Layout, ParallelDims, group_span
from core.pipeline import simulate
from core.planner import (
    Efficiency,
    Training,
    evaluate,
    group_collective_s,
    makespan_per_microbatch,
    search,
)

MiB = 2**20


@pytest.fixture(scope="module")
def small():
    """GPT L=4, h=1024, a=16, V=32000, s=1024 on one A100 node: DP 2 x TP 2 x PP 2, B=8 -> m=4."""
    model = gpt_spec("toy GPT", 4, 1024, 16, 32000, 1024)
    cluster = make_cluster(num_nodes=1, gpus_per_node=8, gpu_name="A100 80GB")
    tr = Training(global_batch=8, seq_len=1024, flash_attention=False, overlap_dp=False)
    return evaluate(model, cluster, Layout(dp=2, tp=2, pp=2), tr)


T0 = 5.5e-6  # per-GEMM fixed cost (docs/notes/planner.md §5)


def roof(m, n, k, peak, hbm):
    """One bf16 GEMM by hand: the slower of its FLOPs and its bytes, plus the fixed cost."""
    return max(2 * m * n * k / peak, 2 * (m * k + k * n + m * n) / hbm) + T0


def test_small_case_breakdown_by_hand(small):
    peak, hbm = 312e12 * 0.7, 2039e9 * 0.85  # default efficiencies
    bw, lat = 300e9 * 0.77, 3.4e-6  # NVLink 3, all groups inside the node
    s, h, V, m, t = 1024, 1024, 32000, 4, 2
    # One layer's forward GEMMs on a TP rank (QKV, out, MLP up, MLP down) + core 4 s^2 h / t.
    gemms = [(s, 3 * h // t, h), (s, h, h // t), (s, 4 * h // t, h), (s, h, 4 * h // t)]
    layer_mm = sum(roof(*g, peak, hbm) for g in gemms) + 4 * s * s * h / t / peak
    # All four are compute-bound here, so this is (24 s h^2 + 4 s^2 h)/t at the matmul rate + 4 T0.
    assert layer_mm == pytest.approx((24 * s * h * h + 4 * s * s * h) / t / peak + 4 * T0)
    head = roof(s, V // t, h, peak, hbm)
    # Elementwise bytes per layer (n = s h = 1 Mi, f = 4 s h / t = 2 Mi, S = a s^2 / t = 8 Mi):
    # forward 2 (11 n + 2 f + 6.5 S) = 134 Mi, backward 2 (11 n + 3 f + 9.5 S) = 186 Mi. Stage 0
    # adds the embedding (4 B fwd, 10 B bwd per element of b s h); stage 1 the final norm (4 / 6 B)
    # and the loss (10 / 6 B per logit of s V / t).
    mem_f0, mem_b0 = (2 * 134 + 4) * MiB / hbm, (2 * 186 + 10) * MiB / hbm
    mem_f1 = ((2 * 134 + 4) * MiB + 10 * s * V / t) / hbm
    mem_b1 = ((2 * 186 + 6) * MiB + 6 * s * V / t) / hbm
    # NCCL's ring/Simple inside a node (NVIDIA/nccl src/graph/tuning.cc): baseLat 8.4 µs + the
    # textbook ring, 2(t-1) alpha + 2(t-1)/t n / B
    base = 8.4e-6
    ar = base + 2 * lat + (2 * s * h) / bw
    send = lat + 2 * s * h / t / bw  # b s h / t bytes each way
    # Stage 0: 2 layers' 2 fwd all-reduces + the vocab-parallel embedding's one; stage 1 the head.
    f0 = 2 * layer_mm + mem_f0 + 5 * ar + send
    b0 = 2 * 2 * layer_mm + mem_b0 + 4 * ar + send
    f1 = 2 * layer_mm + head + mem_f1 + 4 * ar + send
    b1 = 2 * (2 * layer_mm + head) + mem_b1 + 4 * ar + send
    assert [(st.forward_s, st.backward_s) for st in small.stages] == [
        pytest.approx((f0, b0)),
        pytest.approx((f1, b1)),
    ]
    assert f1 + b1 > f0 + b0  # the last stage (LM head + loss) is the busiest
    # 1F1B on 2 stages, stage 1 busiest: F0 fills, stage 1 runs 4 x (F1 + B1), B0 drains.
    makespan = f0 + m * (f1 + b1) + b0
    # Per layer (12h^2 + 7h)/2 sharded + 6h replicated = 6,301,184; stage 0 adds half the
    # vocabulary and the position table: 2 x 6,301,184 + 16,384,000 + 1,048,576.
    p_layer = 6 * h * h + 9.5 * h
    psi = 2 * p_layer + V * h / 2 + s * h
    assert psi == 30_034_944
    # DDP without overlap_grad_reduce: Megatron sends the whole buffer as one all-reduce after the
    # backward; 2-byte grads over 2 ranks, NCCL's base + 2 alpha + bytes / B. Stage 0 holds the
    # most parameters and ends its backward last.
    dp = base + 2 * lat + psi * 2 / bw
    opt = psi * (2 * 12 + 2 + 2) / hbm
    bd = small.breakdown
    assert bd.compute_s == pytest.approx(m * 3 * (2 * layer_mm + head))
    assert bd.memory_bound_s == pytest.approx(m * (mem_f1 + mem_b1))
    assert bd.tp_s == pytest.approx(m * 8 * ar)
    assert bd.pp_p2p_s == pytest.approx(m * 2 * send)
    assert bd.pp_bubble_s == pytest.approx(makespan - m * (f1 + b1), rel=0.01)  # 1% rounding
    assert bd.dp_s == pytest.approx(dp)
    assert bd.optimizer_s == pytest.approx(opt)
    assert bd.recompute_s == bd.zero_gather_s == 0
    assert small.step_time_s == pytest.approx(makespan + dp + opt, rel=0.005)
    assert small.step_time_s == pytest.approx(bd.total_s)
    # MFU: Korthikanti's 72 B s l h^2 (1 + s/6h + V/12lh) model FLOPs.
    flops = 72 * 8 * s * 4 * h * h * (1 + s / (6 * h) + V / (12 * 4 * h))
    assert small.mfu == pytest.approx(flops / (small.step_time_s * 8 * 312e12))
    assert small.tokens_per_s == pytest.approx(8 * s / small.step_time_s)
    assert small.hfu == small.mfu  # no recompute
    assert small.fits and not small.warnings


def test_pipeline_makespan_is_the_simulators(small):
    """Pipeline part of the step (all but DP and optimizer) = simulated makespan at real F, B
    times.
    """
    bd = small.breakdown
    pipe = bd.total_s - bd.dp_s - bd.optimizer_s
    # The search's cache rounds stage durations to 1% of the busiest (≤ 0.5% of each op).
    assert small.pipeline().makespan_s == pytest.approx(pipe, rel=0.005)


@pytest.mark.parametrize(
    "schedule, p, m, v",
    [
        ("1f1b", 4, 8, 1),
        ("gpipe", 8, 16, 1),
        ("interleaved_1f1b", 4, 8, 2),
        ("interleaved_1f1b", 4, 12, 3),
    ],
)
@pytest.mark.parametrize("f, b", [(1.0, 2.0), (1.0, 3.0), (0.7, 2.9)])
def test_cached_unit_makespan_scales_to_any_durations(schedule, p, m, v, f, b):
    sim = simulate(schedule, p, m, v, forward_s=f, backward_input_s=b / 2, backward_weight_s=b / 2)
    assert makespan_per_microbatch(schedule, p, m, v) * (f + b) == pytest.approx(sim.makespan_s)


@pytest.mark.parametrize(
    "schedule, p, v", [("1f1b", 4, 1), ("gpipe", 3, 1), ("interleaved_1f1b", 4, 2)]
)
def test_extension_past_2p_equals_full_simulation(schedule, p, v):
    for m in (3 * p, 5 * p, 10 * p):  # the cache simulates M0 = 2P and adds M - M0
        full = simulate(
            schedule, p, m, v, forward_s=1.0, backward_input_s=1.0, backward_weight_s=1.0
        )
        assert makespan_per_microbatch(schedule, p, m, v) * 3 == pytest.approx(full.makespan_s)


def test_large_pipelines_match_the_papers_bubble():
    # Narayanan et al. 2021: makespan = (m + (p - 1)/v)(t_f + t_b).
    assert makespan_per_microbatch("interleaved_1f1b", 64, 512, 2) == pytest.approx(512 + 63 / 2)
    assert makespan_per_microbatch("1f1b", 64, 512) == pytest.approx(512 + 63)
    assert makespan_per_microbatch("gpipe", 35, 280) == pytest.approx(280 + 34)


def test_full_recompute_adds_one_forward_and_hfu():
    model = gpt_spec("toy GPT", 4, 1024, 16, 32000, 1024)
    c = make_cluster(num_nodes=1, gpus_per_node=8, gpu_name="A100 80GB")
    base = Training(global_batch=8, seq_len=1024, flash_attention=False)
    a = evaluate(model, c, Layout(dp=8), base)
    full = evaluate(
        model,
        c,
        Layout(dp=8),
        Training(global_batch=8, seq_len=1024, flash_attention=False, recompute="full"),
    )
    # 4 layers' forward GEMMs at t = 1 (all compute-bound at this size) + 4 GEMM fixed costs each.
    fwd_layers = 4 * ((24 * 1024**3 + 4 * 1024**3) / (312e12 * 0.7) + 4 * T0)
    per_layer_bytes = 2 * (11 + 8 + 6.5 * 16) * MiB  # t = 1: f = 4n, S = 16n
    # DP = 8 and B = 8: one micro-batch per GPU.
    assert full.breakdown.recompute_s == pytest.approx(
        fwd_layers + 4 * per_layer_bytes / (2039e9 * 0.85)
    )
    assert full.breakdown.compute_s == pytest.approx(a.breakdown.compute_s)
    # HFU / MFU = 96-form / 72-form (docs/notes/planner.md §1) for a GPT shape.
    s, h, l, V = 1024, 1024, 4, 32000
    ratio = 96 * (1 + s / (6 * h) + V / (16 * l * h)) / (72 * (1 + s / (6 * h) + V / (12 * l * h)))
    assert full.hfu / full.mfu == pytest.approx(ratio)


def test_exercise_8x8_tp_in_nvlink_vs_tp_across_nodes():
    """Seeds exercise: 8 nodes x 8 GPUs, TP=8 inside NVLink, PP=8 across nodes, DP=1; then TP
    across.
    """
    model, c = preset("GPT-3 175B"), make_cluster(num_nodes=8, gpus_per_node=8)
    tr = Training(global_batch=64, recompute="full")
    good = evaluate(model, c, Layout(dp=1, tp=8, pp=8), tr)
    bad = evaluate(model, c, Layout(dp=1, tp=8, pp=8, order="pp-tp-dp"), tr)
    assert good.spans["tp"].link == "NVLink 4" and bad.spans["tp"].link == "InfiniBand NDR"
    assert not good.warnings and "cross the node boundary" in bad.warnings[0]
    # NCCL ring/Simple all-reduce of b s h x 2 B = 50,331,648 B over 8 ranks (NVIDIA/nccl
    # src/graph/tuning.cc): inside
    # a node 8.4 µs + 14 NVLink hops of 3.4 µs; across 8 nodes, one member per node, 14 NET hops
    # of 14 µs, x1.4, at each GPU's 1/8 of the node's 8 NICs.
    n = 2048 * 12288 * 2
    nvlink = (8.4 + 14 * 3.4) * 1e-6 + 14 / 8 * n / (450e9 * 0.77)
    ib = (8.4 + 14 * 14) * 1.4e-6 + 14 / 8 * n / (8 * 50e9 / 8 * 0.94)
    count = 64 * 12 * 6  # micro-batches x layers per stage x (2 fwd + 2 bwd + 2 recomputed fwd)
    # Inside NVLink the last stage (LM head) is the busiest; across nodes the first is, because its
    # vocab-parallel embedding adds one more all-reduce per micro-batch on the slow link.
    assert good.stage.stage == 7 and bad.stage.stage == 0
    assert good.breakdown.tp_s == pytest.approx(count * nvlink)
    assert bad.breakdown.tp_s == pytest.approx((count + 64) * ib)
    assert bad.stages[7].matmul_s == good.stages[7].matmul_s
    diff = {k: bad.breakdown.parts()[k] - v for k, v in good.breakdown.parts().items()}
    assert max(diff, key=diff.get) == "exposed TP"
    assert bad.step_time_s / good.step_time_s > 2
    assert good.fits and good.memory.total_bytes < 80e9


def test_evaluate_errors_name_the_rule_and_fix():
    model, c = preset("Llama-2 7B"), make_cluster(num_nodes=2)
    with pytest.raises(
        ValueError, match=r"global batch 100 is not divisible by DP × micro-batch = 16 × 1"
    ):
        evaluate(model, c, Layout(dp=16), Training(global_batch=100))
    with pytest.raises(ValueError, match=r"TP=3 does not divide 32 attention heads"):
        evaluate(model, make_cluster(num_nodes=3), Layout(dp=8, tp=3), Training(global_batch=64))
    with pytest.raises(ValueError, match="needs a model shape"):
        evaluate(ParamsOnly(num_params=10**9), c, Layout(dp=16), Training(global_batch=16))
    with pytest.raises(ValueError, match=r"efficiency matmul=1.5 must be in \(0, 1\]"):
        Efficiency(matmul=1.5)


def test_evaluate_allows_but_flags_tp_over_node_size():
    model, c = preset("Llama-2 7B"), make_cluster(num_nodes=2)
    ev = evaluate(model, c, Layout(dp=1, tp=16), Training(global_batch=8))
    assert ev.warnings[0].startswith("TP=16 exceeds 8 GPUs per node")
    assert ev.spans["tp"].link == "NVLink 4 + InfiniBand NDR"


def test_search_rejects_with_reasons():
    model = gpt_spec("toy GPT", 6, 1536, 12, 32000, 2048)  # 12 heads, 6 layers
    c = make_cluster(num_nodes=2, gpus_per_node=8)
    res = search(model, c, Training(global_batch=12))
    by = {(r.tp, r.pp): r for r in res.rejected if r.zero_stage is None and r.micro_batch is None}
    assert by[(16, 1)].reason == (
        "TP=16 exceeds 8 GPUs per node: TP groups would cross the node boundary; use TP ≤ 8"
    )
    assert (
        by[(8, 1)].rule == "model split"
        and "TP=8 does not divide 12 attention heads" in by[(8, 1)].reason
    )
    # PP = 4 splits 6 layers unevenly (the LM head's stage lighter); PP = 8 has too few layers.
    assert by[(1, 8)].rule == "model split" and "PP=8 exceeds the 6 layers" in by[(1, 8)].reason
    uneven = [e.layout for e in res.ranked if e.layout.pp == 4]
    assert uneven and all(sum(x.layers_per_stage) == 6 for x in uneven)
    assert (
        by[(1, 1)].rule == "batch"
        and "global batch 12 is not divisible by DP=16" in by[(1, 1)].reason
    )
    # Every (TP, PP) of 16 GPUs appears, ranked or rejected.
    seen = {(e.layout.tp, e.layout.pp) for e in res.ranked} | {(r.tp, r.pp) for r in res.rejected}
    assert seen == {(t, p) for t in (1, 2, 4, 8, 16) for p in (1, 2, 4, 8, 16) if t * p <= 16}
    times = [e.step_time_s for e in res.ranked]
    assert times == sorted(times) and res.fastest is res.ranked[0]


def test_search_memory_rejections_and_boring_layout():
    model, c = preset("Llama-2 13B"), make_cluster(num_nodes=2, gpus_per_node=8)
    res = search(model, c, Training(global_batch=32, seq_len=4096, recompute="selective"))
    mem = [r for r in res.rejected if r.rule == "memory"]
    # DDP keeps 16 B/param of 13B = 208 GB on every GPU: never fits an 80 GB H100 without TP x PP ≥
    # 4.
    assert any(r.tp == 1 and r.pp == 1 and r.zero_stage == 0 for r in mem)
    assert all("does not fit" in r.reason for r in mem)
    # Boring by brute force: smallest TP x PP among fitting layouts, TP before PP, lowest ZeRO,
    # fastest.
    want = min(
        res.ranked,
        key=lambda e: (e.layout.tp * e.layout.pp, e.layout.pp, e.layout.zero_stage, e.step_time_s),
    )
    assert res.boring is want
    assert res.boring_slowdown == pytest.approx(want.step_time_s / res.ranked[0].step_time_s - 1)
    assert all(e.fits for e in res.ranked)


def test_collectives_on_a_group_spanning_two_nodes_by_hand():
    c = make_cluster(num_nodes=2, gpus_per_node=8)  # H100: NVLink 4 450 GB/s, 8 x NDR 50 GB/s
    span = group_span(ParallelDims(dp=16), "dp", c)  # 8 members on each of 2 nodes
    n, eff = 1e9, Efficiency()
    b_in, b_net = 450e9 * 0.77, 50e9 * 0.94
    # NCCL's pick (NVIDIA/nccl src/graph/tuning.cc), ring/Simple: busbw min(NVLink, 8 NICs) =
    # NVLink; 30 steps, 2 of them NET hops (14 µs), the rest NVLink (3.4 µs), + 8.4 µs, x1.4.
    ar = (8.4 + 28 * 3.4 + 2 * 14) * 1.4e-6 + 30 / 16 * n / b_in
    assert group_collective_s("all_reduce", span, n, c, eff) == pytest.approx(ar)
    # Reduce-scatter: ring of 15 steps, 1 across nodes, no plateau factor.
    rs = (8.4 + 14 * 3.4 + 14) * 1e-6 + 15 / 16 * n / b_in
    assert group_collective_s("reduce_scatter", span, n, c, eff) == pytest.approx(rs)
    one_per_node = group_span(ParallelDims(dp=2, tp=8), "dp", c)  # ring over the NICs only
    assert group_collective_s("all_reduce", one_per_node, n, c, eff) == pytest.approx(
        (8.4 + 2 * 14) * 1.4e-6 + n / b_net
    )


def test_zero3_gathers_exposed_when_compute_is_short():
    """ZeRO-3 at a tiny micro-batch: per-layer gathers outlast the layer's compute and show up."""
    s, h = 128, 2048
    model = gpt_spec("toy GPT", 4, h, 16, 32000, s)
    c = make_cluster(num_nodes=1, gpus_per_node=8)
    tr = Training(global_batch=8, seq_len=s)
    z3 = evaluate(model, c, Layout(dp=8, zero_stage=3), tr)
    b_in, a_in = 450e9 * 0.77, 3.4e-6
    peak, hbm = 989.4e12 * 0.7, 3.35e12 * 0.85  # H100 SXM dense BF16, HBM3
    layer = 12 * h * h + 13 * h  # one GPT layer's weights, biases and LayerNorms
    # NCCL ring/Simple all-gather of 2-byte weights over 8 GPUs: 8.4 µs + the textbook ring
    ag = 8.4e-6 + 7 * a_in + 7 / 8 * layer * 2 / b_in
    rs = ag  # ring reduce-scatter of 2-byte grads: same time
    # One layer's compute by hand: 4 GEMMs of 128 tokens (the QKV and MLP ones memory-bound at
    # this size), FlashAttention's core, elementwise bytes 46 b s h forward / 62 backward.
    gemms = [(s, 3 * h, h), (s, h, h), (s, 4 * h, h), (s, h, 4 * h)]
    mm = sum(roof(*g, peak, hbm) for g in gemms)
    assert roof(s, 3 * h, h, peak, hbm) > 2 * s * 3 * h * h / peak + T0  # memory-bound
    core = 4 * s * s * h / peak
    f_layer = mm + core + 46 * s * h / hbm
    b_layer = 2 * (mm + core) + 62 * s * h / hbm
    # Prefetched per layer: each gather hides behind one layer's compute; only the excess shows.
    fwd = 4 * max(0.0, ag - f_layer)
    bwd = 4 * max(0.0, ag + rs - b_layer)
    assert fwd > 0 and bwd > 0  # the premise: compute too short to hide the gathers
    assert z3.stage.zero_gather_s == pytest.approx(fwd + bwd)
    assert z3.breakdown.zero_gather_s == pytest.approx(fwd + bwd)  # one micro-batch per GPU
    assert z3.breakdown.dp_s == 0  # ZeRO-3 syncs inside the micro-batch, nothing after the step


def test_search_puts_sequence_parallelism_on_the_layouts():
    """SP is a layout choice: search sets it on every layout, and it shards activations over TP."""
    model, c, tr = preset("Llama-2 7B"), make_cluster(num_nodes=1), Training(global_batch=16)
    res = search(model, c, tr, sequence_parallel=True, zero_stages=(0,))
    assert res.ranked and all(e.layout.sequence_parallel for e in res.ranked)
    sp, plain = (
        evaluate(model, c, Layout(dp=1, tp=8, sequence_parallel=s), Training(global_batch=1))
        for s in (True, False)
    )
    assert sp.memory.activations_bytes < plain.memory.activations_bytes
    assert tr.num_microbatches(Layout(dp=2, micro_batch=4)) == 2  # 16 / (2 x 4)
    with pytest.raises(ValueError, match="global batch 16 is not divisible by DP × micro-batch"):
        tr.num_microbatches(Layout(dp=3))
