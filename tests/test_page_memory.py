"""AppTest for the memory page: deep links reproduce the seeds' sizing numbers, rules show, units
switch.
"""

import json
import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.common import SETTINGS_KEY, Settings
from core.units import ByteSystem
from tests.charts import charts
from tests.registry import ROOT

GB, GIB = 1e9, 2**30
# Parameter counts by hand from the Hugging Face configs (Llama: 2h^2(1 + g/a) + 3hf + 2h per layer,
# + h final norm + 2Vh untied embeddings); the published 6.74B / 13.0B / 69.0B.
P7 = 32 * (2 * 4096**2 * 2 + 3 * 4096 * 11008 + 2 * 4096) + 4096 + 2 * 32000 * 4096
P13 = 40 * (2 * 5120**2 * 2 + 3 * 5120 * 13824 + 2 * 5120) + 5120 + 2 * 32000 * 5120
P70 = (
    80 * (2 * 8192**2 + 2 * 8192**2 * 8 // 64 + 3 * 8192 * 28672 + 2 * 8192)
    + 8192
    + 2 * 32000 * 8192
)


def run(params: dict | None = None, units: str = "decimal") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "memory.py"), default_timeout=60)
    # the sidebar's global choice (common.sidebar_settings sets it under app.py)
    at.session_state[SETTINGS_KEY] = Settings(memory_units=ByteSystem(units))
    for k, v in (params or {}).items():
        at.query_params[k] = str(v)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label.split(",")[0]: m.value for m in at.metric}


def specs(at: AppTest) -> list[dict]:
    return [json.loads(c.spec) for c in charts(at)]


def trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t["name"] == name)


def verdicts(spec: dict) -> list[str]:
    return [a["text"].split(" · ")[0] for a in spec["layout"]["annotations"][:4]]


def seed_links(at: AppTest) -> list[dict]:
    """The query of every 'Open this setting' link in the sizing questions, as the browser would
    read
    it.
    """
    hrefs = [h for md in at.markdown for h in re.findall(r"\]\((memory\?[^)]+)\)", md.value)]
    return [dict(parse_qsl(urlsplit(h).query)) for h in hrefs]


def test_defaults_render_charts_and_a_verdict():
    at = run()
    assert not at.error
    m = metrics(at)
    assert m["Verdict"] == "fits"
    # 13B, ZeRO-3 over 8: 16 x P13 / 8 = 2 P13 bytes of states = 26.0 GB.
    assert m["States / GPU"] == f"{2 * P13 / GB:.3g} GB" == "26 GB"
    bars = specs(at)[0]
    assert trace(bars, "Parameters")["x"] == ["DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3"]
    assert verdicts(bars)[0] == "OOM" and verdicts(bars)[3] == "fits"


def test_seed_links_are_relative_and_three():
    links = seed_links(run())
    assert len(links) == 3
    assert links[1] == {
        "model": "Llama-2 70B",
        "dp": "16",
        "zero": "3",
        "rc": "full",
    }  # GB: default


def test_seed_70b_needs_about_1_1_tb_of_model_states():
    at = run(seed_links(run())[0])
    # 70e9 params x 16 B = 1.12e12 B; under DDP on one GPU the bar is all of it.
    assert metrics(at)["Whole model"] == "1.12 TB"
    bars = specs(at)[0]
    ddp = sum(trace(bars, n)["y"][0] for n in ("Parameters", "Gradients", "Optimizer states"))
    assert ddp == pytest.approx(70e9 * 16 / GB)
    text = " ".join(md.value for md in at.markdown)
    assert f"{P70:,} parameters × 16 B = **{16 * P70 / 1e12:.3g} TB" in text  # Llama-2 70B: 1.1 TB


