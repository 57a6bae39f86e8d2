"""Figure specs: stacked bars carry the core's bytes, the verdicts, formulas and units."""

import plotly.graph_objects as go
import pytest

from core.memory import (
    memory_by_zero_stage,
    memory_per_gpu,
    recompute_tradeoff,
    zero_comm_bytes_per_gpu,
)
from core.model import ParamsOnly, preset
from core.parallel import Layout
from core.training import Training
from figures.memory import pipeline_stages_figure, recompute_tradeoff_figure, zero_stages_figure

GB = 1e9


def _13b_at_dp8():
    return memory_by_zero_stage(
        ParamsOnly(num_params=13 * 10**9), Layout(dp=8), Training(global_batch=8)
    )


def _trace(fig, name):
    return next(t for t in fig["data"] if t["name"] == name)


def test_zero_stages_figure_13b_on_80gb():
    results = _13b_at_dp8()
    fig = zero_stages_figure(
        results, 80 * GB, reserve_bytes=2 * GB, units="decimal", capacity_label="H100"
    )
    go.Figure(fig)  # a valid Plotly spec
    assert fig["layout"]["barmode"] == "stack"
    assert _trace(fig, "Parameters")["x"] == ["DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3"]
    # By hand, GB: params 26, 26, 26, 3.25; grads 26, 26, 3.25, 3.25; optimizer 156, 19.5, 19.5,
    # 19.5.
    assert _trace(fig, "Parameters")["y"] == pytest.approx([26, 26, 26, 3.25])
    assert _trace(fig, "Gradients")["y"] == pytest.approx([26, 26, 3.25, 3.25])
    assert _trace(fig, "Optimizer states")["y"] == pytest.approx([156, 19.5, 19.5, 19.5])
    assert _trace(fig, "Reserve")["y"] == pytest.approx([2] * 4)
    verdicts = [a["text"].split(" · ")[0] for a in fig["layout"]["annotations"][:4]]
    assert verdicts == ["OOM", "fits", "fits", "fits"]  # 208 + 2, 71.5 + 2, 48.75 + 2, 26 + 2 GB
    line = fig["layout"]["shapes"][0]
    assert line["y0"] == line["y1"] == 80
    assert fig["layout"]["annotations"][-1]["text"] == "H100<br>80 GB"


def test_zero1_verdict_by_hand():
    # ZeRO-1 at dp = 8: 26 + 26 + 19.5 = 71.5 GB: OOM with a 9 GB reserve (80.5), fits with 8
    # (79.5).
    results = _13b_at_dp8()
    fig = zero_stages_figure(results, 80 * GB, reserve_bytes=9 * GB, units="decimal")
    verdicts = [a["text"].split(" · ")[0] for a in fig["layout"]["annotations"][:4]]
    assert verdicts == ["OOM", "OOM", "fits", "fits"]  # ZeRO-2: 48.75 + 9 fits
    fig = zero_stages_figure(results, 80 * GB, reserve_bytes=8 * GB, units="decimal")
    verdicts = [a["text"].split(" · ")[0] for a in fig["layout"]["annotations"][:4]]
    assert verdicts == ["OOM", "fits", "fits", "fits"]


def test_hover_shows_formula_and_exact_bytes():
    results = _13b_at_dp8()
    fig = zero_stages_figure(results, 80 * GB, units="binary")
    params = _trace(fig, "Parameters")["customdata"]
    assert "2 B/param × Ψ = 2 × 13,000,000,000 (not sharded)" in params[0]
    assert "26,000,000,000 B (24.2 GiB)" in params[0]
    assert "⌈13,000,000,000 / 8⌉" in params[3] and "3,250,000,000 B" in params[3]
    opt = _trace(fig, "Optimizer states")["customdata"]
    assert "12 B/param × ⌈Ψ / N_d⌉" in opt[1] and "12 B/param × Ψ" in opt[0]


