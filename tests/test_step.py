"""The phases of one training step (core.stepplan): windows of the simulated pipeline, which groups
communicate over which links, bytes per phase, holdings, against hand-derived values.
"""

import math

import pytest

from core.expert_parallel.spec import any_preset
from core.hardware import make_cluster
from core.model import gpt_spec, preset
from core.parallel import Layout, place
from core.pipeline import simulate
from core.planner import Training, evaluate
from core.planner.grid import grid_placement
from core.stepplan import drawn_ranks, links, pipeline_windows, step_plan

# A small GPT by hand: L = 8, h = 1024, a = 16, V = 51,200, s = 2,048, tied embeddings.
L, H, V, S = 8, 1024, 51_200, 2048
TINY = gpt_spec("tiny", L=L, h=H, a=16, V=V, s=S)
# Parameters: per layer QKV 3h² + 3h, projection h² + h, MLP 8h² + 5h, two LayerNorms 4h;
# word and position embeddings (V + s) h, final LayerNorm 2h; the output layer is tied.
PSI = L * (12 * H * H + 13 * H) + (V + S) * H + 2 * H
NODE = make_cluster(num_nodes=1, gpus_per_node=8)


def _tr(batch: int = 16, **training) -> Training:
    return Training(global_batch=batch, seq_len=S, **training)


def _plan(lay: Layout, batch: int = 16, cluster=NODE, model=TINY, **training):
    return step_plan(model, cluster, lay, Training(global_batch=batch, seq_len=S, **training))


def _total(plan, kind: str, stage: int = 0) -> float:
    return sum(t.bytes_per_gpu[stage] for p in plan.phases for t in p.traffic if t.kind == kind)


def _kinds(plan) -> set[str]:
    return {t.kind for p in plan.phases for t in p.traffic}


def test_hand_parameter_count_matches_the_model():
    assert TINY.num_params == PSI


def test_one_f_one_b_windows_match_the_hand_timeline():
    # P = 4, M = 8, F = 1, B = I + W = 2. The last stage starts its first forward at t = 3 and its
    # first backward at t = 4: the fill is [0, 4), in which stage r computes 4 - r units.
    res = simulate("1f1b", 4, 8, 1, 1.0, 1.0, 1.0)
    fill, steady, drain = pipeline_windows(res)
    assert (fill.key, steady.key, drain.key) == ("fill", "steady", "drain")
    assert (fill.start_s, fill.end_s) == (0.0, 4.0)
    assert fill.busy == pytest.approx((1.0, 0.75, 0.5, 0.25))
    assert drain.end_s == pytest.approx((8 + 4 - 1) * 3)  # (M + P - 1)(F + B)
    for r in range(4):  # every micro-batch's forward and backward lands in exactly one window
        assert sum(w.forwards[r] for w in (fill, steady, drain)) == 8
        assert sum(w.backwards[r] for w in (fill, steady, drain)) == 8
    assert fill.held == (4.0, 3.0, 2.0, 1.0)  # 1F1B: stage r holds P - r micro-batches
    assert fill.sends_forward == (4, 3, 2, 0)  # the last stage sends nothing on
    assert fill.sends_backward == (0, 0, 0, 0)


def test_gpipe_has_no_steady_state():
    # GPipe, P = 4, M = 4, F = 1: all forwards first; the last one ends at (M + P - 1) F = 7.
    fill, drain = pipeline_windows(simulate("gpipe", 4, 4, 1, 1.0, 1.0, 1.0))
    assert (fill.key, drain.key, fill.end_s) == ("fill", "drain", 7.0)
    assert fill.busy[0] == pytest.approx(4 / 7)
    assert fill.held == (4.0, 4.0, 4.0, 4.0)


