"""Scenario numbers against hand computations from the source formulas (not from the code under
test).
"""

import math

import pytest

from core import scenarios as cs

GB = 1e9
# Llama-2 parameter counts by hand from the Hugging Face configs: per layer 2h² (q, o) + 2h·(h·g/a)
# (k, v)
# + 3hf (SwiGLU) + 2h (norms); + h final norm + 2Vh untied embeddings. Published: 13.0B, 69.0B.
P13 = 40 * (2 * 5120**2 + 2 * 5120**2 + 3 * 5120 * 13824 + 2 * 5120) + 5120 + 2 * 32000 * 5120
P70 = 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192) + 8192 + 2 * 32000 * 8192
H100 = 81_559 * 2**20  # what nvidia-smi reports for an "80 GB" H100: 85.5 GB
# One layer of each by hand: attention 2h^2 (1 + g/a), SwiGLU 3 h f, two RMSNorms 2h.
LAYER70 = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192
LAYER13 = 4 * 5120**2 + 3 * 5120 * 13824 + 2 * 5120


def test_hand_counts_match_the_published_sizes():
    assert P70 == 68_976_648_192 and P13 == 13_015_864_320


# ---------- 1 · size a 70B run ----------
def test_70b_model_states_are_16_bytes_per_parameter_and_zero3_divides_them():
    s = cs.size_70b()
    assert s.bytes_per_param == 16 and s.states_bytes == 70e9 * 16 == 1.12e12
    assert s.states_per_gpu_bytes == 70e9 * 16 / 16 == 70 * GB
    assert s.model_params == P70 and s.model_states_per_gpu_bytes == 16 * P70 // 16
    assert cs.size_70b(7).states_per_gpu_bytes == 16 * math.ceil(70e9 / 7)  # a shard holds ⌈Ψ/N⌉


def test_70b_activations_per_llama_block_and_the_seed_is_borderline():
    s, sh, L, V = cs.size_70b(), 4096 * 8192, 80, 32000
    edges = 4 * sh + 4 * 4096 * V  # final-norm and head inputs 4sbh; fp32 logits; no dropout mask
    # Llama-2 70B block per token (docs/notes/memory.md §3): 8h whole + Q and output input 4h +
    # K and V 4h·g/a = 0.5h + SwiGLU 6f = 21h: 33.5 h; flash attention: no s² term.
    assert s.activations_bytes["none"] == pytest.approx(33.5 * sh * L + edges)
    assert s.activations_bytes["selective"] == s.activations_bytes["none"]  # flash: no s² scores
    assert s.activations_bytes["full"] == pytest.approx(2 * sh * L + edges)  # each layer's input
    assert s.gathered_bytes == 6 * LAYER70  # current + prefetched layer (2 B) + its grads (2 B)
    held = P70 + 6 * LAYER70 + 2 * sh * L + edges
    assert held == 80_137_789_440
    assert s.used_bytes("full") == pytest.approx(held + 0.10 * H100)  # the one 10 % reserve
    assert not s.fits("full") and not s.fits("none")  # over by 3.2 GB ...
    assert s.used_bytes("full") - H100 == pytest.approx(3.17e9, abs=0.01e9)
    assert s.largest_reserve("full") == pytest.approx(1 - held / H100)  # ... fits under 6.29 %
    assert 0.06 < s.largest_reserve("full") < 0.065  # the seed's "just barely"
    # ZeRO-3 over 32: P70/2 of states + the same gathered layers and activations.
    doubled = 16 * P70 / 32 + 6 * LAYER70 + 2 * sh * L + edges + 0.10 * H100
    assert s.doubled.used_bytes == pytest.approx(doubled) and s.doubled.fits


