"""GEMM time by shape against public H100 measurements; DP / ZeRO communication as it runs, layer
by layer, with Megatron-Core's overlap switches."""

from dataclasses import replace

import pytest

from core.hardware import make_cluster
from core.model import gpt_spec
from core.parallel import Layout
from core.planner import (
    Training,
    chain_exposed_s,
    evaluate,
    gemm_time_s,
    group_collective_s,
    layer_gemms,
)

# H100 SXM bf16 GEMMs measured by XLA's default performance table (tensorflow/tensorflow
# third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h, sm_90): (b, m, n, k) -> TFLOP/s.
XLA_SM90 = {
    (1, 4096, 4096, 4096): 783.3,
    (1, 2048, 2048, 2048): 632.0,
    (1, 1024, 2048, 2048): 524.3,
    (1, 256, 2048, 256): 41.8,
    (1, 4096, 4096, 256): 392.2,
    (1, 4096, 512, 512): 238.8,
    (1, 2048, 512, 2048): 347.7,
    (2, 4096, 4096, 2048): 763.0,
    (1, 512, 256, 256): 11.46,
    (1, 1024, 256, 1024): 68.3,
    (1, 4096, 2048, 512): 447.0,
}


@pytest.mark.parametrize("shape, measured", XLA_SM90.items())
def test_gemm_roofline_tracks_measured_h100_throughput(shape, measured):
    b, m, n, k = shape
    # 80% of dense peak for large GEMMs (4096^3 measures 783 of 989 TFLOP/s), HBM at 85%.
    t = gemm_time_s(m, n, k, 0.8 * 989.4e12, 0.85 * 3.35e12, batch=b)
    assert 2 * b * m * n * k / t / 1e12 == pytest.approx(measured, rel=0.2)


def test_small_gemms_fall_far_below_peak():
    big = gemm_time_s(8192, 8192, 8192, 1e15, 3e12)
    small = gemm_time_s(512, 256, 256, 1e15, 3e12)
    assert 2 * 8192**3 / big / 1e15 > 0.95  # 1.1 PFLOP in 1.1 ms: the 5.5 µs fixed cost is noise
    assert 2 * 512 * 256 * 256 / small / 1e15 < 0.02  # 67 MFLOP: the fixed cost is all of it


def test_layer_gemms_add_up_to_the_models_flops():
    model = gpt_spec("toy GPT", 4, 1024, 16, 32000, 1024)
    flops = sum(2 * m * n * k for m, n, k in layer_gemms(model, 1024, 2))
    assert flops == 24 * 1024 * 1024**2 / 2  # 24 s h^2 / t for a 4h GPT layer


def test_mfu_falls_for_small_hidden_sizes_on_h100():
    c, tr = make_cluster(num_nodes=1), Training(global_batch=64, seq_len=2048)
    small = evaluate(gpt_spec("h1024", 8, 1024, 16, 50257, 2048), c, Layout(dp=8), tr)
    big = evaluate(gpt_spec("h4096", 8, 4096, 32, 50257, 2048), c, Layout(dp=8), tr)
    assert small.mfu < 0.8 * big.mfu


def _chain_brute_force(comm, compute, n):
    """Event by event: compute layers back to back; collective i waits for layer i and for i-1."""
    t_comm = 0.0
    for i in range(n):
        t_comm = max(t_comm, (i + 1) * compute) + comm
    return max(0.0, t_comm - n * compute)


@pytest.mark.parametrize("comm, compute, n", [(1, 2, 5), (3, 2, 5), (2, 2, 1), (5, 1, 8)])
def test_chain_exposure_matches_event_by_event(comm, compute, n):
    assert chain_exposed_s(comm, compute, n) == pytest.approx(_chain_brute_force(comm, compute, n))


def test_dp_overlap_hides_all_but_the_last_bucket():
    """DDP on 8 GPUs, one stage of 4 layers: with overlap_grad_reduce only the last layer's bucket
    and the embedding's (computed last) show; without it the whole buffer goes as one all-reduce
    after the backward (Megatron-Core sets no buckets then)."""
    h, s = 1024, 1024
    model = gpt_spec("toy GPT", 4, h, 16, 32000, s)
    c = make_cluster(num_nodes=1, gpus_per_node=8)
    on = Training(global_batch=32, seq_len=s)  # 4 sequences per GPU in one micro-batch
    ev_on = evaluate(model, c, Layout(dp=8, micro_batch=4), on)
    ev_off = evaluate(model, c, Layout(dp=8, micro_batch=4), replace(on, overlap_dp=False))
    layer = 12 * h * h + 13 * h
    edge = 32000 * h + s * h + 2 * h  # tied embedding, positions, final LayerNorm
    span, eff = ev_on.spans["dp"], on.efficiency  # each bucket's all-reduce as NCCL would run it
    ar = lambda p: group_collective_s("all_reduce", span, p * 2, c, eff)  # noqa: E731
    assert ev_on.stage.layer_backward_s > ar(layer)  # the premise: compute hides a bucket
    assert ev_on.breakdown.dp_s == pytest.approx(ar(layer) + ar(edge))
    assert ev_off.breakdown.dp_s == pytest.approx(ar(4 * layer + edge))
    assert ev_on.dp_sync_s == ev_off.dp_sync_s == pytest.approx(ar(4 * layer + edge))


def test_zero1_param_gather_overlap_is_megatrons_overlap_param_gather():
    h, s = 1024, 1024
    model = gpt_spec("toy GPT", 4, h, 16, 32000, s)
    c = make_cluster(num_nodes=1, gpus_per_node=8)
    tr = Training(global_batch=32, seq_len=s)
    lay = Layout(dp=8, zero_stage=1, micro_batch=4)
    on, off = (evaluate(model, c, lay, replace(tr, overlap_param_gather=x)) for x in (True, False))
    span, eff = on.spans["dp"], tr.efficiency
    ag = group_collective_s("all_gather", span, (12 * h * h + 13 * h) * 2, c, eff)
    ag_edge = group_collective_s(
        "all_gather", span, (32000 * h + s * h + 2 * h) * 2, c, tr.efficiency
    )
    assert ag < on.stage.layer_forward_s  # the premise: one layer's forward hides one gather
    # With overlap: the embedding's gather, then layer 0's; layers 1-3 hide. Without: one
    # all-gather of the whole buffer before the first forward.
    whole = group_collective_s(
        "all_gather", span, (4 * (12 * h * h + 13 * h) + 32000 * h + s * h + 2 * h) * 2, c, eff
    )
    assert off.breakdown.dp_s - on.breakdown.dp_s == pytest.approx(whole - ag - ag_edge)
    rs = group_collective_s("reduce_scatter", span, (12 * h * h + 13 * h) * 2, c, tr.efficiency)
    rs_edge = group_collective_s(
        "reduce_scatter", span, (32000 * h + s * h + 2 * h) * 2, c, tr.efficiency
    )
    assert on.breakdown.dp_s == pytest.approx(rs + rs_edge + ag + ag_edge)
