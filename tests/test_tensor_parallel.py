"""Tensor parallelism: sharded = unsharded with real arrays; ownership; communication accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.hardware import gpu, make_cluster
from core.model import preset
from core.tensor_parallel import (
    LINKS_COMPARED,
    REPLICATED,
    attention_backward,
    attention_forward,
    attention_ownership,
    check_tp,
    gelu,
    gelu_grad,
    layer_compute_s,
    link_comparison,
    mlp_backward,
    mlp_forward,
    mlp_ownership,
    prove_sequence_parallel_mlp,
    prove_tp_attention,
    prove_tp_mlp,
    tp_comm_plan,
    tp_sweep,
)


def _fd(f, arr, eps=1e-6):
    """Central finite-difference gradient of scalar f() w.r.t. every element of arr (in place)."""
    g = np.zeros_like(arr)
    for idx in np.ndindex(arr.shape):
        old = arr[idx]
        arr[idx] = old + eps
        up = f()
        arr[idx] = old - eps
        down = f()
        arr[idx] = old
        g[idx] = (up - down) / (2 * eps)
    return g


def test_gelu_values_and_derivative():
    assert gelu(np.array([0.0]))[0] == 0.0
    # tanh form at 1: 0.5 (1 + tanh(√(2/π) · 1.044715))
    assert gelu(np.array([1.0]))[0] == pytest.approx(
        0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * 1.044715))
    )
    a = np.linspace(-4, 4, 41)
    fd = (gelu(a + 1e-6) - gelu(a - 1e-6)) / 2e-6
    assert np.max(np.abs(gelu_grad(a) - fd)) < 1e-8
    assert gelu_grad(np.array([0.0]))[0] == pytest.approx(0.5)


def test_mlp_backward_matches_finite_differences():
    rng = np.random.default_rng(0)
    x, w1, b1, w2 = (rng.standard_normal(s) for s in [(3, 4), (4, 6), (6,), (6, 4)])
    dy = rng.standard_normal((3, 4))

    def loss():
        return float((mlp_forward(x, w1, b1, w2)[0] * dy).sum())

    dx, dw1, db1, dw2 = mlp_backward(dy, mlp_forward(x, w1, b1, w2)[1])
    for got, arr in [(dx, x), (dw1, w1), (db1, b1), (dw2, w2)]:
        assert np.max(np.abs(got - _fd(loss, arr))) < 1e-7


def _attention_by_loops(x, wq, wk, wv, wo, heads, causal):
    """Second, loop-based implementation: one head and one sequence at a time."""
    b, s, h = x.shape
    d = h // heads
    y = np.zeros((b, s, h))
    for n in range(b):
        out = np.zeros((s, h))
        for j in range(heads):
            c = slice(j * d, (j + 1) * d)
            q, k, v = x[n] @ wq[:, c], x[n] @ wk[:, c], x[n] @ wv[:, c]
            for i in range(s):
                keys = range(i + 1) if causal else range(s)
                sc = np.array([q[i] @ k[t] / math.sqrt(d) for t in keys])
                w = np.exp(sc - sc.max())
                w /= w.sum()
                out[i, c] = sum(wt * v[t] for wt, t in zip(w, keys))
        y[n] = out @ wo
    return y


@pytest.mark.parametrize("causal", [True, False])
def test_attention_forward_matches_loop_implementation(causal):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 8))
    ws = [rng.standard_normal((8, 8)) / 3 for _ in range(4)]
    y, _ = attention_forward(x, *ws, 4, causal)
    assert np.max(np.abs(y - _attention_by_loops(x, *ws, 4, causal))) < 1e-12


def test_attention_backward_matches_finite_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 6))
    ws = [rng.standard_normal((6, 6)) / 3 for _ in range(4)]
    dy = rng.standard_normal((2, 4, 6))

    def loss():
        return float((attention_forward(x, *ws, 3, True)[0] * dy).sum())

    grads = attention_backward(dy, attention_forward(x, *ws, 3, True)[1])
    for got, arr in zip(grads, [x, *ws]):
        assert np.max(np.abs(got - _fd(loss, arr))) < 1e-7


def test_causal_mask_hides_the_future():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 4, 8))
    ws = [rng.standard_normal((8, 8)) for _ in range(4)]
    later = x.copy()
    later[0, 3] += 5.0
    y1, y2 = attention_forward(x, *ws, 2)[0], attention_forward(later, *ws, 2)[0]
    assert np.array_equal(y1[0, :3], y2[0, :3]) and not np.allclose(y1[0, 3], y2[0, 3])


@pytest.mark.parametrize("tp", [1, 2, 4, 8, 16, 32])
def test_sharded_mlp_equals_unsharded_forward_and_backward(tp):
    proof = prove_tp_mlp(tp=tp, tokens=6, hidden=8, ffn=32, seed=tp)
    assert set(proof.max_abs_diff) == {"Y", "dX", "dW1", "db1", "dW2"}
    assert proof.worst < 1e-12
    assert proof.forward_collectives == ("all-reduce",) == proof.backward_collectives


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_sequence_parallel_mlp_equals_unsharded(tp):
    proof = prove_sequence_parallel_mlp(tp=tp, tokens=8, hidden=8, ffn=32, seed=tp)
    assert proof.worst < 1e-12
    assert (
        proof.forward_collectives == ("all-gather", "reduce-scatter") == proof.backward_collectives
    )


def test_sequence_parallel_needs_tp_to_divide_tokens():
    with pytest.raises(ValueError, match="TP=3 does not divide 10 tokens"):
        prove_sequence_parallel_mlp(tp=3, tokens=10, ffn=30)


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_sharded_attention_equals_unsharded_forward_and_backward(tp):
    proof = prove_tp_attention(tp=tp, batch=2, seq=5, hidden=8, heads=4, seed=tp)
    assert set(proof.max_abs_diff) == {"Y", "dX", "dWq", "dWk", "dWv", "dWo"}
    assert proof.worst < 1e-12


def test_splitting_w1_by_rows_would_be_wrong():
    # the GeLU between the matmuls is why W1 must be split by columns: GeLU(a+b) ≠ GeLU(a)+GeLU(b)
    a, b = np.array([1.0]), np.array([-0.5])
    assert abs(gelu(a + b) - (gelu(a) + gelu(b)))[0] > 0.1


def test_tp_validation_names_numbers_rule_and_fix():
    with pytest.raises(
        ValueError, match=r"TP=3 does not divide 32 ffn: .*use TP in \{1, 2, 4, 8, 16, 32\}"
    ):
        prove_tp_mlp(tp=3)
    with pytest.raises(ValueError, match="TP=8 does not divide 4 heads"):
        prove_tp_attention(tp=8, heads=4)
    with pytest.raises(ValueError, match="TP=0"):
        check_tp(0, ffn=8)
    with pytest.raises(ValueError, match="tokens=0 must be a whole number"):
        prove_tp_mlp(tp=1, tokens=0)
    with pytest.raises(ValueError, match="seq=0 must be a whole number"):
        prove_tp_attention(tp=1, seq=0)


def test_mlp_ownership_maps():
    own = mlp_ownership(tp=4, tokens=8, hidden=8, ffn=32)
    w1, w2 = own["W1 (split by columns)"], own["W2 (split by rows)"]
    assert w1.shape == (8, 32) and w2.shape == (32, 8)
    assert (
        list(w1[0, ::8]) == [0, 1, 2, 3] and (w1[:, 9] == 1).all()
    )  # column 9 is in rank 1's block
    assert list(w2[::8, 0]) == [0, 1, 2, 3] and (w2[31] == 3).all()
    assert all(np.bincount(w1.ravel()) == 8 * 8)  # each rank holds h·f/t = 64 elements of W1
    assert (own["X (block input)"] == REPLICATED).all()
    sp = mlp_ownership(tp=4, tokens=8, hidden=8, ffn=32, sequence_parallel=True)
    assert list(sp["X (block input)"][:, 0]) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert "Y (after reduce-scatter)" in sp


def test_attention_ownership_by_heads():
    own = attention_ownership(tp=2, hidden=8, heads=4)
    qkv = own["Wq, Wk, Wv (split by heads = columns)"]
    assert list(qkv[0]) == [0, 0, 0, 0, 1, 1, 1, 1]  # heads 0,1 (cols 0-3) on rank 0
    assert list(own["Wo (split by heads = rows)"][:, 0]) == [0, 0, 0, 0, 1, 1, 1, 1]


# ---------- communication accounting and time (hand arithmetic) ----------


LLAMA7 = preset("Llama-2 7B")  # h = 4096, a = 32, kv = 32, ffn = 11008, 32 layers
M = 1 * 4096 * 4096 * 2  # b·s·h elements x 2 bytes (bf16) = 33,554,432 B
H100 = 989.4e12


def test_comm_plan_counts_and_bytes_by_hand():
    plan = tp_comm_plan(LLAMA7, tp=8, micro_batch=1, seq_len=4096)
    assert plan.message_bytes == M == 33_554_432
    assert plan.forward == {"all_reduce": 2} and plan.backward == {"all_reduce": 2}
    assert plan.collectives_per_layer == 4
    per_ar = 2 * 7 / 8 * M  # ring: each GPU sends 2(t−1)/t of M
    assert plan.bytes_sent_per_gpu_per_layer == pytest.approx(4 * per_ar) == 234_881_024
    assert plan.bytes_sent_per_gpu_per_step == pytest.approx(32 * 4 * per_ar)
    assert plan.layer_input_bytes_per_gpu == M


def test_sequence_parallel_same_bytes_sharded_activations():
    sp = tp_comm_plan(LLAMA7, tp=8, micro_batch=1, seq_len=4096, sequence_parallel=True)
    assert sp.forward == {"all_gather": 2, "reduce_scatter": 2} == sp.backward
    assert sp.collectives_per_layer == 8
    assert sp.bytes_sent_per_gpu_per_layer == pytest.approx(8 * 7 / 8 * M)  # = 4 all-reduces
    assert sp.layer_input_bytes_per_gpu == M / 8
    with pytest.raises(ValueError, match="TP=8 does not divide 4100 tokens of seq_len"):
        tp_comm_plan(LLAMA7, tp=8, micro_batch=1, seq_len=4100, sequence_parallel=True)


def test_full_recompute_repeats_forward_all_reduces():
    plan = tp_comm_plan(
        LLAMA7, tp=4, micro_batch=2, seq_len=2048, full_recompute=True, num_micro_batches=3
    )
    assert plan.collectives_per_layer == 6 and plan.message_bytes == 2 * 2048 * 4096 * 2
    assert plan.bytes_sent_per_gpu_per_step == pytest.approx(
        6 * 2 * 3 / 4 * plan.message_bytes * 32 * 3
    )


def test_layer_compute_by_hand():
    # per layer: Wq, Wk, Wv, Wo (4 x 4096²) + 3 SwiGLU matrices (3 x 4096 x 11008): 2 FLOPs each per
    # token, plus QK^T and AV: 4 s h per token; forward + backward = 3 x forward.
    weights = 4 * 4096 * 4096 + 3 * 4096 * 11008
    per_token = 2 * weights + 4 * 4096 * 4096
    expected = 3 * per_token * 4096 / 8 / (H100 * 0.5)
    got = layer_compute_s(LLAMA7, gpu("H100 SXM"), tp=8, micro_batch=1, seq_len=4096, mfu=0.5)
    assert got == pytest.approx(expected, rel=1e-12)
    assert layer_compute_s(
        LLAMA7, gpu("H100 SXM"), tp=16, micro_batch=1, seq_len=4096, mfu=0.5
    ) == pytest.approx(expected / 2)


# NCCL's tuner by hand (NVIDIA/nccl src/graph/tuning.cc), links at the app's efficiencies (NVLink
# 0.77, NIC 0.94). One node of 8 H100s, M = 32 MiB: ring/Simple = 8.4 + 14 × 3.4 µs + 1.75 M / B;
# ring/LL128 = 14 + 14 × 1.9 µs + 1.75 M / (0.92 B). Trees and LL lose by > 30 % (checked by hand).
B_NVL = 450e9 * 0.77


def _ring_8(b, simple_hop, ll128_hop=None):
    simple = (8.4 + 14 * simple_hop) * 1e-6 + 1.75 * M / b
    if ll128_hop is None:
        return simple
    return min(simple, (14 + 14 * ll128_hop) * 1e-6 + 1.75 * M / (0.92 * b))


def test_link_comparison_by_hand():
    times = {
        t.link.name: t
        for t in link_comparison(
            LLAMA7, gpu("H100 SXM"), tp=8, micro_batch=1, seq_len=4096, mfu=0.5
        )
    }
    assert tuple(times) == LINKS_COMPARED
    nvlink = _ring_8(B_NVL, 3.4, 1.9)  # LL128 wins by 0.7 µs: 224.8 vs 225.5 µs
    assert times["NVLink 4"].comm_s == pytest.approx(4 * nvlink, rel=1e-9)
    assert times["NVLink 4"].algorithms == "Ring / LL128"
    pcie = _ring_8(64e9 * 0.77, 5.7)  # no LL128 without NVLink
    assert times["PCIe 5 x16"].comm_s == pytest.approx(4 * pcie, rel=1e-9)
    # InfiniBand NDR: 8 nodes of one GPU, one NIC each (busbw 50 × 0.94); every hop is a NET hop
    # at the tree's NET latency (one GPU per node): LL128 14 + 14 × 8.5 µs at 0.92 B
    ib = 133e-6 + 1.75 * M / (0.92 * 47e9)
    assert times["InfiniBand NDR"].comm_s == pytest.approx(4 * ib, rel=1e-9)
    assert times["NVLink 4"].comm_to_compute < 1 < times["PCIe 5 x16"].comm_to_compute
    sp = {
        t.link.name: t
        for t in link_comparison(
            LLAMA7, gpu("H100 SXM"), tp=8, micro_batch=1, seq_len=4096, sequence_parallel=True
        )
    }
    # SP: 4 reduce-scatters + 4 all-gathers, each a 7-step ring (8.4 + 7 × 3.4 µs + 7/8 M / B):
    # the same bytes as the all-reduces, one more base latency each
    rs = (8.4 + 7 * 3.4) * 1e-6 + 7 / 8 * M / B_NVL
    assert sp["NVLink 4"].comm_s == pytest.approx(8 * rs, rel=1e-9)


def test_tp_sweep_jumps_at_the_node_boundary():
    cluster = make_cluster(num_nodes=4)  # 4 x 8 H100, NVLink 4, 8 x NDR per node
    pts = {p.tp: p for p in tp_sweep(LLAMA7, cluster, micro_batch=1, seq_len=4096)}
    assert pts[1].comm_s == 0.0
    assert pts[8].comm_s == pytest.approx(4 * _ring_8(B_NVL, 3.4, 1.9), rel=1e-9)
    # TP=16 spans 2 nodes with all 8 NICs each: busbw min(NVLink, 8 × 47) = NVLink. Ring/LL128:
    # 14 µs + 28 NVLink hops (1.9 µs) + 2 NET hops (4.0 µs), at 0.92 × 16/30 of B
    ring16 = (14 + 28 * 1.9 + 2 * 4.0) * 1e-6 + 30 / 16 * M / (0.92 * B_NVL)
    assert pts[16].comm_s == pytest.approx(4 * ring16, rel=1e-9)
    assert pts[16].algorithms == "Ring / LL128"
    assert pts[16].latency_s == pytest.approx(4 * 75.2e-6)
    assert (
        not pts[8].crosses_node and pts[16].crosses_node and "InfiniBand NDR" in pts[16].link_label
    )
    # DGX-class: the bandwidth barely drops, comm ×1.2 while compute halves
    assert 1.1 < pts[16].comm_s / pts[8].comm_s < 1.3
    assert pts[16].compute_s == pytest.approx(pts[8].compute_s / 2)
    assert pts[8].comm_to_compute < 1 < pts[16].comm_to_compute
    # thin network (1 NIC per node): the tree, busbw min(NVLink, 2 × 47) on exactly 2 nodes,
    # LL128: 14 + 2 (7 × 1.25 + 8.5) µs, × 0.92 × 120/128 × ½ × treeCorrectionFactor 0.9
    thin = {
        p.tp: p
        for p in tp_sweep(
            LLAMA7, make_cluster(num_nodes=4, nics_per_node=1), micro_batch=1, seq_len=4096
        )
    }
    tree = 48.5e-6 + M / (94e9 * 0.92 * 120 / 128 * 0.5 * 0.9)
    assert thin[16].comm_s == pytest.approx(4 * tree, rel=1e-9)
    assert thin[16].comm_s > 3 * pts[16].comm_s


def test_tp_sweep_marks_invalid_degrees_with_reasons():
    pts = {
        p.tp: p
        for p in tp_sweep(
            preset("Llama-3.1 70B"), make_cluster(num_nodes=2), micro_batch=1, seq_len=4096
        )
    }
    assert pts[8].valid and not pts[16].valid and math.isnan(pts[16].comm_s)
    assert "TP=16 does not divide 8 KV heads" in pts[16].reason
    assert (
        "TP=32 needs 32 GPUs but the cluster has 16" in pts[32].reason
        or "KV heads" in pts[32].reason
    )
    small = {
        p.tp: p for p in tp_sweep(LLAMA7, make_cluster(num_nodes=2), micro_batch=1, seq_len=4096)
    }
    assert "TP=32 needs 32 GPUs but the cluster has 16" in small[32].reason
    with pytest.raises(ValueError, match="TP=3 does not divide 32 attention heads"):
        tp_comm_plan(LLAMA7, tp=3, micro_batch=1, seq_len=4096)
