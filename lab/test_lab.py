"""Checks the lab against SplitLab's core: `pytest test_lab.py -v` (your lab.py) or
`LAB_MODULE=solution pytest test_lab.py -v` (the solution). Runs from inside lab/ or from the
repository root. Expected values come from SplitLab's simulators (core/) and, where a paper
prints them, from the paper.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
for path in (HERE.parent, HERE):  # SplitLab's core (the reference) and the lab modules
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from core.collectives import ring_all_reduce as core_ring  # noqa: E402
from core.data_parallel import (  # noqa: E402
    equal_shards,
    loss_and_grad,
    make_problem,
    prove_data_parallel,
    shard_bounds,
    skewed_shards,
)
from core.memory import model_state_bytes_per_gpu  # noqa: E402
from core.pipeline import simulate  # noqa: E402
from core.tensor_parallel import mlp_forward  # noqa: E402

MODULE = os.environ.get("LAB_MODULE", "lab")
lab = importlib.import_module(MODULE)


# ---------- 1. ring all-reduce ----------
@pytest.mark.parametrize("n, length", [(2, 6), (4, 8), (4, 10), (8, 64), (5, 3)])
def test_ring_all_reduce_sums_like_splitlab(n, length):
    x = np.random.default_rng(n * 100 + length).standard_normal((n, length))
    before = x.copy()
    out, steps, sent = lab.ring_all_reduce(x)
    ref = core_ring(x)
    np.testing.assert_array_equal(x, before, err_msg="ring_all_reduce must not modify its input")
    np.testing.assert_allclose(out, np.broadcast_to(x.sum(axis=0), x.shape), atol=1e-12)
    np.testing.assert_allclose(out, ref.outputs, atol=1e-12)
    assert steps == len(ref.steps) == 2 * (n - 1), "2(N-1) steps: N-1 reduce-scatter + N-1 gather"
    # Each step, the N ranks send N different chunks, i.e. the whole tensor once between them.
    assert int(np.sum(sent)) == int(ref.bytes_sent.sum()) == 2 * (n - 1) * length * x.itemsize


@pytest.mark.parametrize("n", [2, 4, 8])
def test_ring_bytes_per_rank_are_2_n_minus_1_over_n(n):
    length = 8 * n  # divisible: every chunk the same size, every rank the same bytes
    x = np.ones((n, length), dtype=np.float32)
    out, _, sent = lab.ring_all_reduce(x)
    np.testing.assert_array_equal(out, np.full((n, length), n, dtype=np.float32))
    expected = 2 * (n - 1) * length * 4 // n  # by hand: 2(N-1) chunks of L/N float32s
    assert list(np.asarray(sent)) == [expected] * n == list(core_ring(x).bytes_sent)


# ---------- 2. data parallel ----------
def _local_grads(problem, sizes):
    return np.stack(
        [
            loss_and_grad(
                problem.params,
                problem.x[a:b],
                problem.y[a:b],
                num_features=problem.num_features,
                hidden=problem.hidden,
            )[1]
            for a, b in shard_bounds(len(problem.y), sizes)
        ]
    )


@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_equal_shards_average_to_the_full_batch_gradient(ranks):
    problem = make_problem(num_samples=96, seed=ranks)
    sizes = equal_shards(96, ranks)
    full = loss_and_grad(
        problem.params,
        problem.x,
        problem.y,
        num_features=problem.num_features,
        hidden=problem.hidden,
    )[1]
    got = lab.average_gradients(_local_grads(problem, sizes))
    np.testing.assert_allclose(got, full, atol=1e-12)
    np.testing.assert_allclose(got, prove_data_parallel(problem, sizes).ring_grad, atol=1e-12)


def test_unequal_shards_need_weights():
    problem = make_problem(num_samples=96, seed=1)
    sizes = skewed_shards(96, 4)
    proof = prove_data_parallel(problem, sizes)
    local = _local_grads(problem, sizes)
    weighted = lab.average_gradients(local, sizes)
    plain = lab.average_gradients(local)
    np.testing.assert_allclose(weighted, proof.full_grad, atol=1e-12)
    np.testing.assert_allclose(plain, proof.ring_grad, atol=1e-12)
    assert np.max(np.abs(plain - proof.full_grad)) > 1e-6, "a plain mean of unequal shards is off"


# ---------- 3. tensor parallel ----------
@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_column_then_row_parallel_equals_the_whole_layer(tp):
    rng = np.random.default_rng(tp)
    x, w = rng.standard_normal((6, 16)), rng.standard_normal((16, 32))
    parts = lab.column_parallel_linear(x, w, tp)
    assert len(parts) == tp and all(p.shape == (6, 32 // tp) for p in parts)
    np.testing.assert_allclose(np.concatenate(parts, axis=1), x @ w, atol=1e-12)
    w2 = rng.standard_normal((32, 16))
    np.testing.assert_allclose(lab.row_parallel_linear(parts, w2), x @ w @ w2, atol=1e-10)


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_tp_mlp_matches_splitlab_unsharded_mlp(tp):
    rng = np.random.default_rng(10 + tp)
    x = rng.standard_normal((6, 8))
    w1, b1 = rng.standard_normal((8, 32)) / math.sqrt(8), 0.1 * rng.standard_normal(32)
    w2 = rng.standard_normal((32, 8)) / math.sqrt(32)
    reference, _ = mlp_forward(x, w1, b1, w2)
    np.testing.assert_allclose(lab.tp_mlp_forward(x, w1, b1, w2, tp), reference, atol=1e-12)


# ---------- 4. pipeline ----------
@pytest.mark.parametrize("p, m", [(2, 1), (4, 4), (4, 8), (8, 4), (4, 32)])
@pytest.mark.parametrize("forward_s, backward_s", [(1.0, 2.0), (1.0, 1.0)])
def test_gpipe_bubble_matches_the_simulator_and_closed_form(p, m, forward_s, backward_s):
    makespan, bubble = lab.simulate_gpipe(p, m, forward_s, backward_s)
    ref = simulate(
        "gpipe",
        p,
        m,
        forward_s=forward_s,
        backward_input_s=backward_s / 2,
        backward_weight_s=backward_s / 2,
    )
    assert makespan == pytest.approx(ref.makespan_s)
    assert bubble == pytest.approx(ref.bubble_fraction)
    # GPipe paper (Huang et al. 2019, §2.3): the bubble is (P-1)/(M+P-1) of the time.
    assert bubble == pytest.approx((p - 1) / (m + p - 1))
    assert makespan == pytest.approx((m + p - 1) * (forward_s + backward_s))


# ---------- 5. ZeRO ----------
@pytest.mark.parametrize("stage", [0, 1, 2, 3])
@pytest.mark.parametrize("num_params, dp", [(7_500_000_000, 64), (1_000_003, 8), (10, 3)])
def test_zero_bytes_match_splitlab(stage, num_params, dp):
    ref = model_state_bytes_per_gpu(num_params, dp, stage).total_bytes
    assert lab.zero_bytes_per_gpu(num_params, dp, stage) == ref


def test_zero_paper_figure_1():
    # Rajbhandari et al. 2020, Figure 1: 7.5B parameters, 64 GPUs: 120, 31.4, 16.6, 1.9 GB.
    got = [lab.zero_bytes_per_gpu(7_500_000_000, 64, s) / 1e9 for s in range(4)]
    assert got == pytest.approx([120, 31.4, 16.6, 1.9], abs=0.05)