def test_units_switch_scales_the_axis():
    results = memory_by_zero_stage(
        ParamsOnly(num_params=10**9), Layout(dp=4), Training(global_batch=4)
    )
    dec = zero_stages_figure(results, 80 * GB, units="decimal")
    binr = zero_stages_figure(results, 80 * GB, units="binary")
    assert "(GB)" in dec["layout"]["yaxis"]["title"]["text"]
    assert "(GiB)" in binr["layout"]["yaxis"]["title"]["text"]
    assert _trace(dec, "Optimizer states")["y"][0] == pytest.approx(12.0)
    assert _trace(binr, "Optimizer states")["y"][0] == pytest.approx(12e9 / 2**30)
    assert binr["layout"]["shapes"][0]["y0"] == pytest.approx(80e9 / 2**30)
    with pytest.raises(ValueError, match="unknown byte system"):
        zero_stages_figure(results, 80 * GB, units="furlongs")


def test_pipeline_stages_figure():
    m = preset("Llama-2 7B")
    r = memory_per_gpu(
        m,
        Layout(dp=1, pp=4, tp=2, sequence_parallel=True),
        Training(global_batch=8, seq_len=4096, flash_attention=False),
    )
    fig = pipeline_stages_figure(r, 80 * GB, units="decimal")
    go.Figure(fig)
    acts = _trace(fig, "Activations")
    assert acts["x"] == ["stage 0", "stage 1", "stage 2", "stage 3"]
    assert acts["y"] == pytest.approx([s.activations_bytes / GB for s in r.stages])
    assert acts["y"][0] > acts["y"][1] > acts["y"][2]  # 1F1B: 4, 3, 2 micro-batches in flight
    assert "layers in flight" in acts["customdata"][0]
    assert "PP=4" in fig["layout"]["title"]["text"]
    assert "Reserve" not in [t["name"] for t in fig["data"]]


def test_recompute_tradeoff_figure():
    m = preset("GPT-3 175B")
    opts = recompute_tradeoff(
        m,
        Layout(dp=1, tp=8, pp=8, sequence_parallel=True),
        Training(global_batch=8, flash_attention=False),
    )
    fig = recompute_tradeoff_figure(opts, units="binary")
    go.Figure(fig)
    mem, flops = fig["data"]
    assert mem["x"] == flops["x"] == ["No recompute", "Selective", "Full"]
    assert mem["y"] == pytest.approx([o.activations_bytes / 2**30 for o in opts])
    assert flops["y"][0] == 0 and flops["y"][2] == pytest.approx(100 / 3, abs=0.5)
    assert flops["xaxis"] == "x2" and flops["yaxis"] == "y2"
    assert "saved vs none" in mem["customdata"][1]


def test_fits_rows_and_formula_text():
    from core.memory import FitRow
    from figures.memory import activation_formula, fits_rows, how_computed_markdown

    rows = fits_rows(
        [
            FitRow(zero_stage=0, min_dp=None, min_gpus=None, max_micro_batch=0),
            FitRow(zero_stage=3, min_dp=5, min_gpus=40, max_micro_batch=4096),
        ],
        dp=8,
        tp=4,
        pp=2,
    )
    assert rows[0]["fewest GPUs that fit"] == "none (DP does not help)"
    assert rows[0]["largest micro-batch at DP=8"] == "none: 1 does not fit"
    assert rows[1]["fewest GPUs that fit"] == "40 = DP 5 × TP 4 × PP 2"
    assert (
        rows[1]["largest micro-batch at DP=8"] == "≥ 4,096" and rows[1]["PyTorch"] == "FULL_SHARD"
    )
    # Korthikanti Table 2 rows.
    assert (
        activation_formula("none", False, False)
        == r"sbh\left(10 + \frac{24}{t} + \frac{5as}{ht}\right)"
    )
    assert activation_formula("selective", False, True) == r"sbh\left(\frac{34}{t}\right)"
    assert activation_formula("none", True, False) == r"sbh\left(10 + \frac{24}{t}\right)"
    assert activation_formula("full", False, False) == r"2\,sbh"
    results = _13b_at_dp8()
    comm = (zero_comm_bytes_per_gpu(13 * 10**9, 8, 0), zero_comm_bytes_per_gpu(13 * 10**9, 8, 3))
    text = how_computed_markdown(results, results[3], comm, None, "ZeRO-3", units="decimal")
    # By hand: ZeRO-2 = 2 Psi + 14 Psi / 8 = 48.75e9 B; traffic 1.5x DDP.
    assert "| ZeRO-2 | SHARD_GRAD_OP | 2 Ψ + 14 Ψ / N_d | 13,000,000,000 | 48,750,000,000 B" in text
    assert "= 1.5× DDP" in text and "Activations" not in text  # a bare parameter count


