"""The planner's context and expert parallelism: group placement, the ring's exposed hops and the
all-to-alls against hand computations, the rules rejected with their message, the bounded search.
"""

import pytest

from core.expert_parallel.spec import any_preset
from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, evaluate, search
from core.planner.cp_ep import cp_degrees, cp_layer, ep_degrees, ep_layer, layout_spans
from core.training import Efficiency

EFF = Efficiency()
NIC = 50e9 * 0.94  # one 400 Gb/s NDR NIC per GPU at the planner's 94%
NVL = 450e9 * 0.77  # H100 NVLink 4 at 77%
A_IB, A_NVL = 14e-6, 3.4e-6  # the presets' latencies


def test_cp_groups_sit_after_tp_and_cross_nodes_when_tp_fills_the_node():
    sp = layout_spans(Layout(dp=1, tp=8, pp=1, cp=4), make_cluster(num_nodes=4))
    assert sp["tp"].nodes_per_group == 1 and sp["tp"].size == 8
    # CP stride 8 = a node: its 4 ranks sit on 4 nodes, one each, on InfiniBand
    assert sp["cp"].size == 4 and sp["cp"].nodes_per_group == 4 and sp["cp"].ranks_per_node == 1
    assert sp["cp"].link == "InfiniBand NDR"
    # DP × CP is the gradient group (Megatron's dp_cp)
    assert sp["dp"].size == 4
    sp = layout_spans(Layout(dp=2, tp=2, pp=1, cp=4), make_cluster(num_nodes=2))
    assert sp["cp"].nodes_per_group == 1 and sp["dp"].size == 8  # CP 4 × TP 2 fits a node


def test_ep_groups_fold_into_dp_with_etp_equal_tp():
    cl = make_cluster(num_nodes=2)
    # TP 1: EP 8 = 8 consecutive ranks, one node
    sp = layout_spans(Layout(dp=16, tp=1, ep=8), cl)
    assert sp["ep"].size == 8 and sp["ep"].nodes_per_group == 1
    # TP 2 (= ETP): EP 8 takes every other rank of 16: both nodes
    sp = layout_spans(Layout(dp=8, tp=2, ep=8), cl)
    assert sp["ep"].nodes_per_group == 2 and sp["ep"].ranks_per_node == 4


def test_ring_hop_exposed_beyond_the_block_by_hand():
    # Llama-3.1 8B: 8 K/V heads of 128; S = 32,768, C = 4, TP 1, b 1: B_kv = 2·8192·8·128·2 B
    model, cl = preset("Llama-3.1 8B"), make_cluster(num_nodes=4)
    span = layout_spans(Layout(dp=1, tp=8, cp=4), cl)["cp"]  # across nodes
    r = cp_layer(model, cl, span, seq_len=32768, micro_batch=1, tp=1, attention_s=1e-3, eff=EFF)
    block = 2 * 8192 * 8 * 128 * 2
    assert r.hop_bytes == block == 33_554_432
    hop = A_IB + block / NIC  # 728 µs
    assert r.hop_s == pytest.approx(hop) and r.block_s == pytest.approx(0.25e-3)
    assert r.forward_s == pytest.approx(3 * (hop - 0.25e-3))
    assert r.backward_s == pytest.approx(3 * (A_IB + 2 * block / NIC - 0.5e-3))
    # a longer block hides it
    assert (
        cp_layer(
            model, cl, span, seq_len=32768, micro_batch=1, tp=1, attention_s=4e-3, eff=EFF
        ).forward_s
        == 0.0
    )


def test_all_to_all_inside_a_node_by_hand():
    cl = make_cluster(num_nodes=2)
    span = layout_spans(Layout(dp=16, tp=1, ep=8), cl)["ep"]
    r = ep_layer(cl, span, tokens=4096, top_k=2, hidden=4096, eff=EFF)
    s = 4096 * 2 * 4096 * 2
    assert r.buffer_bytes == s and r.nic_bytes == 0
    assert r.all_to_all_s == pytest.approx(7 * A_NVL + s * 7 / 8 / NVL)
    assert r.forward_s == r.backward_s == pytest.approx(2 * r.all_to_all_s)
    full = ep_layer(cl, span, tokens=4096, top_k=2, hidden=4096, eff=EFF, full_recompute=True)
    assert full.backward_s == pytest.approx(4 * r.all_to_all_s)


