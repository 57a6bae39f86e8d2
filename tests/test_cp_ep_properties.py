"""Properties of the context- and expert-parallel simulators over random shapes: the ring and
Ulysses equal full attention, the balance counts every causal pair once, the MoE dispatch keeps
every kept row and returns it home."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core import context_parallel as cp
from core import expert_parallel as ep


@settings(max_examples=40, deadline=None)
@given(
    c=st.integers(1, 6),
    chunk=st.integers(1, 4),
    d=st.integers(1, 5),
    causal=st.booleans(),
    layout=st.sampled_from(["contiguous", "zigzag"]),
    seed=st.integers(0, 1000),
)
def test_ring_equals_full_attention(c, chunk, d, causal, layout, seed):
    s = 2 * c * chunk
    q, k, v = cp.example_qkv(s, d, seed=seed)
    r = cp.ring_attention(q, k, v, cp=c, causal=causal, layout=layout)
    assert r.max_abs_error < 1e-10
    b = cp.ring_balance(s, c, layout=layout, causal=causal)
    np.testing.assert_array_equal(b.pairs, r.pairs)
    assert b.pairs.sum() == (s * (s + 1) // 2 if causal else s * s)
    assert 0.0 <= b.idle_share < 1.0


@settings(max_examples=25, deadline=None)
@given(
    c=st.sampled_from([1, 2, 4]), n=st.integers(1, 4), causal=st.booleans(), seed=st.integers(0, 99)
)
def test_ulysses_equals_full_attention(c, n, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((c * n, 4, 2)) for _ in range(3))
    assert cp.ulysses_attention(q, k, v, cp=c, causal=causal).max_abs_error < 1e-10


@settings(max_examples=25, deadline=None)
@given(
    ranks=st.sampled_from([1, 2, 4, 8]),
    per_rank_experts=st.integers(1, 3),
    k=st.integers(1, 3),
    tokens_per_rank=st.integers(1, 20),
    cf=st.sampled_from([None, 0.5, 1.0, 1.5]),
    skew=st.floats(0, 2),
    seed=st.integers(0, 100),
)
def test_moe_dispatch_conserves_rows(ranks, per_rank_experts, k, tokens_per_rank, cf, skew, seed):
    e = ranks * per_rank_experts
    k = min(k, e)
    t = ranks * tokens_per_rank
    r = ep.moe_layer(
        tokens=t, experts=e, top_k=k, ep=ranks, capacity_factor=cf, skew=skew, seed=seed
    )
    kept = int(r.kept.sum())
    assert r.traffic_rows.sum() == kept == int(r.processed.sum())
    assert r.dropped + kept == t * k
    np.testing.assert_array_equal(r.combine.traffic_bytes, r.dispatch.traffic_bytes.T)
    assert r.max_abs_error < 1e-10
    if cf is not None:
        assert r.processed.max() <= r.capacity
