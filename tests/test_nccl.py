"""NCCL's tuner model against hand computations from NVIDIA/nccl src/graph/tuning.cc (constants
copied into this file by hand from the source, not from core/collectives/nccl.py), and the data-
parallel lesson it fixes: bucketing + overlap helps at scale on a DGX-class network."""

import pytest

from core import data_parallel as dp
from core.collectives import ALL_REDUCE_MODELS, all_reduce_coefficients, nccl_choice, nccl_options
from core.hardware import make_cluster
from core.training import Efficiency

MIB = 2**20
NVL = 450e9 * 0.77  # H100 NVLink per direction × the app's intra-node efficiency
NDR8 = 8 * 50e9 * 0.94  # 8 NDR NICs per node × the inter-node efficiency


def h100(nodes, nics=8, nic="InfiniBand NDR"):
    return make_cluster(
        num_nodes=nodes,
        gpus_per_node=8,
        gpu_name="H100 SXM",
        inter_link_name=nic,
        nics_per_node=nics,
    )


def test_25_mib_bucket_on_64_h100s_is_tree_ll128_by_hand():
    c = nccl_choice("all_reduce", 25 * MIB, h100(8))
    # Tree/LL128: baseLat 14 + 2·(7 NVLink hops × 1.25 + log2(8) NET hops × 8.5) = 82.5 µs;
    # busbw min(NVL, NDR8) × 0.92 (tree) × 120/128 (LL128, > 1 node) × 1/2 (tree algbw) × 0.9
    # (treeCorrectionFactor LL128 at log2(25 MiB / 64) = 18)
    lat = (14 + 2 * (7 * 1.25 + 3 * 8.5)) * 1e-6
    bw = min(NVL, NDR8) * 0.92 * 120 / 128 * 0.5 * 0.9
    assert (c.chosen.algorithm, c.chosen.protocol) == ("tree", "LL128")
    assert c.chosen.latency_s == pytest.approx(lat)
    assert c.time_s == pytest.approx(lat + 25 * MIB / bw)
    # what the old model forced: ring/Simple, 8.4 + 112 × 3.4 + 14 × 14 µs, × 1.4 (plateau)
    ring = c.option("ring", "Simple")
    assert ring.latency_s == pytest.approx((8.4 + 112 * 3.4 + 14 * 14) * 1.4e-6)
    assert ring.time_s > 3 * c.time_s


def test_small_messages_pick_ll_and_huge_ones_ring_simple():
    tiny = nccl_choice("all_reduce", 1024, h100(64))
    assert tiny.chosen.protocol == "LL" and tiny.chosen.algorithm == "tree"
    # tree/LL latency: 6.8 + 2·(7 × 0.6 + 6 × 5.0) = 75.2 µs — logarithmic in nodes
    assert tiny.chosen.latency_s == pytest.approx((6.8 + 2 * (7 * 0.6 + 6 * 5.0)) * 1e-6)
    huge = nccl_choice("all_reduce", 28e9, h100(8))
    assert (huge.chosen.algorithm, huge.chosen.protocol) == ("ring", "Simple")
    assert huge.chosen.algbw_bytes_per_s == pytest.approx(min(NVL, NDR8) * 64 / 126)


def test_tree_latency_grows_with_log_nodes_ring_with_ranks():
    lat = {m: nccl_choice("all_reduce", 1e6, h100(m)) for m in (4, 16, 64)}
    tree = [lat[m].option("tree", "LL128").latency_s for m in (4, 16, 64)]
    ring = [lat[m].option("ring", "LL128").latency_s for m in (4, 16, 64)]
    assert tree[1] - tree[0] == pytest.approx(tree[2] - tree[1])  # +2 lg steps each ×4 nodes
    assert ring[2] - ring[1] > 3 * (ring[1] - ring[0])  # linear in p


def test_ll128_needs_nvlink_and_one_node_uses_nvlink_hops():
    pcie = make_cluster(num_nodes=1, gpus_per_node=8, gpu_name="H100 PCIe")
    assert {o.protocol for o in nccl_options("all_reduce", 1e6, pcie)} == {"LL", "Simple"}
    one = nccl_choice("all_reduce", 1e9, h100(1))
    ring = one.option("ring", "Simple")
    assert ring.latency_s == pytest.approx((8.4 + 14 * 3.4) * 1e-6)  # no plateau on one node
    assert ring.algbw_bytes_per_s == pytest.approx(NVL * 8 / 14)


def test_reduce_scatter_and_all_gather_are_ring_only_with_p_minus_1_steps():
    c = nccl_choice("all_gather", 8e9, h100(2))
    assert {o.algorithm for o in c.options} == {"ring"}
    simple = c.option("ring", "Simple")
    # 15 steps, 1 of them a NET hop: 8.4 + 14 × 3.4 + 14 µs (no plateau for all-gather)
    assert simple.latency_s == pytest.approx((8.4 + 14 * 3.4 + 14) * 1e-6)
    assert simple.algbw_bytes_per_s == pytest.approx(min(NVL, NDR8) * 16 / 15)
    with pytest.raises(ValueError, match="tree/Simple is not available"):
        c.option("tree", "Simple")