def test_tp8_in_node_pp_across_nodes():
    """TP = 8 on 8-GPU nodes: TP traffic stays inside nodes; PP sends cross them."""
    plan = step_plan(
        preset("Llama-2 70B"),
        make_cluster(num_nodes=8),
        Layout(dp=1, tp=8, pp=8),
        Training(global_batch=64, seq_len=4096),
    )
    tp = [t for p in plan.phases for t in p.traffic if t.dim == "tp"]
    pp = [t for p in plan.phases for t in p.traffic if t.dim == "pp"]
    assert tp and not any(t.crosses_node for t in tp)
    assert pp and all(t.crosses_node for t in pp)
    drawn = drawn_ranks(plan.placement)
    assert drawn.count == 64
    tp_links = links(plan.placement, "tp", drawn)
    assert len(tp_links) == 64  # a ring of 8 in each of the 8 nodes
    assert all(a // 8 == b // 8 for a, b in tp_links)
    pp_links = links(plan.placement, "pp_forward", drawn)
    assert len(pp_links) == 7 * 8  # 7 stage boundaries x 8 TP ranks
    assert all(a // 8 + 1 == b // 8 for a, b in pp_links)  # stage s (node s) -> node s + 1


def test_phases_tile_the_planners_step():
    model, cluster = preset("Llama-2 70B"), make_cluster(num_nodes=8)
    lay, tr = Layout(dp=4, tp=4, pp=4, zero_stage=1), Training(global_batch=256, seq_len=4096)
    plan = step_plan(model, cluster, lay, tr)
    keys = [p.key for p in plan.phases]
    assert keys == ["rest", "fill", "steady", "drain", "grad_sync", "optimizer", "param_gather"]
    for a, b in zip(plan.phases[1:], plan.phases[2:]):
        assert a.end_s == pytest.approx(b.start_s)
    # rel 1e-3: the planner's search-speed makespan rounds uneven stage durations to 1% (≤ 0.5%
    # of an op); the drawing simulates them exactly (core.planner.step_time).
    want = evaluate(model, cluster, lay, tr).step_time_s
    assert plan.step_time_s == pytest.approx(want, rel=1e-3)


def test_zero3_gathers_and_zero0_does_not():
    z0, z3 = _plan(Layout(dp=8)), _plan(Layout(dp=8, zero_stage=3))
    assert {"zero3_gather", "zero3_scatter"} <= _kinds(z3)
    assert "dp_all_reduce" not in _kinds(z3)
    assert not {"zero3_gather", "zero3_scatter", "dp_all_gather"} & _kinds(z0)
    assert "param_gather" not in [p.key for p in z0.phases + z3.phases]
    z1 = _plan(Layout(dp=8, zero_stage=1))
    assert [p.key for p in z1.phases][-3:] == ["grad_sync", "optimizer", "param_gather"]


def test_dp_bytes_are_ring_bytes_of_the_hand_count():
    m = 16 // 8  # micro-batches per replica
    z0 = _plan(Layout(dp=8))
    assert _total(z0, "dp_all_reduce") == pytest.approx(2 * 7 / 8 * PSI * 2)  # 2(d-1)/d Ψ 2 B
    z1 = _plan(Layout(dp=8, zero_stage=1))
    assert _total(z1, "dp_reduce_scatter") == pytest.approx(7 / 8 * PSI * 2)
    assert _total(z1, "dp_all_gather") == pytest.approx(7 / 8 * PSI * 2)
    z3 = _plan(Layout(dp=8, zero_stage=3))  # gathered before each forward and each backward
    assert _total(z3, "zero3_gather") == pytest.approx(m * 2 * 7 / 8 * PSI * 2)
    assert _total(z3, "zero3_scatter") == pytest.approx(m * 7 / 8 * PSI * 2)


def test_tp_bytes_per_step():
    # DP 2 x TP 4: m = 16 / 2 = 8 micro-batches; per layer 2 all-reduces forward + 2 backward of
    # b s h bf16 values, each sending 2 (t - 1)/t of it.
    plan = _plan(Layout(dp=2, tp=4))
    per_all_reduce = 2 * 3 / 4 * S * H * 2
    assert _total(plan, "tp") == pytest.approx(8 * L * 4 * per_all_reduce)
    assert all(not t.crosses_node for p in plan.phases for t in p.traffic if t.kind == "tp")


def test_pp_send_bytes_per_step():
    plan = _plan(Layout(dp=1, pp=8))  # 16 micro-batches, one layer per stage
    msg = S * H * 2  # b s h bf16 activations at a boundary (TP = 1: no scatter)
    assert _total(plan, "pp_forward", 0) == pytest.approx(16 * msg)
    assert _total(plan, "pp_forward", 7) == 0
    assert _total(plan, "pp_backward", 0) == 0
    assert _total(plan, "pp_backward", 7) == pytest.approx(16 * msg)


def test_holdings_replicated_vs_sharded():
    ddp, z3 = _plan(Layout(dp=8)), _plan(Layout(dp=8, zero_stage=3))
    shard = math.ceil(PSI / 8)
    h0, h3 = ddp.phases[0].holdings[0], z3.phases[0].holdings[0]
    assert (h0.parameters_bytes, h0.full_parameters_bytes) == (2 * PSI, 2 * PSI)
    assert (h3.parameters_bytes, h3.full_parameters_bytes) == (2 * shard, 2 * PSI)
    assert h3.optimizer_bytes == 12 * shard and h3.full_optimizer_bytes == 12 * PSI
    assert not h0.gradients_live and h0.activations_bytes == 0  # before the step
    drain = next(p for p in ddp.phases if p.key == "drain")
    assert drain.holdings[0].gradients_live


def test_the_fill_greys_the_late_stages():
    plan = _plan(Layout(dp=1, pp=8))
    fill = next(p for p in plan.phases if p.key == "fill")
    # The fill is mb 0's forward through every stage, sum F_r; stage r runs P - r forwards in
    # it. The last stage also times the LM head (about 3 layers here), so F differs per stage.
    f = [st.forward_s for st in evaluate(TINY, NODE, Layout(dp=1, pp=8), _tr()).stages]
    assert fill.busy == pytest.approx([(8 - r) * f[r] / sum(f) for r in range(8)])


def test_big_jobs_draw_two_replicas_and_the_first_stages():
    cluster = make_cluster(num_nodes=64)
    drawn = drawn_ranks(place(Layout(dp=8, tp=8, pp=8).dims, cluster))
    assert (drawn.count, drawn.dp, drawn.pp, drawn.tp) == (64, 2, 4, 8)
    assert len(drawn.nodes) == 8  # TP fills a node: 2 replicas x 4 stages


def test_rules_are_explained():
    with pytest.raises(ValueError, match="HSDP"):
        _plan(Layout(dp=8, zero_stage=3, shard_degree=4))
    with pytest.raises(ValueError, match="smaller global batch"):
        _plan(Layout(dp=1, pp=8), batch=65536)


# Context and expert parallelism (issue 17), as the planner models them: the step plan is the
# planner's evaluate of a Layout with cp / ep, on the planner's grid (CP right after TP, Megatron-
# Core order tp-cp-ep-dp-pp; EP groups are EP consecutive GPUs of a DP x CP group). On one 8-GPU
# node, TP 2 x CP 2 x DP 2 (order tp-pp-dp, PP 1): rank = t + 2 c + 4 d.
MIXTRAL = any_preset("Mixtral 8x7B")  # the planner's MoeSpec


def _cpep(lay: Layout, model=TINY, batch: int = 16, cluster=NODE):
    return step_plan(model, cluster, lay, _tr(batch))


def test_cp_rings_join_the_cp_ranks_of_the_grid():
    plan = _cpep(Layout(dp=2, tp=2, cp=2))  # DP 2 x CP 2 x TP 2 = 8
    got = set(links(plan.placement, "cp_ring", plan.drawn))
    # CP rings: (t + 4d, t + 2 + 4d) for t, d in {0, 1}.
    want = {(0, 2), (2, 0), (1, 3), (3, 1), (4, 6), (6, 4), (5, 7), (7, 5)}
    assert got == want
    assert "cp_ring" in _kinds(plan)
    assert all(t.link == NODE.intra_link.name for p in plan.phases for t in p.traffic)


def test_cp_ring_bytes_of_the_hand_count():
    # Per layer and micro-batch (b = 1, S/C = 1,024 tokens per GPU) each GPU sends C - 1 = 1
    # K/V block: 2 (K and V) x 1,024 tokens x h_kv/t = 8 heads x d = 64 x 2 B = 2,097,152 B
    # (arXiv:2310.01889 Alg. 1); backward sends the block and its gradient: twice that. DP 2
    # replicas: 16 / 2 = 8 micro-batches of 8 layers.
    plan = _cpep(Layout(dp=2, tp=2, cp=2))
    block = 2 * 1024 * 8 * 64 * 2
    assert _total(plan, "cp_ring") == pytest.approx(8 * 8 * (1 + 2) * block)
    assert "cp_ring" not in {t.kind for t in plan.phases[0].traffic}  # before the step
    sync = next(p for p in plan.phases if p.key == "grad_sync")
    assert "cp_ring" not in {t.kind for t in sync.traffic}  # CP lives inside attention layers
    # Gradients sync over DP x CP = 4 GPUs: a DDP all-reduce ring of 4 between ranks t + 2k.
    ring = set(links(plan.placement, "dp_all_reduce", plan.drawn))
    assert ring == {(t + 2 * k, t + 2 * ((k + 1) % 4)) for t in (0, 1) for k in range(4)}


def test_ep_all_to_all_bytes_and_groups():
    # Mixtral 8x7B (h = 4,096, top-2, 32 MoE layers), DP 4 x TP 2, EP 2, S = 2,048, 16 / 4 = 4
    # micro-batches. Per MoE layer each TP rank dispatches its 2,048 / 2 = 1,024 tokens x 2
    # experts x 4,096 x 2 B and sends (2 - 1)/2 of it; the combine returns as much; the
    # backward repeats both (selective recompute).
    plan = _cpep(Layout(dp=4, tp=2, ep=2), model=MIXTRAL)
    per = 1024 * 2 * 4096 * 2 / 2
    assert _total(plan, "ep_all_to_all") == pytest.approx(4 * 32 * 2 * 2 * per)
    pairs = set(links(plan.placement, "ep_all_to_all", plan.drawn))
    assert pairs == {(0, 2), (2, 0), (1, 3), (3, 1), (4, 6), (6, 4), (5, 7), (7, 5)}
    four = _cpep(Layout(dp=4, tp=2, ep=4), model=MIXTRAL)  # every pair of 4 DP ranks, both ways
    pairs = set(links(four.placement, "ep_all_to_all", four.drawn))
    assert pairs == {(a + t, b + t) for t in (0, 1) for a in (0, 2, 4, 6) for b in (0, 2, 4, 6)
                     if a != b}  # fmt: skip


def test_cp_and_ep_rules_name_the_fix():
    with pytest.raises(ValueError, match="dense model"):
        _cpep(Layout(dp=4, tp=2, ep=2))
    with pytest.raises(ValueError, match=r"DP × TP × PP × CP = 4 × 2 × 1 × 3 = 24 ≠ 8 GPUs"):
        _cpep(Layout(dp=4, tp=2, cp=3))
    with pytest.raises(ValueError, match=r"EP × ETP = 16 does not divide TP × CP × DP = 8"):
        _cpep(Layout(dp=4, tp=2, ep=8), model=MIXTRAL)
    with pytest.raises(ValueError, match="EP=16 .*8 experts"):  # Mixtral has 8 experts
        _cpep(Layout(dp=16, ep=16), model=MIXTRAL, cluster=make_cluster(num_nodes=2))


def test_big_jobs_draw_whole_cp_rings():
    big = make_cluster(num_nodes=128)
    pl = grid_placement(Layout(dp=4, tp=8, pp=8, cp=4), big)  # 4 x 8 x 8 x 4 = 1,024 GPUs
    drawn = drawn_ranks(pl)
    assert (drawn.cp, drawn.dp, drawn.tp) == (4, 1, 8)  # one whole ring of 4 CP ranks
    ring = links(pl, "cp_ring", drawn)
    assert sorted(a for a, _ in ring) == sorted(b for _, b in ring) == sorted(drawn.ranks)