def test_70b_recompute_costs_one_more_forward_of_the_layers():
    # FLOPs per token: 6·(matmul params) + 12·L·h·s; full recompute adds a layer forward 2·(layer
    # matmuls) + 4·L·h·s.
    layer = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672
    total = 6 * (80 * layer + 8192 * 32000) + 12 * 80 * 8192 * 4096
    extra = 2 * 80 * layer + 4 * 80 * 8192 * 4096
    assert cs.size_70b().extra_compute["full"] == pytest.approx(extra / total)
    assert cs.size_70b().extra_compute["none"] == 0


# ---------- 2 · DP slower at scale ----------
# NCCL's tuner by hand (NVIDIA/nccl src/graph/tuning.cc): ring/Simple all-reduce latency =
# baseLat 8.4 µs + (2(p−1) − 2(m−1)) intra hops + 2(m−1) NET hops (14 µs), ×1.4 across nodes;
# algbw = busbw · p / (2(p−1)); busbw = the slowest tier at the app's efficiencies (NVLink 77 %,
# NICs 94 %).
GRAD = 1.3e9 * 2  # bf16 gradients: the app's one traffic dtype
COMPUTE = 6 * 1.3e9 * 2048 / (312e12 * 0.4)
RING8 = (8.4 + 14 * 3.4) * 1e-6 + GRAD * 14 / 8 / (300e9 * 0.77)  # one node: NVLink hops only
RING64 = (8.4 + 112 * 3.4 + 14 * 14.0) * 1.4e-6 + GRAD * 126 / 64 / (12.5e9 * 0.94)


def test_scale_out_bytes_links_and_step_times_by_hand():
    s = cs.scale_out()
    r = s.run
    assert r.small.grad_bytes == GRAD
    assert r.sim_bytes_sent_per_rank_small == pytest.approx(2 * 7 / 8 * GRAD)
    assert r.sim_bytes_sent_per_rank_large == pytest.approx(2 * 63 / 64 * GRAD)
    assert r.small.bottleneck_bytes_per_s == pytest.approx(231e9)
    assert r.large.bottleneck_bytes_per_s == pytest.approx(11.75e9)
    assert r.small.algorithms == r.large.algorithms == "Ring / Simple"  # 2.6 GB: bandwidth-bound
    assert r.small.step_s == pytest.approx(COMPUTE + RING8)
    assert r.large.step_s == pytest.approx(COMPUTE + RING64)
    assert r.step_ratio == pytest.approx((COMPUTE + RING64) / (COMPUTE + RING8))
    # one definition of scaling efficiency: compute / step (87 % → 23 %, never "0 %")
    assert r.large.efficiency == pytest.approx(COMPUTE / (COMPUTE + RING64))
    assert 0.22 < r.large.efficiency < 0.24


def test_scale_out_shows_the_same_job_on_a_dgx_class_network():
    r = cs.scale_out().run
    # 8× HDR per node: busbw min(231, 8 × 25 × 0.94 = 188) GB/s
    dgx = (8.4 + 112 * 3.4 + 14 * 14.0) * 1.4e-6 + GRAD * 126 / 64 / 188e9
    assert r.dgx_large.step_s == pytest.approx(COMPUTE + dgx)
    assert r.dgx_large.efficiency > 0.8 > 3 * r.large.efficiency
    # there bucketing + overlap helps, as in practice; on the thin network it does not
    assert r.dgx_large_bucketed.efficiency > 0.95 > r.dgx_large.efficiency


def test_scale_out_fixes_honest_verdicts():
    s = cs.scale_out()
    gain = {e.label.split(" (")[0].split(" ×")[0]: e.tokens_per_s_gain for e in s.effects}
    base = COMPUTE + RING64
    # overlap can hide at most the 85 ms backward of a ~0.44 s all-reduce: +4 % at best
    assert 1 < gain["bucketing"] < 1.05
    assert "hierarchical all-reduce" not in gain  # NCCL's tuner already weighs its tree
    assert gain["per-GPU batch"] == pytest.approx(8 * base / (8 * COMPUTE + RING64))
    nics = COMPUTE + (8.4 + 112 * 3.4 + 14 * 14.0) * 1.4e-6 + GRAD * 126 / 64 / (100e9 * 0.94)
    assert gain["8× 100 GbE per node"] == pytest.approx(base / nics)
    assert all(e.hidden_s == 0 for e in s.effects if "NIC" in e.label)


