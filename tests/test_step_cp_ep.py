"""Issue 17, everywhere else: the training-step drawing shows CP and EP as the planner models them.

One configuration, one answer: the step plan of a CP or EP layout is the planner's evaluate of
that same Layout (seconds), its CP / EP arrows carry the planner's per-layer bytes (derived here
by hand from the formulas), and the GPUs it draws in a CP ring or an EP group are the planner's
own grid groups, crossing nodes exactly where the planner's spans say they do.
"""

from __future__ import annotations

import pytest

from core.expert_parallel.spec import any_preset
from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout, place
from core.planner import Training, evaluate
from core.planner.cp_ep import _Grid, cp_layer, ep_layer, layout_spans
from core.stepplan import links, step_plan

LLAMA70 = preset("Llama-2 70B")  # h = 8,192, 64 heads, 8 K/V heads, d = 128, 80 layers
MIXTRAL = any_preset("Mixtral 8x7B")  # h = 4,096, 8 experts, top-2, 32 MoE layers


def _sum(plan, kind: str, field: str = "bytes_per_gpu", stage: int = 0) -> float:
    return sum(getattr(t, field)[stage] for p in plan.phases for t in p.traffic if t.kind == kind)


def _traffic(plan, kind: str):
    return next(t for p in plan.phases for t in p.traffic if t.kind == kind)