def test_how_computed_keeps_the_katex_formula_in_a_block_dp_does_not_touch():
    from figures.memory import how_computed_blocks

    m = preset("Llama-2 7B")

    def blocks(dp):
        res = memory_by_zero_stage(
            m,
            Layout(dp=dp, zero_stage=3),
            Training(global_batch=dp, seq_len=4096, flash_attention=False),
        )
        comm = tuple(zero_comm_bytes_per_gpu(res[3].params_on_gpu, dp, z) for z in (0, 3))
        return how_computed_blocks(res, res[3], comm, None, "ZeRO-3", "binary", m)

    at8, at16 = blocks(8), blocks(16)
    formulas = [i for i, blk in enumerate(at8) if "$$" in blk]
    assert len(formulas) == 1  # exactly one block carries KaTeX
    assert at8[formulas[0]] == at16[formulas[0]]  # and DP leaves it as it was
    assert at8[0] != at16[0] and "N_d = sharding degree = 16" in at16[0]  # the states table moved
    # Llama-2 7B's block (no dropout, MHA, SwiGLU f = 11008), t = 1, by hand: per token 8h whole
    # + 8h attention + 6f, and the softmax output 2 a s^2 without flash attention.
    s, h, a, f = 4096, 4096, 32, 11008
    assert f"{s * (16 * h + 6 * f) + 2 * a * s * s:,.0f}".replace(",", "{,}") in at8[formulas[0]]
    assert r"sbh\left(8 + \frac{24.125}{t} + \frac{2as}{ht}\right)" in at8[formulas[0]]


# --- Layout A vs layout B
# ---------------------------------------------------------------------------
P13 = (
    40 * (2 * 5120**2 * 2 + 3 * 5120 * 13824 + 2 * 5120) + 5120 + 2 * 32000 * 5120
)  # Llama-2 13B by hand
GIB = 2**30


def _ab(b_lay: Layout):
    """Llama-2 13B at 4,096 tokens with flash attention: A = DP 8 ZeRO-3, B = the given layout;
    one micro-batch per rank each.
    """
    m = preset("Llama-2 13B")
    a = memory_per_gpu(
        m, Layout(dp=8, zero_stage=3), Training(global_batch=8, seq_len=4096, flash_attention=True)
    )
    tr_b = Training(global_batch=b_lay.dp * b_lay.micro_batch, seq_len=4096, flash_attention=True)
    return a, memory_per_gpu(m, b_lay, tr_b)


