"""Hypothesis properties of the rank grid and the planner."""

from dataclasses import replace

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from core.hardware import make_cluster
from core.model import preset
from core.parallel import ORDERS, Layout, ParallelDims, group_span
from core.planner import Efficiency, Training, evaluate

MODEL = preset("Llama-3.2 1B")  # 16 layers, 32 heads, 8 KV heads

degrees = st.integers(min_value=1, max_value=6)


@settings(max_examples=60, deadline=None)
@given(dp=degrees, pp=degrees, tp=degrees, order=st.sampled_from(ORDERS))
def test_ranks_partition_exactly(dp, pp, tp, order):
    d = ParallelDims(dp=dp, pp=pp, tp=tp, order=order)
    n = dp * pp * tp
    assert sorted(d.grid().ravel().tolist()) == list(range(n))
    for dim, size in (("dp", dp), ("pp", pp), ("tp", tp)):
        g = d.groups(dim)
        assert g.shape == (n // size, size)
        assert sorted(g.ravel().tolist()) == list(range(n))
        for row in g.tolist():  # members differ only along dim
            coords = [d.coords(r) for r in row]
            assert len({tuple(v for k, v in c.items() if k != dim) for c in coords}) == 1
    assert all(d.rank(**d.coords(r)) == r for r in range(n))


@settings(max_examples=60, deadline=None)
@given(
    dp=degrees,
    pp=degrees,
    tp=degrees,
    order=st.sampled_from(ORDERS),
    gpn=st.integers(1, 8),
    dim=st.sampled_from(("dp", "pp", "tp")),
)
def test_crossing_detection_matches_brute_force(dp, pp, tp, order, gpn, dim):
    n = dp * pp * tp
    assume(n % gpn == 0)
    d = ParallelDims(dp=dp, pp=pp, tp=tp, order=order)
    span = group_span(d, dim, make_cluster(num_nodes=n // gpn, gpus_per_node=gpn))
    node_sets = [{r // gpn for r in row} for row in d.groups(dim).tolist()]
    assert span.crossing_groups == sum(len(s) > 1 for s in node_sets)
    assert span.nodes_per_group == max(len(s) for s in node_sets)


@settings(max_examples=25, deadline=None)
@given(
    tp=st.sampled_from((1, 2, 4, 8)),
    pp=st.sampled_from((1, 2, 4)),
    zero=st.integers(0, 3),
    nodes=st.sampled_from((1, 2, 4)),
    grow=st.sampled_from((1, 2, 4)),
    mb=st.sampled_from((1, 2)),
    recompute=st.sampled_from(("none", "selective", "full")),
)
def test_more_gpus_never_raise_memory_per_gpu(tp, pp, zero, nodes, grow, mb, recompute):
    small, big = make_cluster(num_nodes=nodes), make_cluster(num_nodes=nodes * grow)
    dp_small, dp_big = small.num_gpus // (tp * pp), big.num_gpus // (tp * pp)
    assume(dp_small >= 1)
    tr = Training(global_batch=dp_big * mb * 4, seq_len=2048, recompute=recompute)
    a = evaluate(
        MODEL, small, Layout(dp=dp_small, tp=tp, pp=pp, zero_stage=zero, micro_batch=mb), tr
    )
    b = evaluate(MODEL, big, Layout(dp=dp_big, tp=tp, pp=pp, zero_stage=zero, micro_batch=mb), tr)
    assert b.memory.total_bytes <= a.memory.total_bytes


@settings(max_examples=25, deadline=None)
@given(
    tp=st.sampled_from((1, 2, 4, 8)),
    pp=st.sampled_from((1, 2, 4, 8)),
    zero=st.integers(0, 3),
    nodes=st.sampled_from((1, 2, 4)),
    order=st.sampled_from(ORDERS),
    overlap=st.booleans(),
    schedule=st.sampled_from(("1f1b", "gpipe", "interleaved_1f1b")),
    link_eff=st.floats(0.3, 0.9),
)
def test_step_time_positive_parts_sum_and_faster_links_never_slower(
    tp, pp, zero, nodes, order, overlap, schedule, link_eff
):
    c = make_cluster(num_nodes=nodes)
    dp = c.num_gpus // (tp * pp)
    assume(dp >= 1 and not (schedule == "interleaved_1f1b" and (pp == 1 or 16 % (2 * pp))))
    tr = Training(
        global_batch=dp * pp * 2,
        overlap_dp=overlap,
        efficiency=Efficiency(intra_link=link_eff, inter_link=link_eff),
    )
    lay = Layout(
        dp=dp,
        tp=tp,
        pp=pp,
        zero_stage=zero,
        schedule=schedule,
        num_chunks=2 if schedule == "interleaved_1f1b" else 1,
        order=order,
    )
    ev = evaluate(MODEL, c, lay, tr)
    parts = ev.breakdown.parts()
    assert ev.step_time_s > 0 and all(v >= 0 for v in parts.values())
    assert abs(sum(parts.values()) - ev.step_time_s) <= 1e-9 * ev.step_time_s
    assert 0 < ev.mfu <= ev.hfu < 1
    faster = evaluate(
        MODEL, c, lay, replace(tr, efficiency=Efficiency(intra_link=1.0, inter_link=1.0))
    )
    assert faster.step_time_s <= ev.step_time_s * (1 + 1e-12)