@pytest.mark.parametrize("cp, pp", [(2, 4), (4, 2)])
def test_dense_cp_step_is_the_planners_and_its_ring_bytes_the_hand_count(cp, pp):
    # Llama-2 70B, S = 32,768 on 8 nodes x 8 H100: TP 8 x PP x CP = 64, 16 sequences, b = 1,
    # so M = 16 micro-batches on the one DP replica.
    cluster = make_cluster(num_nodes=8)
    lay, tr = Layout(dp=1, tp=8, pp=pp, cp=cp), Training(global_batch=16, seq_len=32768)
    plan, ev = step_plan(LLAMA70, cluster, lay, tr), evaluate(LLAMA70, cluster, lay, tr)
    assert plan.evaluation.step_time_s == ev.step_time_s  # the same Layout, evaluated
    assert plan.evaluation.layout == lay
    # The phases tile the exact simulation; the planner's search-speed makespan rounds uneven
    # stage durations to 1% (core.planner.step_time), hence rel 1e-3.
    assert plan.step_time_s == pytest.approx(ev.step_time_s, rel=1e-3)
    # K/V block per hop: 2 (K, V) x b 1 x S/C tokens x h_kv/t = 8/8 heads x d 128 x 2 B.
    block = 2 * 1 * (32768 // cp) * (8 // 8) * 128 * 2
    hop = cp_layer(LLAMA70, cluster, ev.spans["cp"], seq_len=32768, micro_batch=1, tp=8,
                   attention_s=0.0, eff=tr.efficiency).hop_bytes  # fmt: skip
    assert hop == block
    # Per layer: C − 1 hops forward, twice that backward (K/V and their gradients); 80 / PP
    # layers per stage, 16 micro-batches.
    want = 16 * (80 // pp) * (cp - 1) * block * (1 + 2)
    assert _sum(plan, "cp_ring") == pytest.approx(want)
    ring = _traffic(plan, "cp_ring")
    span = layout_spans(lay, cluster)["cp"]
    # CP right after TP 8: the ring's ranks are 8 apart, on different nodes (InfiniBand).
    assert ring.crosses_node == span.crosses_node is True and ring.link == span.link


@pytest.mark.parametrize(
    "tp, nodes, nic_peers",
    [(2, 2, 4), (1, 1, 0)],  # EP 8 over two nodes (4 + 4 GPUs), and inside one node
)
def test_moe_ep_step_is_the_planners_and_its_all_to_all_bytes_the_hand_count(tp, nodes, nic_peers):
    # Mixtral 8x7B, S = 4,096, b = 1, 32 sequences; DP = 8 nodes / TP, EP 8 (one group per
    # DP x CP group), TP 2: the group is ranks t, t + 2, …, t + 14: 4 on each node.
    cluster = make_cluster(num_nodes=nodes)
    dp = 8 * nodes // tp
    lay, tr = Layout(dp=dp, tp=tp, ep=8), Training(global_batch=32, seq_len=4096)
    plan, ev = step_plan(MIXTRAL, cluster, lay, tr), evaluate(MIXTRAL, cluster, lay, tr)
    assert plan.evaluation.step_time_s == ev.step_time_s
    assert plan.step_time_s == pytest.approx(ev.step_time_s, rel=1e-3)
    m = 32 // dp
    # Buffer per all-to-all: each TP rank dispatches its b S / t tokens x top-2 x h x 2 B.
    buffer = (4096 // tp) * 2 * 4096 * 2
    a2a = ep_layer(cluster, ev.spans["ep"], tokens=4096 / tp, top_k=2, hidden=4096,
                   eff=tr.efficiency)  # fmt: skip
    assert a2a.buffer_bytes == buffer
    # Uniform routing: 7 of 8 shares leave the GPU; nic_peers of the 7 peers are on the other
    # node. Dispatch + combine forward, the same two backward, on 32 MoE layers.
    per_step = m * 32 * (2 + 2)
    assert a2a.nvlink_bytes + a2a.nic_bytes == pytest.approx(buffer * 7 / 8)
    assert _sum(plan, "ep_all_to_all") == pytest.approx(per_step * buffer * 7 / 8)
    got_nic = _sum(plan, "ep_all_to_all", "nic_bytes_per_gpu")
    assert got_nic == pytest.approx(per_step * buffer * nic_peers / 8)
    a2a_t = _traffic(plan, "ep_all_to_all")
    assert a2a_t.crosses_node == ev.spans["ep"].crosses_node == (nic_peers > 0)


def _rings(rows) -> set[tuple[int, int]]:
    return {(a, b) for row in rows for a, b in zip(row, row[1:] + row[:1])}


def test_drawn_groups_are_the_planners_grid_even_where_the_old_placement_disagreed():
    # TP 4 x CP 2 x PP 2 on 2 nodes of 8, order tp-pp-dp. The planner's grid puts CP right after
    # TP: rank = t + 4 c + 8 p, so a CP ring (t + 8p, t + 4 + 8p) sits inside one node (NVLink).
    # The old drawing placed CP ranks as DP replicas outside PP: rank = t + 4 p + 8 c, a ring
    # crossing the nodes while the planner costs it on NVLink.
    cluster = make_cluster(num_nodes=2)
    tr = Training(global_batch=8, seq_len=32768)
    lay = Layout(dp=1, tp=4, pp=2, cp=2)
    plan = step_plan(preset("Llama-2 7B"), cluster, lay, tr)
    grid = _Grid(tp=4, cp=2, pp=2, dp=1, ep=1, order="tp-pp-dp")
    want = {(t + 8 * p, t + 4 + 8 * p) for t in range(4) for p in range(2)}
    assert {tuple(r) for r in grid.groups("cp").tolist()} == want  # the hand grid
    assert set(links(plan.placement, "cp_ring", plan.drawn)) == _rings(want)
    span = layout_spans(lay, cluster)["cp"]
    assert not span.crosses_node and not _traffic(plan, "cp_ring").crosses_node
    assert _traffic(plan, "cp_ring").link == span.link == cluster.intra_link.name
    old = place(Layout(dp=2, tp=4, pp=2).dims, cluster).dims.groups("dp") // 8
    assert (old[:, 0] != old[:, 1]).all()  # the old drawing's CP rings all crossed nodes
    # The planner page's cluster map draws the same grid.
    ev = evaluate(preset("Llama-2 7B"), cluster, lay, tr)
    assert ev.placement.dims == grid and not ev.placement.crossing_ranks("cp").any()


def test_drawn_ep_groups_are_the_planners_grid():
    # Mixtral DP 4 x CP 2 x TP 2 x EP 4 on 2 nodes, order tp-pp-dp: rank = t + 2 c + 4 d. A DP x
    # CP group is the 8 ranks of one TP coordinate t, in rank order; EP 4 takes 4 consecutive
    # ones: {t, t + 2, t + 4, t + 6} (node 0) and {t + 8, …, t + 14} (node 1).
    cluster = make_cluster(num_nodes=2)
    lay = Layout(dp=4, tp=2, cp=2, ep=4)
    plan = step_plan(MIXTRAL, cluster, lay, Training(global_batch=8, seq_len=32768))
    groups = [[t + 8 * h + 2 * k for k in range(4)] for t in range(2) for h in range(2)]
    grid = _Grid(tp=2, cp=2, pp=1, dp=4, ep=4, order="tp-pp-dp")
    assert sorted(grid.groups("ep").tolist()) == sorted(groups)
    pairs = {(a, b) for g in groups for a in g for b in g if a != b}
    assert set(links(plan.placement, "ep_all_to_all", plan.drawn)) == pairs
    assert _traffic(plan, "ep_all_to_all").crosses_node is False
    assert layout_spans(lay, cluster)["ep"].crosses_node is False
    # CP rings (t + 4d, t + 2 + 4d) are whole in the drawing, and the gradient ring spans DP x CP.
    cp = {(t + 4 * d, t + 2 + 4 * d) for t in range(2) for d in range(4)}
    assert set(links(plan.placement, "cp_ring", plan.drawn)) == _rings(cp)
    assert plan.placement.coord("ep")[[0, 2, 4, 6, 8]].tolist() == [0, 1, 2, 3, 0]