def test_compare_layouts_figure_two_bars_with_hand_segments():
    from figures.memory import compare_layouts_figure

    a, b = _ab(Layout(dp=8, zero_stage=1, micro_batch=2))
    fig = compare_layouts_figure(
        a, b, 80 * GB, reserve_bytes=4 * GB, units="binary", capacity_label="H100 SXM"
    )
    go.Figure(fig)
    assert _trace(fig, "Parameters")["x"] == [
        "A: DP 8 · TP 1 · PP 1 · ZeRO-3 · mb 1",
        "B: DP 8 · TP 1 · PP 1 · ZeRO-1 · mb 2",
    ]
    # ZeRO paper: ZeRO-3 over 8 keeps 2Ψ/8, 2Ψ/8, 12Ψ/8; ZeRO-1 keeps 2Ψ, 2Ψ, 12Ψ/8 (8 divides Ψ
    # exactly).
    assert P13 % 8 == 0
    assert _trace(fig, "Parameters")["y"] == pytest.approx([2 * P13 / 8 / GIB, 2 * P13 / GIB])
    assert _trace(fig, "Gradients")["y"] == pytest.approx([2 * P13 / 8 / GIB, 2 * P13 / GIB])
    assert _trace(fig, "Optimizer states")["y"] == pytest.approx([12 * P13 / 8 / GIB] * 2)
    # A Llama block with flash attention, t = 1 (docs/notes/memory.md §3): per token 8h whole +
    # 8h attention + 6f SwiGLU = 32.2h per layer, + 4 sbh (final norm, head input) + 4 sbV fp32
    # logits, no dropout mask; every term scales with the micro-batch b.
    s, h, f, v = 4096, 5120, 13824, 32000
    acts = 40 * (16 * h + 6 * f) * s + 4 * s * h + 4 * s * v
    assert _trace(fig, "Activations")["y"] == pytest.approx([acts / GIB, 2 * acts / GIB])
    # ZeRO-3 (A) also holds the gathered + prefetched layer and its gradients, 6 B per layer
    # parameter: 4h^2 + 3hf + 2h = 317,204,480; ZeRO-1 (B) none.
    gathered = 6 * (4 * h * h + 3 * h * f + 2 * h)
    assert _trace(fig, "ZeRO-3 gathered layers")["y"] == pytest.approx([gathered / GIB, 0])
    assert _trace(fig, "Reserve")["y"] == pytest.approx([4 * GB / GIB] * 2)
    notes = fig["layout"]["annotations"]
    # A: 2Ψ + 27.6 GB + 1.9 GB + 4 GB = 59.6 GB fits 80 GB; B: 5.5Ψ + 55.2 GB + 4 GB does not.
    assert 2 * P13 + acts + gathered + 4 * GB < 80 * GB < 5.5 * P13 + 2 * acts + 4 * GB
    assert [n["text"].split(" · ")[0] for n in notes[:2]] == ["fits", "OOM"]
    assert [n["x"] for n in notes[:2]] == _trace(fig, "Parameters")["x"]
    assert notes[0]["y"] == pytest.approx((2 * P13 + acts + gathered + 4 * GB) / GIB)
    assert notes[-1]["text"] == "H100 SXM<br>74.5 GiB"  # 80e9 / 2^30


def test_compare_identical_layouts_still_draws_two_bars():
    from figures.memory import compare_layouts_figure

    a, _ = _ab(Layout(dp=8, zero_stage=3))
    fig = compare_layouts_figure(a, a, 80 * GB, units="decimal")
    assert (
        len(_trace(fig, "Parameters")["x"]) == 2 and len(set(_trace(fig, "Parameters")["x"])) == 2
    )


def test_layout_labels_name_hsdp_recompute_and_sequence_parallel():
    from figures.memory import layout_label

    m = preset("Llama-2 7B")
    r = memory_per_gpu(
        m,
        Layout(
            dp=32, tp=2, pp=4, zero_stage=3, shard_degree=4, sequence_parallel=True, micro_batch=2
        ),
        Training(global_batch=32 * 2 * 4, recompute="selective", flash_attention=False),
    )
    assert layout_label(r) == "DP 32 · TP 2 · PP 4 · HSDP · mb 2 · recompute selective · SP"
    r = memory_per_gpu(m, Layout(dp=1024), Training(global_batch=1024))
    assert layout_label(r) == "DP 1,024 · TP 1 · PP 1 · DDP · mb 1"