def test_scale_out_links_preload_the_same_job():
    links = cs.scale_out().links
    q = dict(links[0].params)
    assert q == dict(
        size="1.3B",
        kt="2",
        gpu="A100 80GB",
        gpn="8",
        nic="100 GbE",
        ar="NCCL",
        ovl="false",
        at="64",
        nics="1",
    )
    assert dict(cs.scale_out(128).links[1].params)["at"] == "128"
    assert dict(links[2].params)["nic"] == "InfiniBand HDR" and dict(links[2].params)["nics"] == "8"


# ---------- 3 · 3D placement ----------
def test_placement_tp_inside_vs_across_by_alpha_beta():
    p = cs.placement()
    i, a = p.inside, p.across
    assert (i.order, i.tp_link, i.pp_link) == ("tp-pp-dp", "NVLink 4", "InfiniBand NDR")
    assert (a.order, a.tp_link, a.pp_link) == ("pp-tp-dp", "InfiniBand NDR", "NVLink 4")
    msg = 1 * 2048 * 12288 * 2  # b·s·h·2
    assert p.pp_hop_bytes == msg
    per_mb = 96 // 8 * 6  # layers per stage × 6 all-reduces (full recompute)
    assert p.tp_bytes_per_microbatch == pytest.approx(per_mb * 2 * 7 / 8 * msg)
    # Exposed TP = M micro-batches × all-reduces, each as NCCL picks it (NVIDIA/nccl
    # src/graph/tuning.cc), ring/Simple
    # here: inside, 8.4 µs + 14 NVLink hops (3.4 µs); across 8 nodes of one member each, 14 NET
    # hops (14 µs), ×1.4; bytes 2(t−1)/t·M over B × the app's efficiency.
    nvl = (8.4 + 14 * 3.4) * 1e-6 + 2 * 7 / 8 * msg / (450e9 * 0.77)
    ib = (8.4 + 14 * 14) * 1.4e-6 + 2 * 7 / 8 * msg / (50e9 * 0.94)
    assert i.breakdown.tp_s == pytest.approx(64 * per_mb * nvl, rel=1e-6)
    # Across nodes the first stage is the busiest: its vocab-parallel embedding all-reduce adds one.
    assert a.breakdown.tp_s == pytest.approx(64 * (per_mb + 1) * ib, rel=1e-6)
    assert a.step_s / i.step_s > 2 and i.fits


def test_placement_links_name_the_planner_exercise():
    p = cs.placement("InfiniBand HDR")
    good, bad = (dict(x.params) for x in p.links)
    assert good == dict(
        model="GPT-3 175B",
        nodes="8",
        inter="InfiniBand HDR",
        seq="2048",
        gb="64",
        rc="full",
        pick="custom",
        dp="1",
        tp="8",
        pp="8",
        cmp="true",
    )
    assert bad == good | {"order": "pp-tp-dp"}
    assert p.across.tp_link == "InfiniBand HDR"


# ---------- 4 · GPipe vs 1F1B ----------
@pytest.mark.parametrize("p", [8, 5])
def test_bubble_is_the_gpipe_closed_form_and_peaks_are_m_vs_p(p):
    s = cs.gpipe_vs_1f1b(p)
    for m in (8, 64):
        for sched in ("gpipe", "1f1b"):
            row = s.rows[sched, m]
            assert row.simulated == pytest.approx((p - 1) / (m + p - 1))
            assert row.closed_form == pytest.approx((p - 1) / (m + p - 1))
        assert s.rows["gpipe", m].peak_activations == m
        assert s.rows["1f1b", m].peak_activations == min(p, m)


