"""Data parallelism: the numeric proof, the scaling model and stragglers, with real arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.data_parallel import (
    DEFAULT_BUCKET_BYTES,
    AllReduceKind,
    DpJob,
    Scaling,
    bucket_sizes,
    cluster_for,
    dp_step,
    equal_shards,
    expected_max_std_normal,
    loss_and_grad,
    make_problem,
    overlap_schedule,
    prob_step_slow,
    prove_data_parallel,
    scaling_curve,
    scenario_cluster,
    sgd_curves,
    shard_bounds,
    slower_at_scale,
    straggler_curve,
)
from core.hardware import make_cluster


def _loss(problem, params, x=None, y=None):
    x = problem.x if x is None else x
    y = problem.y if y is None else y
    return loss_and_grad(params, x, y, num_features=problem.num_features, hidden=problem.hidden)


def _fd_grad(problem, params, x=None, y=None, eps=1e-6):
    """Central finite differences of the loss: a second method, independent of the hand gradient."""
    g = np.zeros_like(params)
    for i in range(len(params)):
        e = np.zeros_like(params)
        e[i] = eps
        g[i] = (_loss(problem, params + e, x, y)[0] - _loss(problem, params - e, x, y)[0]) / (
            2 * eps
        )
    return g


# ---------- the model and its hand-written gradient ----------


def test_loss_by_hand_on_a_one_unit_network():
    # x = [1, 2], y = [0, 1], W1 = 0.5, b1 = 0, w2 = 2, b2 = 0.1:
    # ŷ = 2 tanh(0.5 x) + 0.1 -> errors e_i; loss = (e_1² + e_2²) / 4
    params = np.array([0.5, 0.0, 2.0, 0.1])
    x, y = np.array([[1.0], [2.0]]), np.array([0.0, 1.0])
    e1 = 2 * math.tanh(0.5) + 0.1 - 0.0
    e2 = 2 * math.tanh(1.0) + 0.1 - 1.0
    loss, grad = loss_and_grad(params, x, y, num_features=1, hidden=1)
    assert loss == pytest.approx((e1**2 + e2**2) / 4, rel=1e-14)
    # d loss / d b2 = mean error; d loss / d w2 = mean(error × tanh(0.5 x))
    assert grad[3] == pytest.approx((e1 + e2) / 2, rel=1e-14)
    assert grad[2] == pytest.approx((e1 * math.tanh(0.5) + e2 * math.tanh(1.0)) / 2, rel=1e-14)


def test_hand_gradient_matches_finite_differences():
    problem = make_problem(num_samples=12, num_features=3, hidden=5, seed=3)
    _, grad = _loss(problem, problem.params)
    assert np.max(np.abs(grad - _fd_grad(problem, problem.params))) < 1e-8


def test_problem_is_seeded_and_deterministic():
    a, b, c = make_problem(seed=7), make_problem(seed=7), make_problem(seed=8)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.params, b.params)
    assert not np.array_equal(a.x, c.x)
    assert a.params.size == 4 * 16 + 16 + 16 + 1  # W1, b1, w2, b2 for 4 features, 16 hidden


# ---------- the proof ----------


@pytest.mark.parametrize("num_ranks", [1, 2, 4, 8, 16])
def test_ring_average_of_equal_shards_is_the_full_batch_gradient(num_ranks):
    problem = make_problem(num_samples=96, seed=1)
    proof = prove_data_parallel(problem, equal_shards(96, num_ranks))
    # compare with the finite-difference gradient of the whole batch, not with the code's own
    # full_grad
    assert np.max(np.abs(proof.ring_grad - _fd_grad(problem, problem.params))) < 1e-8
    assert proof.ring_max_abs_diff < 1e-14
    assert proof.ring_copies_max_abs_diff < 1e-14  # every rank ends with the same sum
    assert proof.ring_steps == 2 * (num_ranks - 1)  # reduce-scatter + all-gather
    assert proof.local_grads.shape == (num_ranks, problem.params.size)


def test_unequal_shards_plain_average_is_wrong_and_weighting_fixes_it():
    problem = make_problem(num_samples=4, num_features=2, hidden=3, seed=2)
    proof = prove_data_parallel(problem, (1, 3))
    # per-sample gradients, combined by hand
    g = [
        _loss(problem, problem.params, problem.x[i : i + 1], problem.y[i : i + 1])[1]
        for i in range(4)
    ]
    plain = (g[0] + (g[1] + g[2] + g[3]) / 3) / 2  # rank 0's mean and rank 1's mean, averaged
    full = (g[0] + g[1] + g[2] + g[3]) / 4
    assert np.allclose(proof.ring_grad, plain, atol=1e-14)
    assert np.allclose(proof.weighted_grad, full, atol=1e-14)
    assert proof.ring_max_abs_diff == pytest.approx(np.max(np.abs(plain - full)), rel=1e-9)
    assert proof.ring_max_abs_diff > 1e-3 and proof.weighted_max_abs_diff < 1e-14
    assert not proof.equal_shards


def test_sgd_curves_equal_shards_coincide_and_unequal_diverge():
    problem = make_problem(num_samples=96, seed=0)
    eq = sgd_curves(problem, equal_shards(96, 8), num_steps=20, learning_rate=0.2)
    assert eq.max_abs_loss_diff_ring < 1e-12 and eq.max_abs_loss_diff_weighted < 1e-12
    assert eq.full_batch_loss[-1] < 0.5 * eq.full_batch_loss[0]  # it actually learns
    # first SGD step by hand with the finite-difference gradient
    p1 = problem.params - 0.2 * _fd_grad(problem, problem.params)
    assert eq.full_batch_loss[1] == pytest.approx(_loss(problem, p1)[0], rel=1e-7)
    uneq = sgd_curves(problem, (4, 12, 40, 40), num_steps=20, learning_rate=0.2)
    assert uneq.max_abs_loss_diff_ring > 1e-3
    assert uneq.max_abs_loss_diff_weighted < 1e-12
    assert len(uneq.steps) == 21 and uneq.ring_average_loss[0] == uneq.full_batch_loss[0]


@pytest.mark.parametrize(
    "sizes, msg", [((10, 10), "sum to 20 but the batch has 96"), ((96, 0), "≥ 1 sample")]
)
def test_bad_shards_raise_with_numbers(sizes, msg):
    with pytest.raises(ValueError, match=msg):
        prove_data_parallel(make_problem(num_samples=96), sizes)


def test_equal_shards_and_bounds():
    assert equal_shards(96, 8) == (12,) * 8
    assert shard_bounds(10, (3, 7)) == [(0, 3), (3, 10)]
    with pytest.raises(
        ValueError,
        match=r"num_ranks=7 does not divide 96 samples: .*use num_ranks in \{1, 2, 3, 4, 6, 8,",
    ):
        equal_shards(96, 7)


# ---------- stragglers ----------


@pytest.mark.parametrize(
    "p, expected", [(2, 0.56419), (8, 1.42360), (64, 2.34373), (512, 3.04390), (4096, 3.62608)]
)
def test_expected_max_matches_reference_values(p, expected):
    # docs/notes/collectives.md §5 values (numerical integration, 5 decimals)
    assert expected_max_std_normal(p) == pytest.approx(expected, abs=1e-5)


def test_expected_max_exact_small_cases():
    # E[max of 2] = 1/√π, E[max of 3] = 3/(2√π) (order statistics of normals, exact), E[max of 1] =
    # 0
    assert expected_max_std_normal(1) == pytest.approx(0.0, abs=1e-12)
    assert expected_max_std_normal(2) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-10)
    assert expected_max_std_normal(3) == pytest.approx(1.5 / math.sqrt(math.pi), abs=1e-10)


def test_prob_step_slow_reference_values():
    for p, expected in [(8, 0.077), (64, 0.474), (100, 0.634), (512, 0.994)]:
        assert prob_step_slow(p, 0.01) == pytest.approx(expected, abs=5e-4)
    with pytest.raises(ValueError, match="slow_prob=1.5"):
        prob_step_slow(8, 1.5)


def test_straggler_curve_closed_form_and_monte_carlo_agree():
    c = straggler_curve(
        rank_counts=(1, 8, 64), mean_step_s=0.100, jitter_s=0.005, num_trials=2000, seed=4
    )
    # docs/notes/collectives.md §5: N(100 ms, 5 ms) -> 107.12 ms at p = 8, 111.72 ms at p = 64
    assert c.expected_step_s[1] == pytest.approx(0.10712, abs=1e-5)
    assert c.expected_step_s[2] == pytest.approx(0.11172, abs=1e-5)
    for mc, cf, se in zip(c.mc_step_s, c.expected_step_s, c.mc_stderr_s):
        assert abs(mc - cf) < 5 * se
    again = straggler_curve(rank_counts=(1, 8, 64), num_trials=2000, seed=4)
    assert again.mc_step_s == c.mc_step_s  # seeded


def test_straggler_rejects_bad_input():
    with pytest.raises(ValueError, match="num_ranks=0"):
        expected_max_std_normal(0)
    with pytest.raises(ValueError, match="jitter_s=-1"):
        straggler_curve(jitter_s=-1)


# ---------- scaling model (hand arithmetic, α-β formulas: docs/notes/collectives.md §2-3) ---


MIB = 2**20
A100_PEAK, NVLINK3, NVLINK_A, GBE100, NET_A = 312e12, 300e9, 3.4e-6, 12.5e9, 14e-6
GRAD = 1.3e9 * 2  # 1.3B bf16 gradients (the app's traffic dtype) = 2.6 GB per rank
COMPUTE = 6 * 1.3e9 * 2048 / (A100_PEAK * 0.4)  # 6N FLOPs per token = 0.128 s


def _job(**kw):
    base = dict(
        num_params=1.3e9,
        tokens_per_gpu=2048,
        grad_bytes_per_param=2.0,
        mfu=0.4,
        bucket_bytes=None,
        all_reduce=AllReduceKind.FLAT_RING,  # the textbook α-β ring at line rate, by hand below
    )
    return DpJob(**{**base, **kw})


def test_compute_time_from_6n_rule():
    s = dp_step(_job(), cluster_for(scenario_cluster(), 8))
    assert COMPUTE == pytest.approx(0.128, rel=1e-12)
    assert s.compute_s == pytest.approx(COMPUTE, rel=1e-12)
    assert s.forward_s == pytest.approx(COMPUTE / 3, rel=1e-12)  # backward = 2 x forward


def test_one_node_ring_on_nvlink_by_hand():
    s = dp_step(_job(), cluster_for(scenario_cluster(), 8))
    ring = 2 * 7 * NVLINK_A + 2 * 7 / 8 * GRAD / NVLINK3  # 2(p−1)α + 2(p−1)/p·n/B
    assert s.comm_s == pytest.approx(ring, rel=1e-12) and ring == pytest.approx(
        0.0152142667, rel=1e-8
    )
    assert s.exposed_comm_s == pytest.approx(ring, rel=1e-12)  # no overlap: all of it waits
    assert s.step_s == pytest.approx(COMPUTE + ring, rel=1e-12)
    assert s.bytes_sent_per_rank == pytest.approx(2 * 7 / 8 * GRAD)
    assert s.bottleneck_link.startswith("NVLink 3") and s.bottleneck_bytes_per_s == NVLINK3
    assert s.efficiency == pytest.approx(COMPUTE / (COMPUTE + ring))
    assert s.tokens_per_s == pytest.approx(8 * 2048 / (COMPUTE + ring))


def test_64_gpus_flat_ring_is_paced_by_the_single_nic():
    s = dp_step(_job(), cluster_for(scenario_cluster(), 64))
    # min(NVLink 300, 1 NIC x 12.5 GB/s) = 12.5 GB/s; NCCL's ring tuner: 14 of the 126 steps pay the
    # 14 µs network latency, 112 the NVLink one (3.4 µs)
    ring = 112 * NVLINK_A + 14 * NET_A + 2 * 63 / 64 * GRAD / GBE100
    assert s.comm_s == pytest.approx(ring, rel=1e-12) and ring == pytest.approx(0.4100768, rel=1e-6)
    assert s.num_nodes == 8 and s.bottleneck_bytes_per_s == GBE100
    assert "100 GbE" in s.bottleneck_link


def test_hierarchical_by_hand():
    s = dp_step(_job(all_reduce=AllReduceKind.HIERARCHICAL), cluster_for(scenario_cluster(), 64))
    rs = 7 * NVLINK_A + 7 / 8 * GRAD / NVLINK3  # intra reduce-scatter
    ar = 2 * 7 * NET_A + 2 * 7 / 8 * (GRAD / 8) / (GBE100 / 8)  # 8 GPUs share one NIC
    assert s.comm_s == pytest.approx(2 * rs + ar, rel=1e-12)
    assert s.bottleneck_bytes_per_s == pytest.approx(GBE100 / 8)


def test_bucket_sizes_follow_pytorch_defaults():
    assert DEFAULT_BUCKET_BYTES == 26_214_400
    assert list(bucket_sizes(100 * MIB, 25 * MIB)) == [MIB, 25 * MIB, 25 * MIB, 25 * MIB, 24 * MIB]
    assert list(bucket_sizes(76 * MIB, 25 * MIB)) == [MIB, 25 * MIB, 25 * MIB, 25 * MIB]
    assert list(bucket_sizes(10 * MIB, None)) == [10 * MIB]
    assert list(bucket_sizes(10 * MIB, 25 * MIB)) == [10 * MIB]


def test_overlap_schedule_by_hand_and_against_a_loop():
    start, finish = overlap_schedule(np.array([1.0, 2, 3, 10]), np.array([2.0, 0.5, 3, 1]))
    # f1 = 1+2 = 3; f2 = max(2,3)+0.5 = 3.5; f3 = max(3,3.5)+3 = 6.5; f4 = max(10,6.5)+1 = 11
    assert list(finish) == [3.0, 3.5, 6.5, 11.0] and list(start) == [1.0, 3.0, 3.5, 10.0]
    rng = np.random.default_rng(0)
    r, c = np.sort(rng.uniform(0, 5, 50)), rng.uniform(0, 0.3, 50)
    prev, loop = -np.inf, []
    for ri, ci in zip(r, c):
        prev = max(ri, prev) + ci
        loop.append(prev)
    assert np.allclose(overlap_schedule(r, c)[1], loop, rtol=0, atol=1e-12)


def test_bucketing_exposes_only_the_tail_when_the_link_is_fast():
    s = dp_step(_job(bucket_bytes=DEFAULT_BUCKET_BYTES), cluster_for(scenario_cluster(), 8))
    tail = GRAD - MIB - 99 * 25 * MIB  # 2.6e9 B = 1 MiB + 99 x 25 MiB + tail
    assert len(s.bucket_bytes) == 101 and s.bucket_bytes[-1] == pytest.approx(tail)
    c_full = 2 * 7 * NVLINK_A + 2 * 7 / 8 * 25 * MIB / NVLINK3  # 0.20 ms per 25 MiB bucket
    c_last = 2 * 7 * NVLINK_A + 2 * 7 / 8 * tail / NVLINK3
    backward = 2 * COMPUTE / 3
    # a 25 MiB bucket fills in 0.43 ms of backward but reduces in 0.20 ms: the stream is idle when
    # the second-to-last bucket is ready, so it starts then; the tail is ready at the end of
    # backward
    # (0.14 ms later) and waits for it.
    ready_prev = COMPUTE - backward * tail / GRAD
    assert backward * 25 * MIB / GRAD > c_full
    exposed = max(ready_prev + c_full, COMPUTE) + c_last - COMPUTE
    assert s.bucket_ready_s[-1] == pytest.approx(COMPUTE)
    assert s.exposed_comm_s == pytest.approx(exposed, rel=1e-9)
    assert s.exposed_comm_s < 0.01 * s.comm_s  # 99% of the all-reduce is hidden
    assert s.hidden_comm_s == pytest.approx(s.comm_s - exposed)


def test_strong_scaling_splits_the_global_batch():
    c = scaling_curve(_job(), scenario_cluster(), (8, 16, 64), scaling=Scaling.STRONG)
    assert [s.tokens_per_gpu for s in c.steps] == [2048, 1024, 256]
    weak = scaling_curve(_job(), scenario_cluster(), (8, 16, 64))
    assert [s.tokens_per_gpu for s in weak.steps] == [2048] * 3
    assert list(weak.num_gpus) == [8, 16, 64]
    with pytest.raises(ValueError, match="global batch of 100 tokens cannot be split over 512"):
        scaling_curve(
            _job(), scenario_cluster(), (8, 512), scaling="strong", global_batch_tokens=100
        )


def test_one_gpu_has_no_all_reduce_and_partial_nodes():
    s = dp_step(_job(), cluster_for(scenario_cluster(), 1))
    assert s.comm_s == 0.0 and s.efficiency == 1.0
    assert cluster_for(make_cluster(num_nodes=1), 4).gpus_per_node == 4
    with pytest.raises(ValueError, match="12 GPUs is not a whole number of 8-GPU nodes"):
        cluster_for(make_cluster(num_nodes=1), 12)
    with pytest.raises(ValueError, match="mfu=1.5"):
        _job(mfu=1.5)


def test_scenario_slower_at_64_numbers():
    s = slower_at_scale()
    # NCCL's tuner (NVIDIA/nccl src/graph/tuning.cc): one node, ring/Simple = 8.4 µs + 14 NVLink
    # hops of 3.4 µs at busbw
    # 300 × 0.77 GB/s; 8 nodes, + 14 NET hops of 14 µs, ×1.4, busbw one 100 GbE NIC × 0.94
    ring8 = (8.4 + 14 * 3.4) * 1e-6 + 2 * 7 / 8 * GRAD / (NVLINK3 * 0.77)
    ring64 = (8.4 + 112 * 3.4 + 14 * 14) * 1.4e-6 + 2 * 63 / 64 * GRAD / (GBE100 * 0.94)
    assert s.small.step_s == pytest.approx(COMPUTE + ring8, rel=1e-9)  # 167 ms
    assert s.large.step_s == pytest.approx(COMPUTE + ring64, rel=1e-9)  # 1.0 s
    assert s.step_ratio == pytest.approx((COMPUTE + ring64) / (COMPUTE + ring8))
    assert s.bandwidth_drop == pytest.approx(300 * 0.77 / (12.5 * 0.94))
    # bytes per rank measured by the ring simulator: 2(p−1)/p x 2.6 GB
    assert s.sim_bytes_sent_per_rank_small == pytest.approx(4.55e9, rel=1e-12)
    assert s.sim_bytes_sent_per_rank_large == pytest.approx(5.11875e9, rel=1e-12)
    # same global batch (16,384 tokens) on 64 GPUs: 256 tokens each, and slower than 8 GPUs
    assert s.large_strong.tokens_per_gpu == 256
    assert s.large_strong.tokens_per_s < s.small.tokens_per_s
    fixes = {f.label.split(" (")[0].split(" ×")[0]: f.step for f in s.fixes}
    bigger = fixes["per-GPU batch"]
    assert bigger.step_s == pytest.approx(8 * COMPUTE + ring64, rel=1e-9)
    assert bigger.efficiency > 3 * s.large.efficiency
    # thin network: overlap hides one 85 ms backward of a 0.44 s all-reduce; barely helps
    assert fixes["bucketing"].step_s > 0.95 * s.large.step_s
    assert fixes["both"].efficiency > max(f.step.efficiency for f in s.fixes[:2])
