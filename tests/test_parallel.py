"""Rank grid: placement by hand for small grids, group lists, node-crossing detection, layout
checks.
"""

import itertools

import pytest

from core.hardware import make_cluster
from core.parallel import ORDERS, Layout, ParallelDims, group_span, place


def test_megatron_docstring_example_order_tp_dp_pp():
    # Megatron-Core's initialize_model_parallel docstring (docs/notes/planner.md §2): 16 GPUs, t=2,
    # p=4, order "tp-dp-pp": TP [g0,g1], [g2,g3]...; DP [g0,g2], [g1,g3], [g4,g6]...; PP
    # [g0,g4,g8,g12]...
    d = ParallelDims(dp=2, pp=4, tp=2, order="tp-dp-pp")
    assert sorted(d.groups("tp").tolist()) == [
        [0, 1],
        [2, 3],
        [4, 5],
        [6, 7],
        [8, 9],
        [10, 11],
        [12, 13],
        [14, 15],
    ]
    assert sorted(d.groups("dp").tolist()) == [
        [0, 2],
        [1, 3],
        [4, 6],
        [5, 7],
        [8, 10],
        [9, 11],
        [12, 14],
        [13, 15],
    ]
    assert sorted(d.groups("pp").tolist()) == [
        [0, 4, 8, 12],
        [1, 5, 9, 13],
        [2, 6, 10, 14],
        [3, 7, 11, 15],
    ]


@pytest.mark.parametrize(
    "order, formula",
    [
        # docs/notes/planner.md §2: tp-dp-pp: rank = tp + t (dp + d pp); tp-pp-dp: rank = tp + t (pp
        # + p dp)
        ("tp-dp-pp", lambda tp, dp, pp, t, d, p: tp + t * (dp + d * pp)),
        ("tp-pp-dp", lambda tp, dp, pp, t, d, p: tp + t * (pp + p * dp)),
        ("dp-tp-pp", lambda tp, dp, pp, t, d, p: dp + d * (tp + t * pp)),
    ],
)
def test_rank_formula_and_inverse(order, formula):
    t, d, p = 2, 3, 4
    dims = ParallelDims(dp=d, pp=p, tp=t, order=order)
    for tp, dp, pp in itertools.product(range(t), range(d), range(p)):
        r = dims.rank(dp=dp, pp=pp, tp=tp)
        assert r == formula(tp, dp, pp, t, d, p)
        assert dims.coords(r) == {"dp": dp, "pp": pp, "tp": tp}
        assert dims.grid()[dp, pp, tp] == r


def test_default_order_puts_tp_innermost_dp_outermost():
    d = ParallelDims(dp=2, pp=2, tp=2)
    assert d.order == "tp-pp-dp"
    assert d.strides == {"tp": 1, "pp": 2, "dp": 4}
    assert d.groups("tp")[0].tolist() == [0, 1]
    assert d.groups("pp")[0].tolist() == [0, 2]
    assert d.groups("dp")[0].tolist() == [0, 4]


def test_placement_table_two_nodes_of_four():
    c = make_cluster(num_nodes=2, gpus_per_node=4)
    pl = place(ParallelDims(dp=2, pp=2, tp=2), c)
    rows = pl.table()
    # By hand: rank 5 = node 1, GPU 1; tp = 5 % 2 = 1, pp = (5 // 2) % 2 = 0, dp = 5 // 4 = 1.
    assert rows[5] == {"rank": 5, "node": 1, "local_gpu": 1, "dp": 1, "pp": 0, "tp": 1}
    assert [r["node"] for r in rows] == [0, 0, 0, 0, 1, 1, 1, 1]


def test_exercise_8x8_tp_inside_nodes_pp_across():
    c = make_cluster(num_nodes=8, gpus_per_node=8)
    spans = place(ParallelDims(dp=1, pp=8, tp=8), c).spans
    assert not spans["tp"].crosses_node and spans["tp"].link == "NVLink 4"
    assert spans["pp"].crossing_groups == 8 and spans["pp"].nodes_per_group == 8
    assert spans["pp"].ranks_per_node == 1 and spans["pp"].link == "InfiniBand NDR"
    bad = place(ParallelDims(dp=1, pp=8, tp=8, order="pp-tp-dp"), c).spans
    assert bad["tp"].crossing_groups == 8 and bad["tp"].link == "InfiniBand NDR"
    assert not bad["pp"].crosses_node