def test_bubble_at_p8_is_not_the_round_numbers():
    s = cs.gpipe_vs_1f1b(8)
    assert s.rows["1f1b", 8].simulated == pytest.approx(7 / 15) == pytest.approx(0.4667, abs=1e-4)
    assert s.rows["1f1b", 64].simulated == pytest.approx(7 / 71) == pytest.approx(0.0986, abs=1e-4)


# ---------- 5 · DDP vs FSDP ----------
def test_ddp_does_not_fit_and_full_shard_does():
    s, sh = cs.ddp_vs_fsdp(), 4096 * 5120
    # Llama-2 13B block per token: 16h + 6f (MHA, SwiGLU, no dropout) = 32.2h; + 4sbh + 4sbV.
    acts = (16 * 5120 + 6 * 13824) * 4096 * 40 + 4 * sh + 4 * 4096 * 32000
    assert s.num_params == P13
    assert s.ddp.total_bytes == pytest.approx(16 * P13 + acts)
    assert s.fsdp.total_bytes == pytest.approx(16 * math.ceil(P13 / 8) + acts + 6 * LAYER13)
    assert not s.fits(s.ddp) and s.fits(s.fsdp)
    assert not any(cs.ddp_vs_fsdp(n).fits(cs.ddp_vs_fsdp(n).ddp) for n in (2, 64))  # DDP never fits
    # 16Ψ/4 = 52 GB + 27.6 GB + 1.9 GB gathered + 8.6 GB reserve = 90 GB > 85.5 GB
    assert not cs.ddp_vs_fsdp(4).fits(cs.ddp_vs_fsdp(4).fsdp)


def test_fsdp_gathers_one_layer_at_a_time_and_sends_1_5x_ddp():
    s = cs.ddp_vs_fsdp()
    layer = 4 * 5120**2 + 3 * 5120 * 13824 + 2 * 5120  # q, k, v, o + SwiGLU + 2 norms
    assert s.layer_gather_bytes == 2 * layer
    ring = 7 / 8 * P13 * 2  # bf16, (N−1)/N of the tensor per ring pass
    assert s.ddp_comm.total_bytes == pytest.approx(2 * ring)  # one all-reduce = 2Ψ
    assert s.fsdp_comm.total_bytes == pytest.approx(3 * ring)  # reduce-scatter + 2 all-gathers = 3Ψ


# ---------- 6 · the sentence ----------
def test_sentence_clauses():
    s = cs.sentence()
    i, a, d = s.inside, s.across, s.ddp
    assert (i.tp_link, i.pp_link) == ("NVLink 4", "InfiniBand NDR")
    assert a.tp_link == "InfiniBand NDR" and a.order == "pp-dp-tp"  # every TP group spans 8 nodes
    msg = 4096 * 8192 * 2
    assert s.pp_hop_bytes == msg
    assert s.tp_bytes_per_microbatch == pytest.approx(80 // 2 * 4 * 2 * 7 / 8 * msg)  # 280× a hop
    m = 1152 // 4  # micro-batches per pipeline
    nvl = (8.4 + 14 * 3.4) * 1e-6 + 2 * 7 / 8 * msg / (450e9 * 0.77)  # NCCL ring/Simple
    assert i.breakdown.tp_s == pytest.approx(m * 40 * 4 * nvl, rel=1e-6)
    assert a.breakdown.tp_s > 5 * i.breakdown.tp_s
    assert i.breakdown.pp_p2p_s < 0.01 * i.step_s
    usable = 0.9 * H100
    assert d.usable_bytes == usable and d.memory_bytes > usable and not d.fits
    assert s.zero_stage == 1 and i.fits and i.memory_bytes <= usable
    assert d.optimizer_bytes / i.optimizer_bytes == pytest.approx(4, rel=1e-6)  # 12Ψ over DP = 4
    assert s.fastest_step_s <= i.step_s


def test_sentence_links_use_the_planner_labels():
    links = [dict(x.params) for x in cs.sentence().links]
    base = dict(model="Llama-2 70B", nodes="8", pick="custom", dp="4", tp="8", pp="2")
    assert links == [
        base | {"zero": "ZeRO-1"},
        base | {"zero": "DDP"},
        base | {"zero": "ZeRO-1", "order": "pp-dp-tp"},
    ]
    assert all(x.page == "app_pages/planner.py" for x in cs.sentence().links)


def test_every_link_targets_a_page_file():
    from tests.registry import ROOT

    for result in (
        cs.size_70b(),
        cs.scale_out(),
        cs.placement(),
        cs.gpipe_vs_1f1b(),
        cs.ddp_vs_fsdp(),
    ):
        for link in result.links:
            assert (ROOT / link.page).exists(), link.page


# ---------- 7 · train at 128K context ----------
# Llama-3.1 70B (HF config): h 8192, 64 query heads, 8 K/V heads of d 128, SwiGLU f 28672, L 80,
# V 128256, untied. Parameters by hand as above with its vocabulary.
P31_70 = 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192) + 8192
P31_70 += 2 * 128256 * 8192
S128 = 131072


