"""Expert parallelism: the MoE layer's all-to-all moves exactly the routed rows and returns them;
capacity, balancing, node limits and parameter counts against hand or brute-force values."""

import math

import numpy as np
import pytest

from core import expert_parallel as ep
from core.expert_parallel.models import layer_tensors


def silu_mlp(x, w1, w2):
    a = x @ w1
    return (a / (1 + np.exp(-a))) @ w2


@pytest.mark.parametrize("ranks", [1, 2, 4, 8])
@pytest.mark.parametrize("cf", [None, 1.0])
def test_all_to_all_moves_exactly_the_routed_tokens_and_returns_them(ranks, cf):
    r = ep.moe_layer(tokens=64, experts=8, top_k=2, ep=ranks, capacity_factor=cf, skew=0.5)
    # brute force: count kept (token, expert) pairs by origin rank and owner rank
    expect = np.zeros((ranks, ranks), dtype=int)
    for t in range(64):
        for j in range(2):
            if r.kept[t, j]:
                expect[t // (64 // ranks), r.idx[t, j] // (8 // ranks)] += 1
    np.testing.assert_array_equal(r.traffic_rows, expect)
    off = expect * (1 - np.eye(ranks, dtype=int))
    np.testing.assert_array_equal(r.dispatch.traffic_bytes, off * r.rows_bytes)
    np.testing.assert_array_equal(r.combine.traffic_bytes, off.T * r.rows_bytes)  # the way back
    for s in range(ranks):  # every row returns to the rank its token started on
        for d in range(ranks):
            assert len(r.combine.received[s][d]) == expect[s, d]
    assert r.max_abs_error < 1e-12


def test_moe_output_equals_a_token_by_token_loop():
    r = ep.moe_layer(tokens=32, experts=8, top_k=2, ep=4, capacity_factor=1.0, seed=5)
    x, _ = ep.token_batch(32, 8, skew=1.0, seed=5)
    rng = np.random.default_rng(5 + 2)  # the layer's seeded expert weights, drawn again here
    w1 = rng.standard_normal((8, 8, 16)) / math.sqrt(8)
    w2 = rng.standard_normal((8, 16, 8)) / math.sqrt(16)
    out = np.zeros_like(x)
    for t in range(32):
        for j in range(2):
            if r.kept[t, j]:
                e = r.idx[t, j]
                out[t] += r.weights[t, j] * silu_mlp(x[t], w1[e], w2[e])
    np.testing.assert_allclose(r.output, out, atol=1e-12)


def test_softmax_router_by_hand():
    logits = np.array([[0.0, 1.0, 2.0, 3.0]])
    idx, w = ep.route(logits, 2)
    assert idx.tolist() == [[3, 2]]
    # renormalised softmax of the two chosen: e³/(e³+e²), e²/(e³+e²)
    assert w[0].tolist() == pytest.approx([1 / (1 + math.e**-1), 1 / (1 + math.e)])


def test_capacity_and_position_drops():
    assert ep.capacity(4096, 64, 8, 1.25) == 640  # ⌈4096·8/64 · 1.25⌉
    idx = np.array([[0, 1], [0, 2], [0, 1], [2, 0]])
    kept = ep.keep_within_capacity(idx, 3, 2)  # expert 0 takes its first two pairs only
    assert kept.tolist() == [[True, True], [True, True], [False, True], [True, False]]
    r = ep.moe_layer(tokens=256, experts=8, top_k=2, ep=4, capacity_factor=1.0)
    cap = 64  # ⌈256 · 2 / 8 · 1.0⌉
    assert r.capacity == cap
    assert r.processed.tolist() == np.minimum(r.routed, cap).tolist()
    assert r.dropped == int(np.maximum(r.routed - cap, 0).sum())


def test_slowest_rank_sets_the_step():
    r = ep.moe_layer(tokens=128, experts=8, top_k=2, ep=4)
    per_rank = [r.processed[2 * k : 2 * k + 2].sum() for k in range(4)]
    assert r.slowdown == pytest.approx(max(per_rank) / (128 * 2 / 4))


def test_bias_balancing_flattens_a_skewed_router():
    run = ep.bias_balancing(tokens=1024, experts=16, top_k=2, steps=40, gamma=0.02)
    assert run.plain[0] == run.balanced[0]  # step 0: no bias yet
    assert run.balanced[-5:].mean() < 0.6 * run.plain[-5:].mean()
    # over-loaded experts ended with a negative bias
    hot = np.argmax(run.first_loads)
    assert run.final_bias[hot] < 0


def test_node_limited_routing_caps_the_nodes():
    free = ep.node_traffic(tokens=2048, experts=256, top_k=8, nodes=8)
    lim = ep.node_traffic(tokens=2048, experts=256, top_k=8, nodes=8, node_limit=4)
    assert lim.max_nodes_per_token <= 4 < free.max_nodes_per_token
    assert lim.remote_nodes_per_token < free.remote_nodes_per_token
    b = ep.nic_bytes_per_gpu(lim, tokens_per_gpu=4096, hidden=7168, bytes_per_element=1)
    assert b == pytest.approx(lim.remote_nodes_per_token * 4096 * 7168)


def test_uniform_routing_touches_the_expected_number_of_nodes():
    # i.i.d. scores: K of E experts uniformly; E[nodes] = N (1 − C(E − E/N, K) / C(E, K))
    rng = np.random.default_rng(0)
    idx = ep.top_k(rng.random((20000, 256)), 8)
    st = ep.node_stats(idx, experts=256, nodes=8, token_node=np.zeros(20000, dtype=int))
    expect = 8 * (1 - math.comb(256 - 32, 8) / math.comb(256, 8))
    assert expect == pytest.approx(5.29, abs=0.01)
    assert st["nodes_per_token"].mean() == pytest.approx(expect, rel=0.01)


def test_node_limit_needs_enough_experts():
    with pytest.raises(ValueError, match="use M ≥ 2"):
        ep.route(np.zeros((2, 16)), 8, node_limit=1, groups=4)


def brute_params(cfg):
    """Every tensor of the checkpoint, listed by shape [out, in] from the config fields."""
    h, f = cfg.hidden, cfg.expert_ffn
    total = 2 * cfg.vocab * h + h  # embed, lm_head (untied), final norm
    active = total
    for i in range(cfg.layers):
        t = layer_tensors(cfg, i)
        total += sum(t.values())
        active += sum(t.values()) - (t["routed_experts"] if "routed_experts" in t else 0)
        if "routed_experts" in t:
            active += cfg.top_k * 3 * h * f
    return total, active


def test_mixtral_counts_tensor_by_tensor():
    c = ep.moe_preset("Mixtral 8x7B")
    per_layer = (
        2 * 4096 * 4096  # q, o
        + 2 * 1024 * 4096  # k, v (8 K/V heads × 128)
        + 8 * 4096  # router
        + 8 * 3 * 14336 * 4096  # w1, w3, w2 per expert
        + 2 * 4096  # two RMSNorms
    )
    total = 32 * per_layer + 2 * 32000 * 4096 + 4096
    active = total - 32 * 6 * 3 * 14336 * 4096
    n = ep.counts(c)
    assert (n.total, n.active) == (total, active) == (46_702_792_704, 12_879_925_248)
    assert (n.total, n.active) == brute_params(c)


def test_deepseek_v3_counts_by_hand():
    c = ep.moe_preset("DeepSeek-V3")
    mla = 1536 * 7168 + 1536 + 128 * 192 * 1536 + 576 * 7168 + 512 + 128 * 256 * 512 + 7168 * 16384
    dense_layer = mla + 2 * 7168 + 3 * 7168 * 18432
    moe_layer = mla + 2 * 7168 + 256 * 7168 + 256 + 257 * 3 * 7168 * 2048
    total = 3 * dense_layer + 58 * moe_layer + 2 * 129280 * 7168 + 7168
    n = ep.counts(c)
    assert n.total == total
    assert n.active == total - 58 * 248 * 3 * 7168 * 2048
    assert (n.total, n.active) == brute_params(c)


@pytest.mark.parametrize("name", list(ep.MOE_PRESETS))
def test_counts_match_the_published_totals(name):
    c = ep.moe_preset(name)
    n = ep.counts(c)
    assert n.total == pytest.approx(c.published_total, rel=0.005)
    assert n.active == pytest.approx(c.published_active, rel=0.02)


def test_ep_memory_by_hand():
    c = ep.moe_preset("Mixtral 8x7B")
    m = ep.ep_memory(c, ep=8, tp=1, pp=1, dp=8)
    n = ep.counts(c)
    assert m.expert_params_per_gpu == n.routed_expert / 8
    assert m.parameters_bytes == 2 * (n.dense + n.routed_expert / 8)
    assert m.optimizer_bytes == pytest.approx(12 * (n.dense / 8 + n.routed_expert / 8))
    assert ep.flops_per_token(c) == 6 * n.active


@pytest.mark.parametrize(
    "kw, rule",
    [
        (dict(gpus=128, dp=2, tp=8, pp=2, cp=4, ep=3, experts=8), "EP=3 does not divide 8"),
        (dict(gpus=64, dp=2, tp=8, pp=2, cp=4, ep=1), r"= 128 ≠ 64 GPUs"),
        (dict(gpus=32, dp=1, tp=8, pp=1, cp=4, seq_len=131072 + 4), "2·CP = 8 chunks"),
        (dict(gpus=32, dp=1, tp=8, pp=1, cp=4, cp_kind="ulysses"), "Ulysses with CP=4"),
        (dict(gpus=16, dp=1, tp=1, pp=1, cp=16, ep=32, experts=64), r"EP × ETP = 32"),
        (dict(gpus=16, dp=1, tp=1, pp=1, cp=16, ep=2), "dense model"),
        (dict(gpus=24, dp=1, tp=3, pp=2, cp=4), "TP=3 does not divide 64"),
    ],
)
def test_invalid_5d_layouts_name_the_rule_and_the_fix(kw, rule):
    base = dict(seq_len=131072, heads=64, kv_heads=8, layers=80)
    with pytest.raises(ValueError, match=rule) as err:
        ep.check_5d(**(base | kw))
    assert "use" in str(err.value) or "pick" in str(err.value) or "change" in str(err.value)


def test_valid_5d_layout_passes():
    ep.check_5d(
        gpus=256,
        dp=4,
        tp=8,
        pp=2,
        cp=4,
        ep=8,
        seq_len=131072,
        heads=64,
        kv_heads=8,
        layers=80,
        experts=64,
    )