def test_two_level_group_and_uneven_tp():
    c = make_cluster(num_nodes=2, gpus_per_node=8)
    # PP innermost (stride 1), TP stride 2: TP group [0, 2, ..., 14] has 4 GPUs on each node.
    s = group_span(ParallelDims(dp=1, pp=2, tp=8, order="pp-tp-dp"), "tp", c)
    assert (s.nodes_per_group, s.ranks_per_node, s.even) == (2, 4, True)
    assert s.link == "NVLink 4 + InfiniBand NDR"
    # TP = 3 on 8-GPU nodes, 24 GPUs: groups [6, 7, 8] and [15, 16, 17] straddle two nodes.
    c3 = make_cluster(num_nodes=3, gpus_per_node=8)
    s3 = group_span(ParallelDims(dp=8, pp=1, tp=3), "tp", c3)
    assert s3.crossing_groups == 2 and not s3.even and s3.ranks_per_node == 1


def test_crossing_ranks_match_brute_force():
    c = make_cluster(num_nodes=3, gpus_per_node=8)
    pl = place(ParallelDims(dp=8, pp=1, tp=3), c)
    want = [
        any(g // 8 != grp[0] // 8 for g in grp)
        for grp in (list(range(3 * (r // 3), 3 * (r // 3) + 3)) for r in range(24))
    ]
    assert pl.crossing_ranks("tp").tolist() == want


def test_errors_state_numbers_and_fix():
    c = make_cluster(num_nodes=8, gpus_per_node=8)
    with pytest.raises(ValueError, match=r"2 x 8 x 8 = 128 ≠ 64 GPUs.*use DP = 1"):
        place(ParallelDims(dp=2, pp=8, tp=8), c)
    with pytest.raises(ValueError, match="order='tp-dp'.*innermost first"):
        ParallelDims(order="tp-dp")
    with pytest.raises(ValueError, match="tp=0 must be a whole number"):
        ParallelDims(tp=0)
    assert len(ORDERS) == 6


def test_layout_check_batch_and_chunks():
    lay = Layout(dp=32, tp=2, micro_batch=3, schedule="1f1b")
    with pytest.raises(
        ValueError,
        match=r"512 is not divisible by DP × micro-batch = 32 × 3 = 96.*"
        r"micro-batch dividing 16",
    ):
        lay.check(64, 512)
    with pytest.raises(
        ValueError,
        match=r"1f1b allows num_chunks = 1 \(model chunks per rank\): num_chunks=2; "
        r"use num_chunks=1",
    ):
        Layout(dp=1, pp=2, micro_batch=1, schedule="1f1b", num_chunks=2)
    for v, fix in ((1, 2), (9, 8)):
        with pytest.raises(
            ValueError,
            match=f"interleaved_1f1b allows num_chunks from 2 to 8.*num_chunks={v}; "
            f"use num_chunks={fix}",
        ):
            Layout(dp=1, pp=2, schedule="interleaved_1f1b", num_chunks=v)
    Layout(dp=32, tp=2, micro_batch=4, schedule="1f1b").check(64, 512)  # 512 = 32 x 4 x 4
    assert "order pp-tp-dp" in Layout(dp=1, micro_batch=1, schedule="1f1b", order="pp-tp-dp").label


def test_layout_is_the_one_vocabulary():
    """Integral floats stored as ints; labels come from the ZeRO and schedule registries."""
    from core.parallel import ZERO_STAGES
    from core.pipeline import SCHEDULES

    lay = Layout(dp=8.0, tp=2, zero_stage=3.0, micro_batch=2.0, shard_degree=4.0)
    assert (lay.dp, lay.zero_stage, lay.micro_batch, lay.shard_degree) == (8, 3, 2, 4)
    assert all(type(x) is int for x in (lay.dp, lay.zero_stage, lay.micro_batch, lay.shard_degree))
    assert lay.world_size == 16
    assert ZERO_STAGES[3].label == "ZeRO-3" and [z.label for z in ZERO_STAGES.values()] == [
        "DDP",
        "ZeRO-1",
        "ZeRO-2",
        "ZeRO-3",
    ]
    assert lay.label == "DP 8 × TP 2 × PP 1, ZeRO-3 in groups of 4, mb 2, 1F1B"
    sp = Layout(dp=1, tp=2, pp=2, sequence_parallel=True, schedule="interleaved_1f1b", num_chunks=2)
    assert sp.label == "DP 1 × TP 2 × PP 2, DDP, SP, mb 1, Interleaved 1F1B v=2"
    assert SCHEDULES["interleaved_1f1b"].label in sp.label
    with pytest.raises(ValueError, match="zero_stage=4 is unknown: use one of 0, 1, 2, 3"):
        Layout(dp=1, zero_stage=4)
    with pytest.raises(ValueError, match="schedule='zb' is unknown"):
        Layout(dp=1, schedule="zb")
