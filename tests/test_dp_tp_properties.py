"""Property tests: DP weighted averaging and TP sharding are exact for any valid split."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.data_parallel import (
    equal_shards,
    expected_max_std_normal,
    loss_and_grad,
    make_problem,
    prove_data_parallel,
)
from core.tensor_parallel import prove_sequence_parallel_mlp, prove_tp_attention, prove_tp_mlp

FAST = settings(max_examples=25, deadline=None)


@FAST
@given(sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12), seed=st.integers(0, 1000))
def test_weighted_average_equals_full_batch_for_any_shards(sizes, seed):
    problem = make_problem(num_samples=sum(sizes), num_features=3, hidden=4, seed=seed)
    proof = prove_data_parallel(problem, tuple(sizes))
    full = loss_and_grad(problem.params, problem.x, problem.y, num_features=3, hidden=4)[1]
    scale = 1.0 + np.max(np.abs(full))
    assert np.max(np.abs(proof.weighted_grad - full)) < 1e-12 * scale
    # the plain average equals the mean of the per-rank means, whatever the sizes
    assert np.allclose(proof.ring_grad, proof.local_grads.mean(axis=0), atol=1e-13 * scale)


@FAST
@given(num_ranks=st.integers(1, 12), per_rank=st.integers(1, 6), seed=st.integers(0, 1000))
def test_equal_shards_plain_average_is_exact_for_any_rank_count(num_ranks, per_rank, seed):
    n = num_ranks * per_rank
    problem = make_problem(num_samples=n, num_features=2, hidden=3, seed=seed)
    proof = prove_data_parallel(problem, equal_shards(n, num_ranks))
    assert proof.ring_max_abs_diff < 1e-12 * (1.0 + np.max(np.abs(proof.full_grad)))


@FAST
@given(
    log_tp=st.integers(0, 4),
    tokens=st.integers(1, 7),
    hidden=st.integers(1, 6),
    per_rank_cols=st.integers(1, 3),
    seed=st.integers(0, 1000),
)
def test_tp_mlp_exact_for_any_valid_degree(log_tp, tokens, hidden, per_rank_cols, seed):
    tp = 2**log_tp
    proof = prove_tp_mlp(tp=tp, tokens=tokens, hidden=hidden, ffn=tp * per_rank_cols, seed=seed)
    assert proof.worst < 1e-11


@FAST
@given(
    tp=st.integers(1, 6),
    tokens_per_rank=st.integers(1, 3),
    hidden=st.integers(1, 5),
    cols_per_rank=st.integers(1, 3),
    seed=st.integers(0, 1000),
)
def test_sequence_parallel_exact_for_any_valid_degree(
    tp, tokens_per_rank, hidden, cols_per_rank, seed
):
    proof = prove_sequence_parallel_mlp(
        tp=tp, tokens=tp * tokens_per_rank, hidden=hidden, ffn=tp * cols_per_rank, seed=seed
    )
    assert proof.worst < 1e-11


@FAST
@given(
    tp=st.sampled_from([1, 2, 3, 6]),
    head_dim=st.integers(1, 3),
    seq=st.integers(1, 5),
    causal=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_tp_attention_exact_for_any_valid_degree(tp, head_dim, seq, causal, seed):
    heads = 6
    proof = prove_tp_attention(
        tp=tp, batch=2, seq=seq, hidden=heads * head_dim, heads=heads, causal=causal, seed=seed
    )
    assert proof.worst < 1e-11


@settings(max_examples=15, deadline=None)
@given(p=st.integers(1, 2000))
def test_expected_max_is_increasing_and_below_the_sqrt_2lnp_bound(p):
    # E[max of p N(0,1)] ≤ √(2 ln p) for every p (Jensen + union bound), and grows with p
    assert expected_max_std_normal(p + 1) > expected_max_std_normal(p)
    assert expected_max_std_normal(p) <= np.sqrt(2 * np.log(p)) + 1e-12