def test_mixtral_step_carries_its_all_to_alls():
    """DP 16 × EP 8 on 2 × 8 H100, one micro-batch of 4,096 tokens per rank: 32 MoE layers ×
    (dispatch + combine) × (forward + backward) all-to-alls of the inside-a-node size."""
    cl, tr = make_cluster(num_nodes=2), Training(global_batch=16, seq_len=4096, recompute="full")
    ev = evaluate(any_preset("Mixtral 8x7B"), cl, Layout(dp=16, tp=1, ep=8, zero_stage=1), tr)
    one = 7 * A_NVL + 4096 * 2 * 4096 * 2 * 7 / 8 / NVL
    assert ev.breakdown.ep_s == pytest.approx(32 * 6 * one)  # full recompute: 2 more
    assert ev.breakdown.cp_s == 0
    assert ev.breakdown.total_s == pytest.approx(ev.step_time_s)
    # MFU counts active parameters: 6 N_active + attention per token
    m = any_preset("Mixtral 8x7B")
    assert ev.model_flops == pytest.approx(m.flops_per_token(4096) * 16 * 4096)
    assert m.matmul_params < m.active_params < m.num_params


def test_dense_models_time_as_before_without_cp_or_ep():
    cl, tr = make_cluster(num_nodes=1), Training(global_batch=8, seq_len=2048)
    ev = evaluate(preset("Llama-3.2 1B"), cl, Layout(dp=8), tr)
    assert ev.breakdown.cp_s == ev.breakdown.ep_s == 0


def test_cp_cuts_the_per_gpu_work_and_memory():
    cl = make_cluster(num_nodes=2)
    tr = Training(global_batch=2, seq_len=32768, recompute="selective")
    m = preset("Llama-3.1 8B")
    one = evaluate(m, cl, Layout(dp=2, tp=8), tr)
    two = evaluate(m, make_cluster(num_nodes=4), Layout(dp=2, tp=8, cp=2), tr)
    assert two.memory.activations_bytes == pytest.approx(one.memory.activations_bytes / 2, rel=0.01)
    assert two.breakdown.compute_s < 0.55 * one.breakdown.compute_s  # half the tokens per GPU
    assert two.breakdown.cp_s >= 0


def test_rules_are_rejected_with_the_rule_and_the_fix():
    tr = Training(global_batch=8, seq_len=4098)
    dense = preset("Llama-3.2 1B")
    r = search(dense, make_cluster(num_nodes=1), tr, eps=(2,), zero_stages=(0,))
    assert not r.ranked and {x.rule for x in r.rejected} == {"CP/EP"}
    assert "EP=2 on a dense model" in r.rejected[0].reason and "use EP = 1" in r.rejected[0].reason
    r = search(dense, make_cluster(num_nodes=1), tr, cps=(2,), zero_stages=(0,))
    why = {x.reason for x in r.rejected if x.rule == "CP/EP"}
    assert any("does not split into 2·CP = 4 chunks" in w and "divisible by 4" in w for w in why)
    r = search(
        any_preset("Mixtral 8x7B"),
        make_cluster(num_nodes=3),
        Training(global_batch=24, seq_len=4096),
        eps=(3,),
        zero_stages=(0,),
    )
    why = {x.reason for x in r.rejected if x.rule == "CP/EP"}
    assert "EP=3 does not divide 8 experts" in next(iter(why)) and "{1, 2, 4, 8}" in next(iter(why))
    with pytest.raises(ValueError, match="EP × ETP = 6 does not divide TP × CP × DP = 8"):
        Layout(dp=4, tp=2, ep=3)


def test_search_bounds_cp_and_ep():
    assert cp_degrees(8192, 16384) == (1,)  # short sequences: no CP
    assert cp_degrees(131072, 16384) == (1, 2, 4, 8, 16, 32)
    assert cp_degrees(32768, 16384) == (1, 2, 4, 8)  # ≥ 4,096 tokens per rank
    assert ep_degrees(preset("Llama-3.2 1B"), 64) == (1,)
    # divide 8 and DP × CP = 12: {1, 2, 4}; 4 is the largest inside a node, none beyond
    assert ep_degrees(any_preset("Mixtral 8x7B"), 12) == (1, 4)
    # 256 experts, DP × CP = 64: 1, 8 in the node, then 16 and 32 across nodes
    assert ep_degrees(any_preset("DeepSeek-V3"), 64) == (1, 8, 16, 32)
    assert ep_degrees(any_preset("DeepSeek-V3"), 64, tp=4) == (1, 2, 4, 8)  # TP × EP ≤ 8 in-node


def test_128k_context_needs_cp_and_the_search_finds_it():
    m, cl = preset("Llama-3.1 70B"), make_cluster(num_nodes=32)
    tr = Training(global_batch=16, seq_len=131072, recompute="selective")
    assert not search(m, cl, tr, cps=(1,), sequence_parallel=True).ranked  # nothing fits
    best = search(m, cl, tr, sequence_parallel=True).fastest
    assert best is not None and best.layout.cp >= 8 and best.fits