def test_seed_zero3_over_16_gpus_is_borderline_for_70b():
    link = seed_links(run())[1]
    at = run(link)
    m = metrics(at)
    assert m["States / GPU"] == f"{16 * P70 / 16 / GB:.3g} GB" == "69 GB"
    # Full recompute keeps each layer's 2sbh input; + final norm and head inputs 4sbh, fp32 logits
    # 4sbV (Korthikanti et al. 2022); a Llama block has no embedding dropout mask.
    s, h, v = 4096, 8192, 32000
    acts = 80 * 2 * s * h + 4 * s * h + 4 * s * v
    assert m["Activations / GPU"] == f"{acts / GB:.3g} GB"
    # FULL_SHARD's gathered + prefetched layer and its gradients: 6 B x one layer's parameters.
    gathered = 6 * (2 * 8192**2 + 2 * 8192**2 * 8 // 64 + 3 * 8192 * 28672 + 2 * 8192)
    hbm = 81_559 * 2**20  # an "80 GB" H100 as nvidia-smi reports it: 85.5 GB
    used = 16 * P70 / 16 + acts + gathered + 0.10 * hbm  # the app's one 10 % reserve
    assert hbm < used < hbm + 3.5 * GB  # over by 3.2 GB: OOM, but only just
    assert m["Verdict"] == "OOM"
    assert m["ZeRO-3"] == f"{used / GB:.3g} GB"
    at5 = run(link | {"reserve": 5})  # a 5 % reserve (4.3 GB) leaves 1.1 GB to spare
    assert metrics(at5)["Verdict"] == "fits"
    text = " ".join(md.value for md in at.markdown)
    assert "**Borderline**" in text and "reserve under 6.3% of the card" in text


def test_seed_13b_oom_under_ddp_fits_under_full_shard_and_shows_the_gather():
    at = run(seed_links(run())[2])
    bars = specs(at)[0]
    states = [
        sum(trace(bars, n)["y"][i] for n in ("Parameters", "Gradients", "Optimizer states"))
        for i in range(4)
    ]
    assert states[0] == pytest.approx(16 * P13 / GB) and states[0] > 80
    assert states[3] == pytest.approx(16 * P13 / 8 / GB)
    assert verdicts(bars)[0] == "OOM" and verdicts(bars)[3] == "fits"
    # FULL_SHARD all-gathers one layer's bf16 weights before its forward and its backward.
    layer = 2 * (2 * 5120**2 * 2 + 3 * 5120 * 13824 + 2 * 5120)
    text = " ".join(md.value for md in at.markdown)
    assert f"weights ({layer / 1e6:.3g} MB)" in text


def test_units_switch_changes_every_number():
    dec, binr = run(units="decimal"), run(units="binary")
    assert metrics(dec)["Whole model"] == f"{16 * P13 / GB:.3g} GB" == "208 GB"
    assert metrics(binr)["Whole model"] == f"{16 * P13 / GIB:.3g} GiB" == "194 GiB"
    assert "(GB)" in specs(dec)[0]["layout"]["yaxis"]["title"]["text"]
    assert "(GiB)" in specs(binr)[0]["layout"]["yaxis"]["title"]["text"]
    assert trace(specs(binr)[0], "Parameters")["y"][0] == pytest.approx(2 * P13 / GIB)
    assert "mem=GB" not in " ".join(md.value for md in binr.markdown)


def test_tp_not_dividing_heads_names_the_rule():
    at = run({"model": "Llama-2 7B", "tp": 3})
    (err,) = at.error
    assert "TP=3 does not divide 32 attention heads" in err.value
    assert "use TP in {1, 2, 4, 8, 16, 32}" in err.value
    assert not charts(at)


def test_pp_not_dividing_layers_names_the_rule():
    at = run({"model": "Llama-2 13B", "pp": 3})
    assert "PP=3 does not divide 40 layers" in at.error[0].value


def test_micro_batch_zero_in_url_falls_back_with_a_notice():
    at = run({"mb": 0})
    assert "`mb=0` was ignored" in " ".join(w.value for w in at.warning)
    assert specs(at)


def test_custom_shape_with_bad_heads_names_the_rule():
    at = run({"model": "custom shape", "h": 4100, "a": 32, "kv": 32})
    assert "hidden_size=4100 is not divisible by num_heads=32" in at.error[0].value


def test_pipeline_stages_first_holds_most_activations():
    at = run({"model": "Llama-2 7B", "pp": 4, "dp": 2})
    stages = specs(at)[1]
    acts = trace(stages, "Activations")["y"]
    assert trace(stages, "Activations")["x"] == ["stage 0", "stage 1", "stage 2", "stage 3"]
    # 1F1B: 4, 3, 2, 1 micro-batches of 8 layers in flight; the last adds the logits.
    assert acts[0] > acts[1] > acts[2]
    assert acts[0] / acts[1] == pytest.approx(4 / 3, rel=0.01)


def test_hybrid_shard_shards_within_a_node():
    at = run({"model": "Llama-2 7B", "dp": 32, "zero": "HSDP"})
    bars = specs(at)[0]
    assert trace(bars, "Parameters")["y"][3] == pytest.approx(
        2 * P7 / 8 / GB, rel=1e-6
    )  # shard over 8, not 32


def test_params_only_has_no_activations_or_recompute_chart():
    at = run({"model": "N parameters", "n": 13})
    assert metrics(at)["Activations / GPU"] == "0 B"
    assert len(specs(at)) == 1


def test_self_check_accepts_the_independent_answer():
    at = run(units="binary")
    at.number_input(key="q").set_value(round(P7 * (2 + 14 / 8) / GIB, 2)).run()
    assert any("Correct" in s.value for s in at.success)


# --- Layout A vs layout B (cmp=true)
# ---------------------------------------------------------------
def b_keys(at: AppTest) -> set[str]:
    return {
        w.key
        for kind in ("slider", "radio", "toggle", "selectbox")
        for w in getattr(at, kind)
        if w.key and w.key.startswith("b_")
    }


def test_compare_off_by_default_shows_no_layout_b():
    at = run()
    assert b_keys(at) == set()
    assert not any(k.startswith("B ") for k in metrics(at))
    assert len(specs(at)) == 2  # the ZeRO stages and the recompute trade, no A-vs-B chart


def test_compare_defaults_zero1_states_by_hand_and_the_oom():
    at = run({"cmp": "true"}, units="binary")
    assert not at.error
    assert b_keys(at) == {"b_dp", "b_tp", "b_pp", "b_zero", "b_mb", "b_rc", "b_sp", "b_cp"}
    m = metrics(at)
    # ZeRO-1 at DP 8, 16 B/param mixed Adam: 2Ψ weights + 2Ψ grads + 12Ψ/8 optimizer = 5.5Ψ bytes.
    assert (
        m["B states / GPU"] == f"{(2 * P13 + 2 * P13 + 12 * P13 / 8) / GIB:.3g} GiB" == "66.7 GiB"
    )
    assert m["States / GPU"] == f"{2 * P13 / GIB:.3g} GiB"  # A unchanged: ZeRO-3, 16Ψ/8
    assert m["B GPUs"] == "8"
    chart = next(s for s in specs(at) if "Layout A vs layout B" in s["layout"]["title"]["text"])
    assert trace(chart, "Parameters")["x"] == [
        "A: DP 8 · TP 1 · PP 1 · ZeRO-3 · mb 1",
        "B: DP 8 · TP 1 · PP 1 · ZeRO-1 · mb 1",
    ]
    assert trace(chart, "Optimizer states")["y"] == pytest.approx([12 * P13 / 8 / GIB] * 2)
    # 5.5Ψ = 71.6 GB of states + 29.2 GB of activations + the 4 GB reserve > 80 GB: B is OOM, A
    # fits.
    assert verdicts(chart)[:2] == ["fits", "OOM"]
    text = " ".join(md.value for md in at.markdown)
    assert "**B** (DP 8 · TP 1 · PP 1 · ZeRO-1 · mb 1) **does not fit (OOM)**" in text


def test_compare_deep_link_tp2_dp4_zero1():
    at = run({"cmp": "true", "b_dp": 4, "b_tp": 2, "b_zero": 1})
    # One TP rank of Llama-2 13B (Megatron: attention 4h²/2, MLP 3hf/2, norms 2h replicated,
    # vocab-parallel
    # embedding and head Vh/2 each, final norm h); ZeRO-1 over 4: 2Ψ' + 2Ψ' + 12Ψ'/4 = 7Ψ'.
    h, f, v = 5120, 13824, 32000
    psi = 40 * (4 * h * h // 2 + 3 * h * f // 2 + 2 * h) + h + 2 * v * h // 2
    m = metrics(at)
    assert m["B states / GPU"] == f"{7 * psi / GB:.3g} GB" == "45.6 GB"
    assert m["B GPUs"] == "8"
    assert at.slider(key="b_tp").value == 2 and at.radio(key="b_zero").value == "1"
    assert "**B** (DP 4 · TP 2 · PP 1 · ZeRO-1 · mb 1) fits" in " ".join(
        md.value for md in at.markdown
    )


def test_compare_invalid_b_shows_the_rule_while_a_renders():
    at = run({"cmp": "true", "b_tp": 3})
    (err,) = at.error
    assert "Layout B" in err.value and "TP=3 does not divide 40 attention heads" in err.value
    # A's chart still there, its ZeRO-3 bar selected
    assert (
        specs(at)[0]["layout"]["title"]["text"] == "Memory per GPU by ZeRO stage · ZeRO-3 selected"
    )
    assert not any("Layout A vs layout B" in s["layout"]["title"]["text"] for s in specs(at))
    assert metrics(at)["Verdict"] == "fits" and "B states / GPU" not in metrics(at)


def test_compare_b_shares_a_model_and_recipe():
    at = run(
        {"cmp": "true", "model": "Llama-2 7B", "recipe": "16 B fp32 Adam", "b_zero": 0, "b_dp": 2}
    )
    # DDP keeps all 16 B/param (4 + 4 + 8, fp32 Adam) of Llama-2 7B on every GPU, whatever the DP
    # degree.
    assert metrics(at)["B states / GPU"] == f"{16 * P7 / GB:.3g} GB"
    assert metrics(at)["B GPUs"] == "2" and "-6 vs A" in [m.proto.delta for m in at.metric]


def test_compare_suggestion_link_keeps_layout_a():
    at = run({"cmp": "true", "model": "Llama-2 7B", "dp": "16"})
    link = next(c.value for c in at.caption if "Try B = TP 2 × DP 4" in c.value)
    target = link.split("](memory?", 1)[1].split(")", 1)[0]
    assert "model=Llama-2%207B" in target and "dp=16" in target  # A as it is now
    assert "b_tp=2" in target and "b_dp=4" in target and "cmp=true" in target


def test_changing_the_zero_stage_changes_the_main_chart():
    """The radio is not dead: the selected stage is drawn solid and outlined, the others faded."""
    at0, at3 = run({"zero": 0}), run({"zero": 3})
    b0, b3 = specs(at0)[0], specs(at3)[0]
    assert b0 != b3
    assert trace(b0, "Parameters")["marker"]["opacity"] == [1.0, 0.45, 0.45, 0.45]
    assert trace(b3, "Parameters")["marker"]["opacity"] == [0.45, 0.45, 0.45, 1.0]
    assert b3["layout"]["title"]["text"].endswith("ZeRO-3 selected")


def test_savings_are_written_between_the_bars():
    # Llama-2 13B at DP 8: ZeRO-1 shards the 12 B/param optimizer, 12Ψ(1 − 1/8) by hand.
    bars = specs(run())[0]
    notes = [
        a
        for a in bars["layout"]["annotations"]
        if "saves" in a["text"] and "N = 1" not in a["text"]
    ]
    assert [n["x"] for n in notes] == [0.5, 1.5, 2.5]  # halfway between neighbouring bars
    assert "12Ψ(1−1/N)" in notes[0]["text"]
    assert f"saves {12 * P13 * 7 / 8 / GB:.3g} GB" in notes[0]["text"]
    assert f"saves {2 * P13 * 7 / 8 / GB:.3g} GB" in notes[1]["text"]  # gradients, 2Ψ(1 − 1/8)
    assert "− gathered" in notes[2]["text"]  # ZeRO-3 pays its gathered layers back
    one = specs(run({"dp": 1}))[0]  # one DP rank: nothing to shard, and the chart says why
    assert sum("N = 1" in a["text"] for a in one["layout"]["annotations"]) == 3


def test_pp_does_not_cut_the_first_stages_activations():
    """Issue 13 item 3: 1F1B's first stage holds PP micro-batches × L/PP layers = L layers."""
    at = run({"pp": 4, "dp": 2})  # Llama-2 13B, 40 layers, 4 micro-batches per pipeline
    text = " ".join(md.value for md in at.markdown)
    # Per token of a Llama-2 13B layer: 16h + 6f bytes (flash attention), s = 4096, b = 1.
    layer = 4096 * (16 * 5120 + 6 * 13824)
    assert "stage 0 holds 40 layers' worth" in text  # 4 micro-batches × 10 layers
    assert f"**{40 * layer / GB:.3g} GB**" in text  # the same as PP = 1 (no embedding mask)
    assert "stage 3 holds 10" in text  # 1 micro-batch × 10 layers
    assert "= 55 layers' worth on stage 0" in text  # 40 (1 + 3/8), interleaved v = 2
    take = next(s.value for s in at.success if "Sharding cuts" in s.value)
    assert "PP does not cut them on the first stage" in take
    # PP 1 holds the same 40 layers plus the head's 4sbh + fp32 logits 4sbV, which PP 4 moves to
    # its last stage: PP saved only those.
    one = metrics(run({"dp": 2}))["Activations / GPU"]
    assert one == f"{(40 * layer + 4 * 4096 * 5120 + 4 * 4096 * 32000) / GB:.3g} GB"
    assert metrics(at)["Activations / GPU"] == f"{40 * layer / GB:.3g} GB"


def test_savings_notes_stay_clear_of_the_capacity_line():
    bars = specs(run(seed_links(run())[1]))[0]  # 70B: the smaller bars sit near the 85.5 GB line
    cap = bars["layout"]["shapes"][0]["y0"]
    assert cap == pytest.approx(81_559 * 2**20 / GB)
    top = max(a["y"] for a in bars["layout"]["annotations"] if "·" in a["text"])
    for note in (a for a in bars["layout"]["annotations"] if "saves" in a["text"]):
        on_line = note["y"] == cap and note["yanchor"] in ("top", "bottom")  # moved off, shifted
        assert on_line or abs(note["y"] - cap) >= 0.1 * top, note
        if on_line:
            assert note["yshift"] == (4 if note["yanchor"] == "bottom" else -4)


# --- CP, EP and the MoE presets (issue 17, "Everywhere else") ---


def slider_by_key(at: AppTest, key: str):
    return next(s for s in at.slider if s.key == key)


def test_moe_presets_are_in_the_model_list():
    at = run()
    model = next(s for s in at.selectbox if s.key == "model")
    assert {"Mixtral 8x7B", "DeepSeek-V3", "Qwen3-30B-A3B", "Qwen3-235B-A22B"} <= set(model.options)


def test_ep_is_disabled_with_its_reason_for_a_dense_model():
    ep = slider_by_key(run(), "ep")
    assert ep.disabled and "no experts" in ep.help


def test_mixtral_with_ep_8_states_by_hand():
    # Mixtral 8x7B (HF config: h 4096, 32 layers, 32 q / 8 kv heads × 128, 8 experts of FFN 14336,
    # V 32000, untied): routed experts 8 × 32 × 3·4096·14336 = 45,097,156,608; the rest
    # (attention 32 × (2·4096² + 2·4096·1024) = 1,342,177,280, norms 32 × 2 × 4096 + 4096,
    # routers 32 × 8 × 4096, embedding + head 2 × 32000 × 4096) = 1,605,636,096 → 46.7B total.
    # DP 8, EP 8, ZeRO-3 (16 B/param): dense over 8 ranks, experts ÷ 8 then over EDP = 1.
    dense, experts = 1_605_636_096, 45_097_156_608
    at = run({"model": "Mixtral 8x7B", "dp": 8, "ep": 8, "zero": 3})
    assert not at.error and not slider_by_key(at, "ep").disabled
    states = 16 * (dense // 8 + experts // 8)
    assert metrics(at)["States / GPU"] == f"{states / GB:.3g} GB"
    assert dense + experts == 46_702_792_704  # the 46.7B Jiang et al. 2024 publish
    assert "46.7B parameters (12.9B active per token" in " ".join(c.value for c in at.caption)


def test_mixtral_traffic_counts_the_experts_over_their_own_group():
    # DP 16, EP 8: the dense 1,605,636,096 parameters (test above) shard over 16 ranks, the
    # routed experts' 45,097,156,608 / 8 = 5,637,144,576 per GPU over EDP = 16 / 8 = 2. A ring
    # sends (n-1)/n of each bf16 tensor: 1,505,283,840 + 2,818,572,288 = 4,323,856,128 elements;
    # DDP all-reduces the gradients (2×), ZeRO-3 reduce-scatters them and gathers weights twice
    # (3×), 2 bytes each.
    elements = 1_605_636_096 * 15 // 16 + 5_637_144_576 // 2
    assert elements == 4_323_856_128
    at = run({"model": "Mixtral 8x7B", "dp": 16, "ep": 8, "zero": 3})
    text = " ".join(m.value for m in at.markdown)
    assert f"DDP all-reduces gradients, {2 * 2 * elements / GB:.3g} GB" in text
    assert f"sends {3 * 2 * elements / GB:.3g} GB = 1.5× DDP" in text
    # The largest layer gathered whole: attention 2·4096² + 2·4096·1024 = 41,943,040, two norms
    # 8,192, router 8 × 4096 = 32,768, and 8 / EP 8 = one expert of 3·4096·14336 = 176,160,768.
    layer = 41_943_040 + 8_192 + 32_768 + 176_160_768
    assert f"all-gathering each layer's weights ({2 * layer / 1e6:.0f} MB)" in text


def test_ep_not_dividing_the_experts_names_the_rule():
    at = run({"model": "Mixtral 8x7B", "dp": 6, "ep": 3})
    assert any("EP=3 does not divide 8 experts" in e.value for e in at.error)
    assert not at.exception


def test_cp_halves_the_activations_and_counts_its_gpus():
    # Llama-2 13B (no dropout), TP 1, no recompute, flash: stored bytes per token and layer
    # 8h + 4q + 4kv + 6f = 8·5120 + 8·5120 + 6·13824 = 164,864; 40 layers; the head's 4sbh + fp32
    # logits 4sbV on top. CP 2 of 4096 tokens leaves 2048 per rank.
    s, h, v = 2048, 5120, 32000
    acts = 40 * 164_864 * s + 4 * s * h + 4 * s * v
    at = run({"cp": 2, "dp": 4})
    assert metrics(at)["Activations / GPU"] == f"{acts / GB:.3g} GB"
    assert "8 GPUs = DP 4 × TP 1 × PP 1 × CP 2" in " ".join(c.value for c in at.caption)


def test_cp_not_dividing_the_sequence_names_the_rule():
    at = run({"cp": 3})
    assert any("does not split into 2·CP = 6 chunks" in e.value for e in at.error)


def test_draw_this_step_link_states_its_cluster_and_batch():
    at = run({"dp": 4, "tp": 2, "pp": 2})
    text = " ".join(md.value for md in at.markdown)
    link = re.search(r"\]\((training_step\?[^)]+)\)", text)
    q = dict(parse_qsl(urlsplit(link.group(1)).query))
    # 16 GPUs → 2 nodes of 8; global batch = DP 4 × micro-batch 1 × PP 2 micro-batches = 8
    assert (q["nodes"], q["gpn"], q["dp"], q["tp"], q["pp"], q["gb"]) == (
        "2",
        "8",
        "4",
        "2",
        "2",
        "8",
    )
    assert "⌈16 / 8⌉ nodes" in text and "= 8 sequences" in text


def test_run_controls_fold_into_one_summarising_expander():
    at = run({"model": "Mixtral 8x7B", "seq": 8192})
    label = at.expander[0].label
    assert "Mixtral 8x7B" in label and "8,192 tokens" in label


# --- Issue 18: layout B's controls rerun only the compare fragment (tests/fragments.py) ---


@pytest.fixture(scope="module")
def app():
    from tests.fragments import shared_app

    return shared_app()  # one spied server for the whole test session


def test_layout_b_reruns_only_the_compare_fragment(app):
    page, main, cmp = (
        "app_pages.common:start_page",
        "figures.memory:zero_stages_figure",  # the main chart's builder (inside compute)
        "figures.memory:compare_layouts",  # layout B's chart (inside compare)
    )
    tab = app.open("memory", query_string="cmp=true")
    assert tab.widgets["b_dp"][1] and tab.widgets["cmp"][1], "B's controls sit in a fragment"
    main_id, b_id = tab.widgets["dp"][1], tab.widgets["b_dp"][1]
    assert main_id and main_id != b_id  # A's layout feeds every section: the outer fragment
    with app.counting() as calls:
        tab.move("b_dp", 4)
    assert tab.fragment_run and not tab.exceptions
    assert calls[page] == 0 and calls[main] == 0 and calls[cmp] == 1
    assert tab.charts == ["cmp_bars"]  # the main chart is not re-sent
    assert "b_dp" in tab.url_bound  # still bound to ?b_dp= inside the fragment


def test_layout_a_reruns_the_sections_it_feeds_not_the_page(app):
    tab = app.open("memory")
    with app.counting() as calls:
        tab.move("dp", 16)
    assert tab.fragment_run and not tab.exceptions
    assert calls["app_pages.common:start_page"] == 0  # title, sidebar, walk: not re-sent
    assert calls["figures.memory:sizing_questions"] == 0  # nor the sizing questions
    assert calls["figures.memory:zero_stages_figure"] == 1  # the bars follow DP
    assert "bars" in tab.charts and "dp" in tab.url_bound
    # the takeaway, in the tail's slot, is rewritten from the fragment
    assert sum(t.startswith("**Takeaway.**") for t in tab.texts) == 1