def test_compare_summary_metrics_and_verdict_by_hand():
    from figures.memory import compare_summary

    # B = TP 2 × DP 4, ZeRO-1: Ψ' = Ψ on one TP rank (Megatron: attention 4h²/2, MLP 3hf/2, norms 2h
    # replicated; vocab-parallel embedding and head Vh/2 each; final norm h); states 2Ψ' + 2Ψ' +
    # 12Ψ'/4.
    h, f, v = 5120, 13824, 32000
    psi_b = 40 * (4 * h * h // 2 + 3 * h * f // 2 + 2 * h) + h + 2 * v * h // 2
    a, b = _ab(Layout(dp=4, tp=2, zero_stage=1))
    rows, sentence = compare_summary(
        a, b, 80 * GB, reserve_bytes=4 * GB, units="decimal", capacity_label="H100"
    )
    m = {r["label"]: r for r in rows}
    states_a, states_b = 2 * P13, 7 * psi_b
    assert m["B states / GPU"]["value"] == f"{states_b / GB:.3g} GB" == "45.6 GB"
    assert (
        m["B states / GPU"]["delta"]
        == f"+{(states_b - states_a) / GB:.3g} GB vs A"
        == "+19.5 GB vs A"
    )
    assert m["B states / GPU"]["delta_color"] == "inverse"  # more memory shows red
    assert m["B activations / GPU"]["delta"].startswith("-")  # TP 2 halves most activations
    assert m["B GPUs"]["value"] == "8" and m["B GPUs"]["delta"] == "same as A"
    assert m["B GPUs"]["delta_color"] == "off"
    used_b = states_b + b.activations_bytes + 4 * GB
    assert m["B per GPU"]["value"] == f"{used_b / GB:.3g} GB"
    assert "**A** (DP 8 · TP 1 · PP 1 · ZeRO-3 · mb 1) fits" in sentence
    assert (
        f"**B** (DP 4 · TP 2 · PP 1 · ZeRO-1 · mb 1) fits: {used_b / GB:.3g} GB, "
        f"{(80 * GB - used_b) / GB:.3g} GB to spare" in sentence
    )
    assert "on the same 8 GPUs" in sentence and sentence.startswith("On H100 (80 GB)")


def test_compare_summary_names_the_oom_and_the_gpu_change():
    from figures.memory import compare_summary

    a, b = _ab(Layout(dp=16, zero_stage=0))  # DDP: 16Ψ = 208 GB of states alone
    rows, sentence = compare_summary(a, b, 80 * GB, units="decimal")
    over = 16 * P13 + b.activations_bytes - 80 * GB
    assert (
        f"**does not fit (OOM)**: {(80 * GB + over) / GB:.3g} GB, {over / GB:.3g} GB over"
        in sentence
    )
    assert "16 GPUs instead of 8" in sentence
    gpus = next(r for r in rows if r["label"] == "B GPUs")
    assert gpus["value"] == "16" and gpus["delta"] == "+8 vs A"


def test_pytorch_names_and_zero_caption_keep_todays_text():
    from figures.memory.labels import pytorch_name
    from figures.memory.text import ZERO_CAPTION

    assert [pytorch_name(z) for z in range(4)] == [
        "NO_SHARD (DDP)",
        "ZeroRedundancyOptimizer",
        "SHARD_GRAD_OP",
        "FULL_SHARD",
    ]
    assert ZERO_CAPTION == (
        "ZeRO stage ↔ PyTorch: 0 = DDP / FSDP NO_SHARD · 1 = ZeroRedundancyOptimizer · 2 = "
        "SHARD_GRAD_OP · 3 = FULL_SHARD · HSDP = HYBRID_SHARD (ZeRO-3 inside a node, replicated "
        "across nodes)"
    )


def test_a_verdict_just_under_the_capacity_line_is_lifted_above_it():
    """ "OOM · 76.3 GiB" must not sit on the capacity line: a bar ending just under it has its
    label put on top of the line, one ending well under it keeps the label on the bar."""
    results = _13b_at_dp8()  # ZeRO-2 holds 48.75 GB, ZeRO-3 26 GB (by hand above)
    fig = zero_stages_figure(results, 50 * GB, reserve_bytes=0.0, units="decimal")
    notes = fig["layout"]["annotations"][:4]
    assert notes[2]["y"] == pytest.approx(50)  # 48.75 sits 1.25 GB (< 7 % of 208) under 50
    assert notes[3]["y"] == pytest.approx(26)  # far below the line: on its bar
    assert all(n["yanchor"] == "bottom" for n in notes)


def test_a_zero_saving_states_its_reason_where_it_shows():
    m, lay = preset("Llama-2 7B"), Layout(dp=1)
    flash = recompute_tradeoff(m, lay, Training(global_batch=1, seq_len=4096))
    fig = recompute_tradeoff_figure(flash, "decimal")
    note = fig["layout"]["title"]["subtitle"]["text"]
    assert note.startswith("Selective saves 0") and "flash attention never stores" in note
    assert "annotations" not in fig["layout"]  # nothing printed over a bar's value label
    # Without flash attention selective recompute drops the 2 a s^2 b softmax output per layer
    # (Llama: no dropout), 32 layers: it saves something, and no reason is needed.
    plain = recompute_tradeoff(
        m, lay, Training(global_batch=1, seq_len=4096, flash_attention=False)
    )
    assert plain[1].saved_bytes == 32 * 2 * 32 * 4096**2
    assert "subtitle" not in recompute_tradeoff_figure(plain, "decimal")["layout"]["title"]
