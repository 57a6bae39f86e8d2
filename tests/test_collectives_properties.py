"""Hypothesis properties of the collective simulators: exact sums, conserved bytes, one message per
port.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.collectives import (
    ALGORITHMS,
    ring_all_gather,
    ring_all_reduce,
    ring_reduce_scatter,
    simulate_all_reduce,
)


@st.composite
def rank_inputs(draw, max_ranks=40):
    n = draw(st.integers(1, max_ranks))
    e = draw(st.integers(1, 2 * n + 5))  # includes lengths shorter than the rank count
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).integers(-(10**6), 10**6, size=(n, e))


@settings(max_examples=80, deadline=None)
@given(rank_inputs())
def test_ring_all_reduce_gives_the_exact_sum(x):
    n, e = x.shape
    t = ring_all_reduce(x)
    assert (t.outputs == x.sum(axis=0)).all()
    assert t.num_steps == 2 * (n - 1)
    # Chunk sizes (array_split): rank r sends every chunk but (r+1) in RS and all but (r+2) in AG.
    sizes = np.array([len(c) for c in np.array_split(np.arange(e), n)]) * x.itemsize
    expected = [2 * x.itemsize * e - sizes[(r + 1) % n] - sizes[(r + 2) % n] for r in range(n)]
    assert t.bytes_sent.tolist() == (expected if n > 1 else [0])
    assert t.bytes_sent.sum() == t.bytes_received.sum()
    if t.contributions is not None:
        assert (t.contribution_counts[0] == 1).all() and (t.contribution_counts[-1] == n).all()


@settings(max_examples=60, deadline=None)
@given(rank_inputs())
def test_reduce_scatter_then_all_gather_is_an_all_reduce(x):
    rs = ring_reduce_scatter(x)
    off = rs.chunk_offsets
    total = x.sum(axis=0)
    for r in range(x.shape[0]):
        assert (rs.outputs[r, off[r] : off[r + 1]] == total[off[r] : off[r + 1]]).all()
    ag = ring_all_gather(rs.outputs)  # row r supplies chunk r: exactly what it owns after the RS
    assert (ag.outputs == total).all()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(ALGORITHMS)), rank_inputs(max_ranks=24), st.integers(1, 6))
def test_every_algorithm_sums_and_conserves_bytes(name, x, g):
    n = x.shape[0]
    kw = {}
    if ALGORITHMS[name].two_level:
        kw["gpus_per_node"] = g if n % g == 0 else 1
    t = simulate_all_reduce(name, x, **kw)
    assert (t.outputs == x.sum(axis=0)).all()
    assert t.bytes_sent.sum() == t.bytes_received.sum()
    for s in t.steps:  # single-port model: each rank sends ≤ 1 and receives ≤ 1 message per step
        assert len(set(s.src.tolist())) == len(s.src) and len(set(s.dst.tolist())) == len(s.dst)
        assert not set(zip(s.src.tolist(), s.dst.tolist())) & {(d, d) for d in range(n)}
    if t.contributions is not None:
        assert (t.contribution_counts[-1] == n).all()


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 90), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_ring_without_snapshots_gives_the_same_sum(n, per_chunk, seed):
    """Past animation sizes (N > 64 or big tensors) the ring skips snapshots and the up-front
    copy.
    """
    x = np.random.default_rng(seed).integers(-(10**6), 10**6, size=(n, n * per_chunk * 60))
    t = ring_all_reduce(x)
    assert (t.outputs == x.sum(axis=0)).all()
    assert t.bytes_sent.tolist() == [2 * (n - 1) * per_chunk * 60 * x.itemsize] * n
