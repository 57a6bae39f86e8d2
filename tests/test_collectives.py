"""Collectives core: real-data simulators, ring chunk indexing, bytes per rank, cost model."""

import math

import numpy as np
import pytest

from core.collectives import (
    ALGORITHMS,
    algbw_bytes_per_s,
    all_gather_time_s,
    all_reduce_cost,
    all_reduce_time_s,
    bus_bandwidth_factor,
    busbw_bytes_per_s,
    crossover_message_bytes,
    flat_ring_all_reduce_time_s,
    hierarchical_all_reduce,
    hierarchical_all_reduce_cost,
    hierarchical_all_reduce_time_s,
    reduce_scatter_time_s,
    ring_all_gather,
    ring_all_reduce,
    ring_reduce_scatter,
    shard,
    simulate_all_reduce,
    step_times_s,
)
from core.hardware import make_cluster

GIB = 2**30


def slow_ring_states(x: np.ndarray) -> list[np.ndarray]:
    """Second, deliberately naive ring: one transfer at a time, indexing copied from
    docs/notes/collectives.md §1.
    """
    n, e = x.shape
    bounds = np.cumsum([0] + [len(a) for a in np.array_split(np.arange(e), n)])
    buf = x.copy()
    states = [buf.copy()]
    for phase in ("rs", "ag"):
        for k in range(n - 1):
            sends = [(r, (r - k) % n if phase == "rs" else (r + 1 - k) % n) for r in range(n)]
            payloads = [buf[r, bounds[c] : bounds[c + 1]].copy() for r, c in sends]
            for (r, c), p in zip(sends, payloads):
                dst = buf[(r + 1) % n, bounds[c] : bounds[c + 1]]
                dst[:] = dst + p if phase == "rs" else p
            states.append(buf.copy())
    return states


@pytest.mark.parametrize(
    "n,e", [(1, 5), (2, 2), (3, 7), (4, 16), (5, 13), (7, 3), (8, 64), (16, 100)]
)
def test_ring_all_reduce_sums_exactly(n, e):
    x = np.random.default_rng(n * 100 + e).integers(-1000, 1000, size=(n, e))
    t = ring_all_reduce(x)
    assert t.outputs.shape == (n, e)
    assert (t.outputs == x.sum(axis=0)).all()
    assert t.num_steps == 2 * (n - 1)
    assert [s.phase for s in t.steps] == ["reduce_scatter"] * (n - 1) + ["all_gather"] * (n - 1)


def test_single_rank_is_a_no_op():
    x = np.array([[1.5, -2.0, 3.25]])
    t = ring_all_reduce(x)
    assert t.steps == () and (t.outputs == x).all()
    assert t.bytes_sent.tolist() == [0] and t.contributions.shape == (1, 1, 1)
    big = np.arange(20_000.0)[None, :]  # past the snapshot limit too
    assert (ring_all_reduce(big).outputs == big).all()


def test_every_step_matches_a_naive_second_implementation():
    rng = np.random.default_rng(7)
    for n, e in [(2, 3), (5, 5), (5, 12), (6, 4), (9, 31)]:
        x = rng.integers(-9, 10, size=(n, e))
        t = ring_all_reduce(x)
        assert np.array_equal(t.states, np.stack(slow_ring_states(x)))


def test_reference_chunk_indexing_p5():
    """docs/notes/collectives.md §1: RS step k, rank r sends (r-k) mod p; AG step k (r+1-k)."""
    p = 5
    t = ring_all_reduce(np.ones((p, 10)))
    for k in range(p - 1):
        rs, ag = t.steps[k].transfers, t.steps[p - 1 + k].transfers
        assert [(x.src, x.dst, x.chunk, x.reduce) for x in rs] == [
            (r, (r + 1) % p, (r - k) % p, True) for r in range(p)
        ]
        assert [(x.src, x.dst, x.chunk, x.reduce) for x in ag] == [
            (r, (r + 1) % p, (r + 1 - k) % p, False) for r in range(p)
        ]
    # After the reduce-scatter rank r holds the fully reduced chunk (r + 1) mod p (and only that).
    counts = t.contribution_counts[p - 1]
    for r in range(p):
        assert counts[r, (r + 1) % p] == p and sorted(counts[r]) == [1, 2, 3, 4, 5]


