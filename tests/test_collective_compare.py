"""A-vs-B runs: bytes per GPU and times against hand-derived counts and the Thakur et al. closed
forms.

Expected values are worked by hand from the schedules (ring: 2(N−1) steps of S/N; binomial tree:
lg N reduce steps then lg N broadcast steps of the whole S), not read back from the simulators.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.collectives import ALGORITHMS, example_inputs, run_algorithm, timing_elements
from core.hardware import make_cluster

S, B, ALPHA = 1e9, 450e9, 3.4e-6  # 1 GB per GPU on NVLink 4 (450 GB/s per direction, 3.4 µs)


def run(name, n=8, elems=8, **kw):
    kw = {"message_bytes": S, "bandwidth_bytes_per_s": B, "latency_s": ALPHA, **kw}
    return run_algorithm(name, example_inputs(n, elems), **kw)


@pytest.mark.parametrize("elems", [8, 16, 256])
def test_ring_on_8_gpus_sends_2S_7_8_each_in_the_closed_form_time(elems):
    r = run("ring", elems=elems)
    assert r.num_steps == 14
    assert r.max_bytes_sent == pytest.approx(2 * S * 7 / 8) == pytest.approx(1.75e9)
    assert r.min_bytes_sent == pytest.approx(1.75e9)  # every GPU sends the same
    # t = 2(N−1)α + 2(N−1)/N·S/B (Thakur, Rabenseifner & Gropp 2005) = 47.6 µs + 3.8889 ms
    assert r.time_s == pytest.approx(14 * 3.4e-6 + 1.75e9 / 450e9, rel=1e-12)
    assert r.latency_s == pytest.approx(47.6e-6) and r.bandwidth_s == pytest.approx(1.75e9 / 450e9)
    assert r.max_error == 0


def test_ring_progress_after_the_reduce_scatter_half():
    sent, elapsed = run("ring").after(7)
    assert sent == pytest.approx(7 / 8 * S)  # 7 chunks of S/8
    assert elapsed == pytest.approx(7 * ALPHA + 7 / 8 * S / B)
    assert run("ring").after(0) == (0.0, 0.0)
    with pytest.raises(ValueError, match="outside this run's 0 … 14 steps"):
        run("ring").after(15)


@pytest.mark.parametrize(
    "n,per_rank",
    [
        # Sends per rank, by hand: one reduce send for r ≠ 0, plus one broadcast send for every
        # distance m (4, 2, 1) below r's lowest set bit (any m for r = 0) with r + m < N.
        (8, [3, 1, 2, 1, 3, 1, 2, 1]),
        (6, [3, 1, 2, 1, 2, 1]),
    ],
)
def test_binomial_tree_root_and_leaves_send_what_the_tree_says(n, per_rank):
    r = run("tree", n=n)
    assert (r.trace.bytes_sent * r.bytes_scale / S).tolist() == pytest.approx(per_rank)
    assert r.max_bytes_sent == pytest.approx(3 * S)  # the root: lg 8 = ⌈lg 6⌉ = 3 sends of S
    assert r.min_bytes_sent == pytest.approx(S)  # a leaf: its one reduce send
    assert r.num_steps == 6
    assert r.time_s == pytest.approx(6 * ALPHA + 6 * S / B)  # every step moves a whole S


@pytest.mark.parametrize("name", list(ALGORITHMS))
@pytest.mark.parametrize("n", [2, 5, 8, 16])
def test_every_algorithm_sums_integers_exactly(name, n):
    kw = {"gpus_per_node": n if n < 8 else 8} if name == "hierarchical" else {}
    r = run(name, n=n, elems=13, **kw)
    assert r.max_error == 0
    assert r.label == ALGORITHMS[name].label


def test_hierarchical_inter_node_steps_use_the_cluster_network():
    # 2 nodes × 8 GPUs, 8 NDR NICs per node: each GPU gets 8 × 50 GB/s / 8 = 50 GB/s off-node.
    cluster = make_cluster(
        num_nodes=2,
        gpus_per_node=8,
        intra_link_name="NVLink 4",
        inter_link_name="InfiniBand NDR",
        nics_per_node=8,
    )
    r = run("hierarchical", n=16, elems=16, cluster=cluster)
    # 7 intra RS steps of S/8, 2 inter steps (RS + AG over 2 nodes) of S/16, 7 intra AG steps of
    # S/8.
    intra = 14 * (ALPHA + S / 8 / B)
    inter = 2 * (14e-6 + S / 16 / 50e9)
    assert r.num_steps == 16
    assert r.time_s == pytest.approx(intra + inter, rel=1e-12)
    assert r.latency_s == pytest.approx(14 * ALPHA + 2 * 14e-6)
    assert r.max_error == 0
    flat = run("hierarchical", n=16, elems=16, gpus_per_node=8)  # no cluster: NVLink for every step
    assert flat.time_s == pytest.approx(14 * (ALPHA + S / 8 / B) + 2 * (ALPHA + S / 16 / B))


def test_rules_broken_by_the_controls_are_named():
    with pytest.raises(ValueError, match="6 ranks are not a whole number of nodes of 8 GPUs"):
        run("hierarchical", n=6, gpus_per_node=8)
    with pytest.raises(ValueError, match="message_bytes=0 must be a finite number > 0"):
        run("ring", message_bytes=0)
    with pytest.raises(ValueError, match="algorithm='star' is unknown: use one of ring"):
        run("star")


@st.composite
def cases(draw):
    n = draw(st.integers(2, 16))
    name = draw(st.sampled_from(sorted(ALGORITHMS)))
    gpn = draw(st.sampled_from([g for g in range(1, n + 1) if n % g == 0]))
    elems = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).integers(-1000, 1000, size=(n, elems))
    return name, x, gpn


@settings(max_examples=80, deadline=None)
@given(cases(), st.floats(1e3, 1e10), st.floats(0, 1e-4))
def test_bytes_are_conserved_and_every_sum_is_exact(case, size, alpha):
    name, x, gpn = case
    r = run_algorithm(
        name,
        x,
        message_bytes=size,
        bandwidth_bytes_per_s=B,
        latency_s=alpha,
        gpus_per_node=gpn if name == "hierarchical" else None,
    )
    t = r.trace
    assert t.bytes_sent.sum() == t.bytes_received.sum()  # every byte sent is received once
    assert r.max_error == 0
    assert np.array_equal(t.outputs, np.broadcast_to(x.sum(axis=0), x.shape))
    assert r.sent_per_step_bytes.sum(axis=0) == pytest.approx(
        t.bytes_sent * size / (x.shape[1] * 8)
    )
    assert r.latency_s == pytest.approx(r.num_steps * alpha, abs=1e-15)
    assert r.time_s == pytest.approx(r.latency_s + r.bandwidth_s) and r.bandwidth_s >= 0
    assert math.isclose(r.after(r.num_steps)[1], r.time_s, rel_tol=1e-9, abs_tol=1e-15)


def test_timing_elements_split_evenly_for_every_algorithm():
    # multiples of N and of the largest power of two ≤ N: lcm(8, 8), lcm(6, 4), lcm(12, 8), lcm(5,
    # 4)
    assert [timing_elements(n) for n in (8, 6, 12, 5, 32, 1)] == [8, 12, 24, 20, 32, 1]
    s, bw = 1e9, 450e9
    for n in (5, 6, 12, 16, 32):
        e = timing_elements(n)
        ring = run_algorithm(
            "ring", example_inputs(n, e), message_bytes=s, bandwidth_bytes_per_s=bw
        )
        assert ring.max_bytes_sent == pytest.approx(2 * s * (n - 1) / n)  # not S/8-sized chunks
        assert ring.time_s == pytest.approx(2 * (n - 1) / n * s / bw)
    # halving-doubling on 16 = 2^4 sends 2·S·(p−1)/p too (Rabenseifner), at 16 elements per rank
    hd = run_algorithm(
        "halving_doubling",
        example_inputs(16, timing_elements(16)),
        message_bytes=s,
        bandwidth_bytes_per_s=bw,
    )
    assert hd.max_bytes_sent == pytest.approx(2 * s * 15 / 16)


def test_on_a_cluster_every_algorithm_pays_the_network_it_crosses():
    # 4 nodes × 8 GPUs, one NDR NIC (50 GB/s, 14 µs) per node, NVLink 4 inside (450 GB/s, 3.4 µs).
    c = make_cluster(num_nodes=4, gpus_per_node=8, nics_per_node=1)
    s, n = 1e9, 32
    kw = dict(message_bytes=s, bandwidth_bytes_per_s=450e9, latency_s=3.4e-6, cluster=c)
    ring = run_algorithm("ring", example_inputs(n, timing_elements(n)), **kw)
    # Every ring step has one message leaving each node (alone on its node's NIC): each of the
    # 62 steps lasts 14 µs + (S/32) / 50 GB/s.
    assert ring.time_s == pytest.approx(62 * (14e-6 + s / 32 / 50e9))
    assert ring.bandwidth_s == pytest.approx(62 * s / 32 / 50e9)
    hier = run_algorithm("hierarchical", example_inputs(n, timing_elements(n)), **kw)
    # Two-level: 7 intra reduce-scatter steps of S/8 on NVLink, an inter-node ring on S/8 across 4
    # nodes
    # (3 + 3 steps of S/32, 8 GPUs of a node leaving at once: 50/8 GB/s each), 7 intra all-gather
    # steps.
    by_hand = 14 * (3.4e-6 + s / 8 / 450e9) + 6 * (14e-6 + s / 32 / (50e9 / 8))
    assert hier.time_s == pytest.approx(by_hand)
    assert hier.time_s < ring.time_s  # one NIC per node: the flat ring crosses it 62 times
