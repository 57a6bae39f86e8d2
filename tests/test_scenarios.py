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
H100 = 80e9


def test_hand_counts_match_the_published_sizes():
    assert P70 == 68_976_648_192 and P13 == 13_015_864_320


# ---------- 1 · size a 70B run ----------
def test_70b_model_states_are_16_bytes_per_parameter_and_zero3_divides_them():
    s = cs.size_70b()
    assert s.bytes_per_param == 16 and s.states_bytes == 70e9 * 16 == 1.12e12
    assert s.states_per_gpu_bytes == 70e9 * 16 / 16 == 70 * GB
    assert s.model_params == P70 and s.model_states_per_gpu_bytes == 16 * P70 // 16
    assert cs.size_70b(7).states_per_gpu_bytes == 16 * math.ceil(70e9 / 7)  # a shard holds ⌈Ψ/N⌉


def test_70b_activations_follow_korthikanti_and_only_full_recompute_fits():
    s, sh, L, V = cs.size_70b(), 4096 * 8192, 80, 32000
    edges = (
        5 * sh + 4 * 4096 * V
    )  # embedding-dropout mask sbh; final-norm and head inputs 4sbh; fp32 logits
    assert s.activations_bytes["none"] == pytest.approx(
        34 * sh * L + edges
    )  # 10sbh + 24sbh/t, flash: no s² term
    assert (
        s.activations_bytes["selective"] == s.activations_bytes["none"]
    )  # flash already drops the s² scores
    assert s.activations_bytes["full"] == pytest.approx(
        2 * sh * L + edges
    )  # only each layer's input is kept
    reserve = 0.05 * H100
    assert s.used_bytes("full") == pytest.approx(P70 + 2 * sh * L + edges + reserve)
    assert s.fits("full") and not s.fits("none") and not s.fits("selective")
    assert H100 - s.used_bytes("full") < 1.5 * GB  # "just barely"


def test_70b_recompute_costs_one_more_forward_of_the_layers():
    # FLOPs per token: 6·(matmul params) + 12·L·h·s; full recompute adds a layer forward 2·(layer
    # matmuls) + 4·L·h·s.
    layer = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672
    total = 6 * (80 * layer + 8192 * 32000) + 12 * 80 * 8192 * 4096
    extra = 2 * 80 * layer + 4 * 80 * 8192 * 4096
    assert cs.size_70b().extra_compute["full"] == pytest.approx(extra / total)
    assert cs.size_70b().extra_compute["none"] == 0


# ---------- 2 · DP slower at scale ----------
def test_scale_out_bytes_links_and_step_times_by_hand():
    s = cs.scale_out()
    r, grad = s.run, 1.3e9 * 4
    assert r.small.grad_bytes == grad
    assert r.sim_bytes_sent_per_rank_small == pytest.approx(2 * 7 / 8 * grad)
    assert r.sim_bytes_sent_per_rank_large == pytest.approx(2 * 63 / 64 * grad)
    assert r.small.bottleneck_bytes_per_s == 300e9 and r.large.bottleneck_bytes_per_s == 12.5e9
    compute = 6 * 1.3e9 * 2048 / (312e12 * 0.4)
    # α-β ring: 2(p−1) steps; NCCL's tuner charges the network α only on the 2(nodes−1) inter-node
    # steps.
    small = 14 * 3.4e-6 + 2 * 7 / 8 * grad / 300e9
    large = 14 * 14e-6 + (126 - 14) * 3.4e-6 + 2 * 63 / 64 * grad / 12.5e9
    assert r.small.step_s == pytest.approx(compute + small)
    assert r.large.step_s == pytest.approx(compute + large)
    assert r.step_ratio == pytest.approx((compute + large) / (compute + small))


def test_scale_out_fixes_honest_verdicts():
    s = cs.scale_out()
    gain = {e.label.split(" (")[0].split(" ×")[0]: e.tokens_per_s_gain for e in s.effects}
    grad, compute = 1.3e9 * 4, 6 * 1.3e9 * 2048 / (312e12 * 0.4)
    base = compute + 14 * 14e-6 + 112 * 3.4e-6 + 2 * 63 / 64 * grad / 12.5e9
    assert (
        gain["bucketing"] < 1
    )  # overlap can hide at most the 85 ms backward of a ~0.9 s all-reduce
    # Hierarchical: intra-node RS + AG on NVLink, an inter-node ring of S/8 per GPU sharing one NIC
    # per node.
    hier = (
        2 * (7 * 3.4e-6 + 7 / 8 * grad / 300e9) + 14 * 14e-6 + 2 * 7 / 8 * (grad / 8) / (12.5e9 / 8)
    )
    assert gain["hierarchical all-reduce"] == pytest.approx(base / (compute + hier))
    big = 8 * compute + 14 * 14e-6 + 112 * 3.4e-6 + 2 * 63 / 64 * grad / 12.5e9
    assert gain["per-GPU batch"] == pytest.approx(8 * base / big)  # 8× the tokens per step
    nics = compute + 14 * 14e-6 + 112 * 3.4e-6 + 2 * 63 / 64 * grad / 100e9
    assert gain["8× 100 GbE per node"] == pytest.approx(base / nics)
    assert all(e.hidden_s == 0 for e in s.effects if "NIC" in e.label)


def test_scale_out_links_preload_the_same_job():
    q = dict(cs.scale_out().links[0].params)
    assert q == dict(
        size="1.3B",
        kt="2",
        gpu="A100 80GB",
        gpn="8",
        nic="100 GbE",
        ar="flat ring",
        ovl="false",
        at="64",
        nics="1",
    )
    assert dict(cs.scale_out(128).links[1].params)["at"] == "128"


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
    # Exposed TP = M micro-batches × all-reduces, each 2(t−1)α + 2(t−1)/t·M/(B·efficiency).
    nvl = 14 * 3.4e-6 + 2 * 7 / 8 * msg / (450e9 * 0.77)
    ib = 14 * 14e-6 + 2 * 7 / 8 * msg / (50e9 * 0.94)
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
    acts = 34 * sh * 40 + 5 * sh + 4 * 4096 * 32000
    assert s.num_params == P13
    assert s.ddp.total_bytes == pytest.approx(16 * P13 + acts)
    assert s.fsdp.total_bytes == pytest.approx(16 * math.ceil(P13 / 8) + acts)
    assert not s.fits(s.ddp) and s.fits(s.fsdp)
    assert not any(cs.ddp_vs_fsdp(n).fits(cs.ddp_vs_fsdp(n).ddp) for n in (2, 64))  # DDP never fits
    assert not cs.ddp_vs_fsdp(4).fits(cs.ddp_vs_fsdp(4).fsdp)  # 16Ψ/4 = 52 GB + 29 GB > 76 GB


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
    nvl = 14 * 3.4e-6 + 2 * 7 / 8 * msg / (450e9 * 0.77)
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