def test_bytes_per_rank_are_two_s_n_minus_one_over_n():
    # 8 ranks x 64 float32 = S = 256 B per rank; each sends 2 * 256 * 7/8 = 448 B, 14 messages of 32
    # B.
    t = ring_all_reduce(np.ones((8, 64), dtype=np.float32))
    assert t.message_bytes == 256
    assert t.bytes_sent.tolist() == [448] * 8 and t.bytes_received.tolist() == [448] * 8
    assert {int(b) for s in t.steps for b in s.num_bytes} == {32}
    assert t.bytes_reduced.tolist() == [224] * 8  # (N-1)/N * S added locally


def test_uneven_chunks_follow_array_split():
    t = ring_all_reduce(np.zeros((4, 10), dtype=np.int16))  # chunks of 3, 3, 2, 2 elements
    assert t.chunk_offsets.tolist() == [0, 3, 6, 8, 10]
    # RS: rank r sends every chunk but (r+1); AG: every chunk but (r+2). 2 bytes per element.
    sizes = [3, 3, 2, 2]
    assert t.bytes_sent.tolist() == [
        2 * (20 - sizes[(r + 1) % 4] - sizes[(r + 2) % 4]) for r in range(4)
    ]


def test_contributions_agree_with_the_data():
    """Rank s contributes 2**s, so every value IS the bitmask of the ranks it includes."""
    for n, e in [(3, 3), (6, 14), (11, 11)]:
        x = np.repeat((2 ** np.arange(n, dtype=np.int64))[:, None], e, axis=1)
        t = ring_all_reduce(x)
        off = t.chunk_offsets
        for c in range(n):
            if off[c + 1] > off[c]:
                vals = t.states[:, :, off[c] : off[c + 1]]
                assert (vals == t.contributions[:, :, c, None].astype(np.int64)).all()


@pytest.mark.parametrize("n,e", [(80, 200), (100, 300), (64, 512)])
def test_large_ring_skips_tracking_but_still_sums(n, e):
    """Beyond animation sizes the even case runs without the up-front copy: same answer, same
    bytes.
    """
    x = np.random.default_rng(0).integers(-100, 100, size=(n, e))
    t = ring_all_reduce(x)
    assert t.states is None and (t.contributions is None) == (n > 64)
    assert (t.outputs == x.sum(0)).all() and (t.outputs == slow_ring_states(x)[-1]).all()
    assert (x == np.random.default_rng(0).integers(-100, 100, size=(n, e))).all()  # input untouched


def test_reduce_scatter_and_all_gather_use_nccl_placement():
    x = np.arange(5 * 12).reshape(5, 12)
    rs = ring_reduce_scatter(x)
    assert rs.num_steps == 4 and rs.owned_chunk.tolist() == [0, 1, 2, 3, 4]
    total = x.sum(0)
    for r, (a, b) in enumerate([(0, 3), (3, 6), (6, 8), (8, 10), (10, 12)]):
        assert (shard(rs, r) == total[a:b]).all()
    ag = ring_all_gather(x)
    expected = np.concatenate([x[0, 0:3], x[1, 3:6], x[2, 6:8], x[3, 8:10], x[4, 10:12]])
    assert ag.num_steps == 4 and (ag.outputs == expected).all()
    y = np.ones((8, 64), dtype=np.float32)  # 256 B vector: (N-1)/N * S = 224 B per rank
    assert ring_reduce_scatter(y).bytes_sent.tolist() == [224] * 8
    assert ring_all_gather(y).bytes_received.tolist() == [224] * 8


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16])
def test_every_algorithm_sums(name, n):
    x = np.random.default_rng(n).integers(-50, 50, size=(n, 2 * n + 3))
    kw = {"gpus_per_node": 4 if n % 4 == 0 else 1} if name == "hierarchical" else {}
    t = simulate_all_reduce(name, x, **kw)
    assert (t.outputs == x.sum(0)).all()
    assert t.bytes_sent.sum() == t.bytes_received.sum()