def test_llama31_70b_hand_count():
    assert P31_70 == 70_553_706_496  # "70B" (Meta's model card)


def test_128k_activations_by_hand_and_divided_by_cp():
    # Korthikanti et al. 2022 Table 2 per token, for the GQA + SwiGLU block (docs/notes/memory.md
    # §3), bf16: kept whole 8h (two norm inputs, QKV and MLP inputs); split over TP 4·(a·d) Q
    # and attention output + 4·(g·d) K, V + 6f (gate|up, down inputs); flash: no s² term. With
    # SP everything is ÷ TP. 1F1B's first stage: PP micro-batches × L/PP layers = L layers.
    per_token = (8 * 8192 + 4 * 8192 + 4 * 1024 + 6 * 28672) / 8
    s = cs.long_context(8)
    for row in s.rows:
        assert row.activations_bytes == per_token * (S128 // row.cp) * 80
        # states of the first stage: 20 layers (sharded part ÷ TP 8, the two norms whole) and the
        # vocab-parallel embedding ÷ TP; bf16 weights + grads, Adam's 12 B ÷ DP × CP (ZeRO-1)
        sharded = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672
        shard = 20 * (sharded // 8 + 2 * 8192) + 128256 * 8192 // 8
        assert shard == 2_270_756_864
        assert row.states_bytes == pytest.approx(4 * shard + 12 * shard / row.cp, rel=1e-12)
        assert row.gpus == 32 * row.cp
    assert s.rows[0].activations_bytes / GB == pytest.approx(359.7, abs=0.05)


def test_128k_needs_cp_8_on_80gb_h100s():
    s = cs.long_context(8)
    usable = 0.9 * H100  # the app's 10% reserve
    for row in s.rows:
        assert row.fits == (row.activations_bytes + row.states_bytes <= usable)
    assert s.smallest_fit == 8  # CP 4: 89.9 + 15.4 GB > 77 GB; CP 8: 45.0 + 12.1 GB fits
    assert [r.fits for r in s.rows] == [False, False, False, True, True, True]


def test_128k_ring_hop_by_hand():
    s = cs.long_context(8)
    # K/V block: 2 (K and V) × S/C tokens × (8 K/V heads / TP 8) × d 128 × 2 B
    block = 2 * (S128 // 8) * 1 * 128 * 2
    assert s.kv_block_bytes == block == 8_388_608 and s.ring_bytes == 7 * block
    # causal, balanced: half of 4 s_c² (a/t) d FLOPs at the H100's 989.4 TFLOP/s
    assert s.block_compute_s == pytest.approx(4 * (S128 // 8) ** 2 * 8 * 128 / 2 / 989.4e12)
    assert s.hop_s["InfiniBand NDR"] == pytest.approx(block / 50e9)  # one 400 Gb/s NIC per GPU
    assert s.cp_link == "InfiniBand NDR" and s.hidden  # 168 µs < 556 µs
    # hides while s_c ≥ F/B · β/2 · g/a · 2 (causal)
    assert s.threshold_tokens["InfiniBand NDR"] == pytest.approx(989.4e12 / 50e9 * 8 / 64 * 2)


def test_128k_rejects_an_unknown_cp():
    with pytest.raises(ValueError, match="CP=3 is not one of"):
        cs.long_context(3)


# ---------- 8 · an MoE on two nodes ----------
# Mixtral 8x7B (HF config): h 4096, 32 layers, 32 heads / 8 K/V heads of 128, 8 experts of
# f 14336 (SwiGLU: 3 h f each), top-2, V 32000 untied, a router of 8 h per layer.
MIX_EXPERTS = 32 * 8 * 3 * 4096 * 14336
MIX_DENSE = 2 * 32000 * 4096 + 4096 + 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 2 * 4096 + 8 * 4096)


def test_mixtral_counts_by_hand():
    s = cs.moe_two_nodes()
    assert s.total_params == MIX_DENSE + MIX_EXPERTS == 46_702_792_704
    assert s.active_params == MIX_DENSE + MIX_EXPERTS // 4  # top-2 of 8


def test_mixtral_states_per_gpu_vs_ep_by_hand():
    s = cs.moe_two_nodes()
    for row in s.rows:
        ep = row.ep
        dense, expert = MIX_DENSE, MIX_EXPERTS / ep  # TP 1: dense whole; experts ÷ EP
        # bf16 weights + grads on both; Adam: dense ÷ DP 16, experts ÷ EDP = 16 / EP
        want = 4 * (dense + expert) + 12 * (dense / 16 + expert / (16 / ep))
        assert row.states_bytes == pytest.approx(want, rel=1e-12)
    acts = 32 * 2 * 4096 * 4096  # full recompute: each layer's bf16 input, s h
    assert s.activations_bytes == acts
    usable = 0.9 * H100
    assert [r.fits for r in s.rows] == [r.states_bytes + acts <= usable for r in s.rows]
    assert [r.fits for r in s.rows] == [False, False, False, True]  # only EP 8 fits


def test_mixtral_all_to_all_inside_vs_across_by_hand():
    s = cs.moe_two_nodes(8)
    buf = 4096 * 2 * 4096 * 2  # tokens × top-2 × h × 2 B
    ins, acr = s.inside, s.across
    assert ins.buffer_bytes == buf and ins.nic_bytes == 0 and ins.nvlink_bytes == buf * 7 / 8
    # inside: 7 NVLink peers, α 3.4 µs each, at 77% of 450 GB/s
    assert ins.all_to_all_s == pytest.approx(7 * 3.4e-6 + buf * 7 / 8 / (0.77 * 450e9))
    # across, 4 + 4: half the buffer to the 4 peers on the other node, through one NIC per GPU
    # (94% of 50 GB/s), α 14 µs per remote peer; the NVLink leg (3/8) runs at the same time
    assert acr.nic_bytes == buf / 2 and acr.nvlink_bytes == buf * 3 / 8
    assert acr.all_to_all_s == pytest.approx(4 * 14e-6 + buf / 2 / (0.94 * 50e9))
    # dispatch + combine forward; backward and the recomputed forward: 6 per layer
    assert ins.forward_s + ins.backward_s == pytest.approx(6 * ins.all_to_all_s)
    # expert GEMMs: 24 h f k FLOPs per token (forward 6, backward 12, recompute 6) at 70% peak
    assert s.expert_compute_s == pytest.approx(24 * 4096 * 14336 * 2 * 4096 / (0.7 * 989.4e12))
    assert s.overhead(acr) > 3 * s.overhead(ins)


def test_mixtral_ep_1_has_no_all_to_all():
    s = cs.moe_two_nodes(1)
    assert s.inside.all_to_all_s == s.across.all_to_all_s == 0 and not s.row.fits


# ---------- takeaways say only what the numbers back ----------
def test_sizing_takeaway_checks_the_doubled_run():
    """N = 8: the takeaway must not claim 16 GPUs fit. Cross-check with the N = 16 run's own
    full-recompute budget (a second path to the same number): over by used - capacity.
    """
    from core.units import format_bytes
    from figures.scenarios.memory import sizing_text

    s8, s16 = cs.size_70b(8), cs.size_70b(16)
    over = s16.used_bytes("full") - s16.capacity_bytes
    assert over > 0  # the seed's 16 GPUs are just over with the reserve
    text = sizing_text(s8, "decimal").takeaway
    assert "fit with room" not in text
    assert f"ZeRO-3 over 16: does not fit, {format_bytes(over, 'decimal')} over" in text
    spare = s16.capacity_bytes - cs.size_70b(32).used_bytes("full")
    assert f"ZeRO-3 over 32: fits, {format_bytes(spare, 'decimal')} to spare" in (
        sizing_text(s16, "decimal").takeaway
    )


def test_128k_takeaway_when_no_cp_fits():
    """At 1M tokens activations are 8× the 128K ones; CP 32 divides them by 32 and still
    overflows: the words say so, with the amount over, and never print None.
    """
    from figures.scenarios.five_d import long_context_text

    s, base = cs.long_context(8, seq_len=1048576), cs.long_context(8)
    last = s.rows[-1]
    assert last.cp == 32
    assert math.isclose(
        last.activations_bytes, base.rows[0].activations_bytes * 8 / 32, rel_tol=1e-3
    )
    assert s.smallest_fit is None
    over = last.states_bytes + last.activations_bytes + s.reserve_bytes - s.capacity_bytes
    w = long_context_text(s, "decimal")
    from core.units import format_bytes

    for t in (w.takeaway, w.headline, *w.steps):
        assert "None" not in t
    assert "no CP up to 32 fits: at CP 32" in w.takeaway
    assert f"by {format_bytes(over, 'decimal')}" in w.takeaway
    assert f"({format_bytes(over, 'decimal')} over)" in w.headline
    assert len(w.headline) <= 90


def test_sentence_names_the_network_it_runs_on():
    from figures.scenarios.sentence import sentence_figure, sentence_text

    s = cs.sentence(inter="100 GbE")
    w = sentence_text(s, "decimal")
    assert "on 100 GbE" in w.takeaway and "InfiniBand" not in w.takeaway
    assert w.steps[1].startswith("**PP across nodes, because activations tolerate 100 GbE.**")
    fig = sentence_figure(s, "decimal")
    assert fig["layout"]["xaxis2"]["title"]["text"] == "PP tolerates 100 GbE"


@pytest.mark.parametrize("n", [1, 32])
def test_sizing_border_step_only_when_it_is_a_border_case(n):
    """N = 1: 70e9 × 16 B = 1.12 TB of states alone dwarf an 80 GiB card, so no reserve setting
    helps; N = 32: 1.12 TB / 32 = 35 GB of states, the run fits with the reserve.
    """
    from figures.scenarios.memory import sizing_text

    s = cs.size_70b(n)
    step = sizing_text(s, "decimal").steps[-1]
    assert "Borderline" not in step and "%" not in step.split("ZeRO-3")[0].replace("10%", "")
    if n == 1:
        assert 70e9 * 16 > s.capacity_bytes and step.startswith("**Not even close.**")
    else:
        assert 70e9 * 16 / 32 + s.reserve_bytes < s.capacity_bytes
        assert step.startswith("**Room left.**")


def test_moe_ep_1_takeaway_claims_no_all_to_all_cost():
    from figures.scenarios.five_d import moe_text

    w = moe_text(cs.moe_two_nodes(1), "decimal")
    assert "0.0%" not in w.takeaway and "no all-to-all" in w.takeaway
    assert "None" not in " ".join(w.steps)
