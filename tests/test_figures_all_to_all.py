"""The collectives page's all-to-all figure and cost table (figures/collectives/all_to_all.py).

By hand: pairwise exchange moves block src→dst at step (dst − src) mod N (pmodels/mpich
src/mpi/coll/alltoall/alltoall_intra_pairwise.c), so on N = 4 block 1→0 moves at step 3 and 0→1 at
step 1. Costs at S = 1e9 B on NVLink 4 (450e9 B/s, α = 3.4 µs), N = 8: all-to-all 7α + (7/8)S/B =
23.8 µs + 1.944 ms = 1.97 ms; ring all-reduce 14α + 2(7/8)S/B = 47.6 µs + 3.889 ms = 3.94 ms.
"""

import pytest

from core import collectives as coll
from core.hardware import make_cluster
from figures.collectives import all_to_all as a2a

NVLINK = dict(size=1e9, bw=450e9, alpha=3.4e-6)


def sim(n: int) -> coll.AllToAllResult:
    return coll.all_to_all(a2a.example_blocks(n))


def test_moved_at_is_the_pairwise_distance():
    when = a2a.moved_at(sim(4))
    assert when[1, 0] == 3 and when[0, 1] == 1 and when[2, 3] == 1 and when[3, 1] == 2
    assert all(when[r, r] == 0 for r in range(4))  # the own block never moves


def test_after_panel_is_decoded_from_the_delivered_blocks_and_is_the_transpose():
    fig = a2a.transpose_figure(sim(4), 3)
    before, after = fig["data"][0], fig["data"][1]
    assert before["text"][1][0] == "1→0"  # GPU 1's slot 0: its block for GPU 0
    assert after["text"][0][1] == "1→0"  # after all 3 steps GPU 0's slot 1: GPU 1's block
    assert all(after["text"][r][s] == f"{s}→{r}" for r in range(4) for s in range(4))
    assert "after step 3 of 3" in fig["layout"]["title"]["text"]


def test_blocks_not_yet_moved_are_blank_and_the_current_step_is_outlined():
    fig = a2a.transpose_figure(sim(4), 1)
    after, outline = fig["data"][1], fig["data"][3]
    # Step 1: GPU r receives from r − 1 only; GPU 0 still waits for 1→0 (step 3), 2→0 (step 2).
    assert after["text"][0] == ["0→0", "", "", "3→0"]
    assert after["z"][0][1] is None and after["z"][0][3] == 1
    # outlined in the after panel at (x = from, y = to): 0→1, 1→2, 2→3, 3→0
    assert sorted(zip(outline["x"], outline["y"])) == [(0, 1), (1, 2), (2, 3), (3, 0)]


def test_costs_at_the_page_defaults():
    rows = a2a.costs(8, NVLINK["size"], NVLINK["bw"], NVLINK["alpha"])
    a2a_t = 7 * 3.4e-6 + 7 / 8 * 1e9 / 450e9
    ar_t = 14 * 3.4e-6 + 2 * 7 / 8 * 1e9 / 450e9
    assert rows["all-to-all (pairwise)"]["time"] == pytest.approx(a2a_t)
    assert rows["all-gather (ring)"]["time"] == pytest.approx(a2a_t)  # same α and β terms
    assert rows["all-reduce (ring)"]["time"] == pytest.approx(ar_t)
    assert rows["all-to-all (pairwise)"]["sent"] == pytest.approx(875e6)
    assert rows["all-to-all (pairwise)"]["factor"] == pytest.approx(7 / 8)
    table = a2a.cost_table(rows, "decimal")
    assert [r["time, one link"] for r in table] == ["1.97 ms", "1.97 ms", "3.94 ms"]
    assert [r["sent per GPU"] for r in table] == ["875 MB", "875 MB", "1.75 GB"]
    assert [r["busbw factor"] for r in table] == ["0.875", "0.875", "1.75"]


def test_two_tier_all_to_all_pushes_g_over_2_times_the_nic_bytes():
    # 2 nodes × 8 GPUs, IB NDR 50e9 B/s × 8 NICs: 50e9 B/s per GPU, α_net = 14 µs.
    cluster = make_cluster(num_nodes=2, gpus_per_node=8, inter_link_name="InfiniBand NDR")
    rows = a2a.costs(16, 1e9, 450e9, 3.4e-6, cluster)
    a, r = rows["all-to-all (pairwise)"], rows["all-reduce (ring)"]
    assert a["nic"] == pytest.approx(0.5e9)  # S·(m−1)/m with m = 2
    assert r["nic"] == pytest.approx(125e6)  # 2(m−1)/m · S/g
    assert a["nic"] / r["nic"] == pytest.approx(8 / 2)  # g/2, the takeaway's factor
    assert a["tier"] == pytest.approx(8 * 14e-6 + 0.5e9 / 50e9)  # the NIC leg: 10.1 ms
    # two-level all-reduce: RS + AG inside (7α + 7/8·S/B each) + 2 node ring of S/8
    inner = 7 * 3.4e-6 + 7 / 8 * 1e9 / 450e9
    assert r["tier"] == pytest.approx(2 * inner + 2 * 14e-6 + 2 * 0.5 * 125e6 / 50e9)
    table = a2a.cost_table(rows, "decimal")
    assert table[0]["two-tier time"] == "10.1 ms" and table[1]["two-tier time"] == "—"


def test_takeaway_states_the_fractions_and_the_nic_factor():
    words = a2a.takeaway(8, 8)
    assert "7/8 at N = 8" in words and "g/2 = 4×" in words
    assert "g/2 = 2×" in a2a.takeaway(16, 4)