@pytest.mark.parametrize(
    "p,steps", [(2, 2), (4, 4), (8, 6), (16, 8), (3, 4), (5, 6), (6, 6), (7, 6), (12, 8)]
)
def test_halving_doubling_steps_and_bytes(p, steps):
    # MPICH: 2 lg p steps; not a power of two: 2 floor(lg p) + 2 (fold + unfold).
    t = simulate_all_reduce("halving_doubling", np.ones((p, 64), dtype=np.float32))
    assert t.num_steps == steps
    if p & (p - 1) == 0:
        assert t.bytes_sent.tolist() == [2 * 256 * (p - 1) // p] * p


def test_tree_and_naive_root_traffic():
    x = np.ones((8, 16), dtype=np.float64)  # S = 128 B
    tree = simulate_all_reduce("tree", x)
    assert (
        tree.num_steps == 6 and tree.bytes_received[0] == 3 * 128 and tree.bytes_sent[0] == 3 * 128
    )
    naive = simulate_all_reduce("naive", x)
    assert naive.num_steps == 14
    assert naive.bytes_received[0] == 7 * 128 and naive.bytes_sent[0] == 7 * 128
    assert naive.bytes_sent[1:].tolist() == [128] * 7
    assert simulate_all_reduce("tree", np.ones((5, 4))).num_steps == 6  # 2 ceil(lg 5)


def test_hierarchical_steps_and_bytes():
    # 2 nodes x 4 GPUs, S = 64 float32 = 256 B: intra 2(3)/4 * 256 = 384 B, inter 2(1)/2 * 64 = 64
    # B.
    t = hierarchical_all_reduce(np.ones((8, 64), dtype=np.float32), gpus_per_node=4)
    assert t.num_steps == 2 * 3 + 2 * 1
    assert [s.tier for s in t.steps] == ["intra"] * 3 + ["inter"] * 2 + ["intra"] * 3
    assert t.bytes_sent.tolist() == [448] * 8
    with pytest.raises(ValueError, match="multiple of 4"):
        hierarchical_all_reduce(np.ones((6, 4)), gpus_per_node=4)


def test_worked_example_from_the_reference():
    t = all_reduce_time_s("ring", 8, GIB, 300e9)
    assert t == pytest.approx(2 * 7 / 8 * 1073741824 / 300e9)
    assert round(t * 1e3, 4) == 6.2635
    assert round(algbw_bytes_per_s(GIB, t) / 1e9, 2) == 171.43
    assert round(busbw_bytes_per_s("all_reduce", 8, GIB, t) / 1e9, 1) == 300.0
    # nccl-tests style: 8 GiB on 8 ranks in 40.0 ms.
    assert round(algbw_bytes_per_s(8589934592, 40e-3) / 1e9, 2) == 214.75
    assert round(busbw_bytes_per_s("all_reduce", 8, 8589934592, 40e-3) / 1e9, 2) == 375.81


def test_nccl_tests_bus_bandwidth_factors():
    assert bus_bandwidth_factor("all_reduce", 8) == 1.75
    assert bus_bandwidth_factor("reduce_scatter", 8) == 0.875
    assert bus_bandwidth_factor("all_gather", 4) == 0.75
    assert bus_bandwidth_factor("all_to_all", 2) == 0.5
    assert bus_bandwidth_factor("broadcast", 64) == 1.0


def test_ring_vs_recursive_doubling_crossover():
    """docs/notes/collectives.md §2: p = 64, alpha = 10 us, B = 50 GB/s gives n* = 14,883,721 B."""
    n_star = crossover_message_bytes("ring", "recursive_doubling", 64, 50e9, 10e-6)
    assert round(n_star) == 14_883_721
    t = {
        a: [all_reduce_time_s(a, 64, n, 50e9, 10e-6) for n in (n_star / 2, n_star, 2 * n_star)]
        for a in ("ring", "recursive_doubling")
    }
    assert t["ring"][0] > t["recursive_doubling"][0] and t["ring"][2] < t["recursive_doubling"][2]
    assert t["ring"][1] == pytest.approx(t["recursive_doubling"][1])


@pytest.mark.parametrize(
    "name", ["ring", "halving_doubling", "recursive_doubling", "tree", "naive"]
)
@pytest.mark.parametrize("p", [1, 2, 3, 5, 6, 8, 12, 16])
def test_cost_model_equals_the_simulated_schedule(name, p):
    """Sum over simulated steps of alpha + max message*beta + max reduction*gamma = the closed
    form.
    """
    x = np.ones((p, 480), dtype=np.float32)  # 480 = 2 lcm(1..16 used here): chunks split evenly
    t = simulate_all_reduce(name, x)
    kw = dict(gamma_s_per_byte=3e-12)
    simulated = step_times_s(t, 7e9, 2e-6, **kw).sum()
    assert simulated == pytest.approx(
        all_reduce_time_s(name, p, t.message_bytes, 7e9, 2e-6, **kw), rel=1e-12, abs=1e-18
    )
    cost = all_reduce_cost(name, p, t.message_bytes, 7e9, 2e-6)
    assert cost.latency_s == pytest.approx(t.num_steps * 2e-6)


def test_ring_bytes_term_equals_simulated_bytes_per_rank():
    for p in (2, 3, 8, 16):
        t = ring_all_reduce(np.ones((p, 48 * 16), dtype=np.float32))
        beta_bytes = all_reduce_cost("ring", p, t.message_bytes, 1.0).bandwidth_s  # B = 1 B/s
        assert t.bytes_sent.tolist() == [round(beta_bytes)] * p


def test_reduce_scatter_all_gather_model_matches_simulation():
    t = ring_reduce_scatter(np.ones((6, 60), dtype=np.float32))
    assert step_times_s(t, 1e9, 1e-6).sum() == pytest.approx(
        reduce_scatter_time_s(6, t.message_bytes, 1e9, 1e-6)
    )
    t = ring_all_gather(np.ones((6, 60), dtype=np.float32))
    assert step_times_s(t, 1e9, 1e-6).sum() == pytest.approx(
        all_gather_time_s(6, t.message_bytes, 1e9, 1e-6)
    )
    assert all_gather_time_s(8, 8e9, 1e9) == pytest.approx(7.0)  # (p-1)/p * n / B
    assert reduce_scatter_time_s(
        8, 8e9, 1e9, algorithm="recursive", latency_s=1.0
    ) == pytest.approx(10.0)


def test_hierarchical_cost_by_hand_and_against_simulation():
    # 2 DGX H100 nodes: NVLink 4 450 GB/s, 8 x NDR 50 GB/s (one NIC per GPU), S = 1 GB, alpha = 0.
    c = make_cluster(num_nodes=2, gpus_per_node=8)
    cost = hierarchical_all_reduce_cost(c, 1e9, intra_latency_s=0.0, inter_latency_s=0.0)
    assert cost.intra_reduce_scatter_s == pytest.approx(7 / 8 * 1e9 / 450e9)
    assert cost.inter_all_reduce_s == pytest.approx(1e9 / 8 / 50e9)  # 2(m-1)/m = 1
    assert cost.time_s == pytest.approx(2 * 7 / 8 / 450 + 1 / 400)  # 6.3889 ms
    assert hierarchical_all_reduce_time_s(
        c, 1e9, intra_latency_s=0.0, inter_latency_s=0.0, pipelined=True
    ) == pytest.approx(2 * 7 / 8 / 450)
    # The simulated two-level schedule, timed step by step on the two tiers, gives the same number.
    c4 = make_cluster(num_nodes=4, gpus_per_node=4, nics_per_node=2)
    t = hierarchical_all_reduce(np.ones((16, 16 * 40), dtype=np.float32), gpus_per_node=4)
    sim = step_times_s(
        t,
        c4.intra_link.bandwidth_bytes_per_s,
        3e-6,
        gamma_s_per_byte=1e-12,
        inter_bandwidth_bytes_per_s=c4.inter_bandwidth_per_gpu_bytes_per_s,
        inter_latency_s=9e-6,
    ).sum()
    assert sim == pytest.approx(
        hierarchical_all_reduce_time_s(
            c4, t.message_bytes, intra_latency_s=3e-6, inter_latency_s=9e-6, gamma_s_per_byte=1e-12
        )
    )


def test_flat_ring_on_a_cluster():
    one = make_cluster(num_nodes=1, gpus_per_node=8)
    assert flat_ring_all_reduce_time_s(one, 1e9, intra_latency_s=0.0) == pytest.approx(
        2 * 7 / 8 / 450
    )
    two = make_cluster(num_nodes=2, gpus_per_node=8)  # min(450, 8 x 50) = 400 GB/s
    assert flat_ring_all_reduce_time_s(
        two, 1e9, intra_latency_s=0.0, inter_latency_s=0.0
    ) == pytest.approx(2 * 15 / 16 / 400)
    few_nics = make_cluster(num_nodes=2, gpus_per_node=8, nics_per_node=2)  # 100 GB/s
    # NCCL's ring tuner: 2(m-1) = 2 of the 30 steps pay the network latency, 28 the NVLink one.
    assert flat_ring_all_reduce_time_s(
        few_nics, 1e9, intra_latency_s=3.4e-6, inter_latency_s=14e-6
    ) == pytest.approx(28 * 3.4e-6 + 2 * 14e-6 + 2 * 15 / 16 / 100)
    # 8 nodes x 8 GPUs: 14 network steps of 126 (NCCL: nInterSteps = 2(nNodes-1)).
    eight = make_cluster(num_nodes=8, gpus_per_node=8)
    assert flat_ring_all_reduce_time_s(
        eight, 8e6, intra_latency_s=1e-6, inter_latency_s=10e-6
    ) == pytest.approx(112e-6 + 140e-6 + 2 * 63 / 64 * 8e6 / 400e9)


def test_single_rank_costs_nothing():
    assert all_reduce_time_s("ring", 1, 1e9, 1e9, 1e-6) == 0.0


@pytest.mark.parametrize(
    "args,match",
    [
        (("ring", 0, 1e9, 1e9), r"num_ranks=0 must be a whole number ≥ 1; .*use e.g. 8"),
        (("ring", 2.5, 1e9, 1e9), r"num_ranks=2.5 must be a whole number ≥ 1; .*use e.g. 8"),
        (("ring", True, 1e9, 1e9), r"num_ranks=True"),
        (("ring", 8, 0, 1e9), r"message_bytes=0 must be a finite number > 0; use e.g."),
        (("ring", 8, -5.0, 1e9), r"message_bytes=-5.0"),
        (("ring", 8, float("nan"), 1e9), r"message_bytes=nan"),
        (("ring", 8, 1e9, 0.0), r"bandwidth_bytes_per_s=0.0 must be .* > 0"),
        (("ring", 8, 1e9, "fast"), r"bandwidth_bytes_per_s='fast'"),
        (("ring", 8, 1e9, 1e9, -1e-6), r"latency_s=-1e-06 must be a finite number ≥ 0"),
        (("butterfly", 8, 1e9, 1e9), r"algorithm='butterfly' is unknown: use one of ring"),
    ],
)
def test_cost_model_rejects_bad_input_with_the_rule_and_fix(args, match):
    with pytest.raises(ValueError, match=match):
        all_reduce_time_s(*args)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="collective='allreduce' is unknown: use one of"):
        bus_bandwidth_factor("allreduce", 8)
    with pytest.raises(ValueError, match="time_s=0"):
        algbw_bytes_per_s(1e9, 0)
    with pytest.raises(ValueError, match=r"shape \(5,\): it must be 2-D"):
        ring_all_reduce(np.ones(5))
    with pytest.raises(ValueError, match=r"shape \(3, 0\)"):
        ring_all_reduce(np.ones((3, 0)))
    with pytest.raises(ValueError, match="dtype bool"):
        ring_all_reduce(np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="algorithm='ring2' is unknown: use one of ring"):
        simulate_all_reduce("ring2", np.ones((2, 2)))
    with pytest.raises(ValueError, match="gpus_per_node"):
        simulate_all_reduce("hierarchical", np.ones((2, 2)))


def test_trace_is_frozen_and_exports_rows():
    t = ring_all_reduce(np.ones((4, 8), dtype=np.float32))
    with pytest.raises(ValueError):
        t.outputs[0, 0] = 5  # read-only
    with pytest.raises(AttributeError):
        t.num_ranks = 3
    df = t.to_frame()
    assert len(df) == 6 * 4 and df["num_bytes"].sum() == t.bytes_sent.sum()
    assert df["step"].tolist()[:5] == [1, 1, 1, 1, 2] and set(df["phase"]) == {
        "reduce_scatter",
        "all_gather",
    }
    assert t.contributors(3, 0, 1) == (0, 1, 2, 3)  # after the RS, rank 0 owns chunk 1
    assert t.sent_per_step().sum(axis=0).tolist() == t.bytes_sent.tolist()
    assert math.isclose(step_times_s(t, 1e9, bytes_scale=2.0).sum(), 2 * 6 * 8 / 1e9)
