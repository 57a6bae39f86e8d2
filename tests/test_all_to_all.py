"""All-to-all on real data: every block arrives where it was addressed, each pairwise step moves
one block per rank, and the α-β / busbw numbers match hand arithmetic."""

import numpy as np
import pytest

from core.collectives import (
    all_to_all,
    all_to_all_busbw_bytes_per_s,
    all_to_all_time_s,
    two_tier_all_to_all,
)
from core.hardware import make_cluster


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8])
def test_every_block_reaches_its_destination(p):
    rng = np.random.default_rng(p)
    send = [[rng.standard_normal(rng.integers(0, 6)) for _ in range(p)] for _ in range(p)]
    res = all_to_all(send)
    for src in range(p):
        for dst in range(p):
            np.testing.assert_array_equal(res.received[dst][src], send[src][dst])
    # traffic: every off-diagonal block's bytes, nothing on the diagonal
    expected = np.array([[0 if s == d else send[s][d].nbytes for d in range(p)] for s in range(p)])
    np.testing.assert_array_equal(res.traffic_bytes, expected)
    assert len(res.step_bytes) == p - 1
    for i, step in enumerate(res.step_bytes, start=1):  # step i: r sends to r + i only
        for s in range(p):
            assert np.count_nonzero(step[s]) <= 1
            assert step[s, (s + i) % p] == send[s][(s + i) % p].nbytes


def test_received_blocks_are_copies():
    send = [[np.zeros(2), np.ones(2)], [np.full(2, 2.0), np.full(2, 3.0)]]
    res = all_to_all(send)
    send[0][1][:] = 9
    assert res.received[1][0].tolist() == [1.0, 1.0]


def test_ragged_input_is_rejected_with_the_fix():
    with pytest.raises(ValueError, match="one block per destination"):
        all_to_all([[np.zeros(1)], [np.zeros(1), np.zeros(1)]])


def test_alpha_beta_time_by_hand():
    # 8 ranks, 800 MB buffer, 100 GB/s, 10 µs: 7 × 10 µs + 800e6 × 7/8 / 100e9 = 7.07 ms
    t = all_to_all_time_s(800e6, 8, bandwidth_bytes_per_s=100e9, latency_s=10e-6)
    assert t == pytest.approx(7e-5 + 7e-3)
    # busbw of that run with no latency = the link rate
    t0 = all_to_all_time_s(800e6, 8, bandwidth_bytes_per_s=100e9)
    assert all_to_all_busbw_bytes_per_s(800e6, 8, t0) == pytest.approx(100e9)
    # nccl-tests factor (n − 1)/n: S = 1 GB in 10 ms on 4 ranks → algbw 100, busbw 75 GB/s
    assert all_to_all_busbw_bytes_per_s(1e9, 4, 0.01) == pytest.approx(75e9)


def test_two_tier_split_by_hand():
    # 2 nodes × 8 H100, NDR 50 GB/s per NIC, 8 NICs: S = 1.6 GB per GPU, 16 ranks → 100 MB a peer
    c = make_cluster(num_nodes=2, gpus_per_node=8)
    tt = two_tier_all_to_all(1.6e9, c)
    assert tt.intra_bytes_per_gpu == pytest.approx(7 * 100e6)
    assert tt.inter_bytes_per_gpu == pytest.approx(8 * 100e6)
    assert tt.inter_s == pytest.approx(8 * 14e-6 + 800e6 / 50e9)
    assert tt.intra_s == pytest.approx(7 * 3.4e-6 + 700e6 / 450e9)
    assert tt.time_s == tt.inter_s
    one = two_tier_all_to_all(1.6e9, make_cluster(num_nodes=1, gpus_per_node=8))
    assert one.inter_bytes_per_gpu == 0 and one.inter_s == 0