def test_efficiency_is_the_one_shown_and_scales_bandwidth():
    c1 = nccl_choice("all_reduce", 28e9, h100(8), efficiency=Efficiency(intra_link=1.0))
    c2 = nccl_choice("all_reduce", 28e9, h100(8))
    assert c1.chosen.algbw_bytes_per_s == pytest.approx(min(450e9, NDR8) * 64 / 126)
    assert c2.chosen.algbw_bytes_per_s == pytest.approx(NVL * 64 / 126)


def test_double_binary_tree_beside_binomial_tree():
    assert (
        "MPICH" in ALL_REDUCE_MODELS["tree"][0]
        and "NCCL" in ALL_REDUCE_MODELS["double_binary_tree"][0]
    )
    # binomial: 2 lg p · n β; double binary tree: 2 n β whatever p; ring 2(p−1)/p
    assert all_reduce_coefficients("tree", 64)[1] == 12
    assert all_reduce_coefficients("double_binary_tree", 64)[:2] == (12, 2.0)
    assert all_reduce_coefficients("double_binary_tree", 1024)[1] == 2.0


def test_one_gpu_costs_nothing_and_bad_input_names_the_rule():
    solo = make_cluster(num_nodes=1, gpus_per_node=1)
    assert nccl_choice("all_reduce", 1e6, solo).time_s == 0.0
    with pytest.raises(ValueError, match="message_bytes"):
        nccl_choice("all_reduce", -1, h100(2))
    with pytest.raises(ValueError, match="op"):
        nccl_choice("broadcast", 1e6, h100(2))


# ---------- the DP lesson (issue 13, item 1) ----------
def _eff(bucketed: bool, n: int) -> float:
    """The data-parallel page's defaults: 7B, 4 × 1,024 tokens per GPU, H100 × 8 NDR per node."""
    bucket = 25 * MIB if bucketed else None
    job = dp.DpJob(num_params=7e9, tokens_per_gpu=4096, bucket_bytes=bucket, all_reduce="NCCL")
    return dp.dp_step(job, dp.cluster_for(h100(1), n)).efficiency


@pytest.mark.parametrize("n", [64, 512])
def test_bucketing_with_overlap_beats_one_all_reduce_at_scale(n):
    # before: 0.48 vs 0.76 at 64 GPUs, 0.08 vs 0.75 at 512 (every bucket paid ring/Simple latency)
    assert _eff(True, n) > _eff(False, n) + 0.1


def test_unbucketed_step_is_one_exposed_ring_simple_all_reduce_by_hand():
    compute = 6 * 7e9 * 4096 / (989.4e12 * 0.4)
    grad = 7e9 * 2  # bf16 gradients
    ring = (8.4 + 112 * 3.4 + 14 * 14) * 1.4e-6 + grad * 126 / 64 / min(NVL, NDR8)
    assert _eff(False, 64) == pytest.approx(compute / (compute + ring))
    assert 0.8 < _eff(False, 64) < 0.9


# ---------- the collectives page's readout ----------
def _page_markdown(**params):
    from tests.registry import run_page_file

    at = run_page_file("app_pages/collectives.py", **params)
    return "\n".join(m.value for m in at.markdown)


def test_collectives_page_says_what_nccl_would_pick():
    # defaults: 1 GB on 8 GPUs of one NVLink 4 node: ring/Simple, 8.4 + 14 × 3.4 µs + 1.75 GB at
    # 450 × 0.77 GB/s = 5.107 ms
    md = _page_markdown()
    t = (8.4 + 14 * 3.4) * 1e-6 + 1e9 * 14 / 8 / NVL
    assert "**What NCCL would pick** for S = 1 GB on 8 GPUs: **Ring / Simple**" in md
    assert f"{t * 1e3:.3g} ms" in md
    # 1 MB on 32 ranks over InfiniBand NDR (one GPU per node): the tree with LL128 —
    # 14 + 2 × lg 32 × 8.5 µs = 99 µs of latency, against a ring's 62 NET hops
    md = _page_markdown(n="32", size="1 MB", link="InfiniBand NDR")
    assert "on 32 GPUs on 32 nodes: **Tree (double binary) / LL128**" in md
    assert "99 µs latency" in md


def test_readout_on_a_two_tier_cluster_prices_n_ranks_as_whole_nodes():
    from core.collectives import nccl_cluster

    tiers = make_cluster(num_nodes=2, gpus_per_node=8)
    assert nccl_cluster(8, "NVLink 4", tiers).num_nodes == 1  # N = 8: one node, as the page's N
    assert nccl_cluster(32, "NVLink 4", tiers).num_nodes == 4
    assert nccl_cluster(12, "NVLink 4", tiers) is tiers  # not whole nodes: the cluster drawn
