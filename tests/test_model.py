"""Parameter counts against published figures, and FLOPs against the papers' closed forms."""

import pytest

from core.model import MODEL_PRESETS, ModelSpec, ParamsOnly, preset


def hf_state_dict_count(m: ModelSpec) -> int:
    """Second method: sum the tensor shapes a Hugging Face checkpoint of this architecture holds."""
    h, f, V, L, dh = m.hidden_size, m.ffn_hidden_size, m.vocab_size, m.num_layers, m.d_head
    if m.norm == "layernorm":  # GPT2LMHeadModel: wte, wpe, h.{i}.{ln_1, attn.c_attn, ...}, ln_f
        shapes = [(V, h), (m.learned_positions, h)]
        layer = [
            (h,),
            (h,),
            (h, 3 * h),
            (3 * h,),
            (h, h),
            (h,),  # ln_1, c_attn, attn.c_proj
            (h,),
            (h,),
            (h, f),
            (f,),
            (f, h),
            (h,),
        ]  # ln_2, c_fc, mlp.c_proj
        shapes += layer * L + [(h,), (h,)]  # ln_f
    else:  # LlamaForCausalLM / MistralForCausalLM
        a, g = m.num_heads, m.num_kv_heads
        layer = [
            (a * dh, h),
            (g * dh, h),
            (g * dh, h),
            (h, a * dh),  # q, k, v, o_proj
            (f, h),
            (f, h),
            (h, f),
            (h,),
            (h,),
        ]  # gate, up, down, 2 RMSNorms
        shapes = [(V, h)] + layer * L + [(h,)] + ([] if m.tied_embeddings else [(V, h)])
    total = 0
    for shape in shapes:
        n = 1
        for d in shape:
            n *= d
        total += n
    return total


# Exact counts printed by Hugging Face (model.num_parameters(), safetensors "total" metadata).
# Llama-2-70b-hf's safetensors total reads 68,976,653,312: 5,120 more, the 80 x 64 rotary
# inv_freq buffers older checkpoints stored; they are not parameters.
HF_EXACT = {
    "GPT-2 small (124M)": 124_439_808,
    "Llama-2 7B": 6_738_415_616,
    "Llama-2 13B": 13_015_864_320,
    "Llama-2 70B": 68_976_648_192,
    "Llama-3.1 8B": 8_030_261_248,
    "Llama-3.1 70B": 70_553_706_496,
    "Llama-3.1 405B": 405_853_388_800,
    "Llama-3.2 1B": 1_235_814_400,
    "Mistral 7B": 7_241_732_096,
}

# Rounded official figures: (value, relative tolerance, source).
PUBLISHED = {
    "GPT-2 small (124M)": (
        124e6,
        0.005,
        "HF model card openai-community/gpt2: 124M (the GPT-2 paper's Table 2 prints 117M)",
    ),
    "GPT-3 175B": (175.0e9, 0.005, "Brown et al. 2020, Table 2.1: 175.0B"),
    "Megatron GPT 145.6B (Narayanan 2021)": (145.6e9, 0.0005, "Narayanan et al. 2021, Table 1"),
    "Llama-2 7B": (7e9, 0.04, "Touvron et al. 2023 (Llama 2), Table 1: 7B"),
    "Llama-2 13B": (13e9, 0.005, "Llama 2 paper, Table 1: 13B"),
    "Llama-2 70B": (70e9, 0.016, "Llama 2 paper, Table 1: 70B (the exact count is 69.0B)"),
    "Llama-3.1 8B": (8e9, 0.005, "Llama 3.1 model card: 8B"),
    "Llama-3.1 70B": (70e9, 0.01, "Llama 3.1 model card: 70B"),
    "Llama-3.1 405B": (405e9, 0.005, "Llama 3.1 model card: 405B"),
    "Llama-3.2 1B": (1.23e9, 0.005, "Llama 3.2 model card: 1.23B"),
    "Mistral 7B": (7.3e9, 0.01, "Mistral AI announcement: 7.3B (Jiang et al. 2023: '7-billion')"),
}


@pytest.mark.parametrize("name", sorted(HF_EXACT))
def test_exact_hugging_face_counts(name):
    m = MODEL_PRESETS[name]
    assert m.num_params == HF_EXACT[name]
    assert hf_state_dict_count(m) == HF_EXACT[name]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_close_to_published_count(name):
    value, tol, _source = PUBLISHED[name]
    assert MODEL_PRESETS[name].num_params == pytest.approx(value, rel=tol)


def test_every_preset_is_checked_and_parts_sum():
    assert set(PUBLISHED) == set(MODEL_PRESETS)
    assert len(MODEL_PRESETS) >= 8
    for m in MODEL_PRESETS.values():
        assert sum(m.parts().values()) == m.num_params == hf_state_dict_count(m)


def test_gpt_closed_form():
    # docs/notes/memory.md §1: L (12 h^2 + 13 h) + (V + s) h + 2h for GPT-3 (V = 50,257, s = 2,048).
    L, h, V, s = 96, 12288, 50257, 2048
    assert preset("GPT-3 175B").num_params == L * (12 * h * h + 13 * h) + (V + s) * h + 2 * h
    assert preset("GPT-3 175B").num_params == 174_604_259_328


def test_llama_closed_form_and_parts():
    # docs/notes/memory.md §1: L (2 h^2 (1 + g/a) + 3 h f + 2h) + h + 2 V h; Llama-2 70B g/a = 8/64.
    m = preset("Llama-2 70B")
    L, h, f, V = 80, 8192, 28672, 32000
    assert m.attention_params_per_layer == 2 * h * h + 2 * h * h // 8
    assert m.mlp_params_per_layer == 3 * h * f
    assert m.num_params == L * (2 * h * h * 9 // 8 + 3 * h * f + 2 * h) + h + 2 * V * h


def test_tied_embeddings_have_no_output_head():
    m = preset("Llama-3.2 1B")
    assert m.output_params == 0
    assert m.num_params + m.vocab_size * m.hidden_size == hf_state_dict_count(
        ModelSpec(**{**vars(m), "tied_embeddings": False})
    )


def test_flops_per_token_matches_korthikanti_and_narayanan_forms():
    m = preset("GPT-3 175B")
    l, h, V, s = 96, 12288, 50257, 2048
    # Korthikanti et al. 2022 model FLOPs per iteration / (B s): 72 l h^2 (1 + s/6h + V/12lh).
    f72 = 72 * l * h * h + 12 * l * h * s + 6 * V * h
    f96 = 96 * l * h * h + 16 * l * h * s + 6 * V * h  # Narayanan et al. 2021 Eq. 3, full recompute
    assert m.flops_per_token(s) == f72
    assert m.flops_per_token(s, full_recompute=True) == f96
    assert m.flops_per_token(s) / m.flops_per_token(s, full_recompute=True) == pytest.approx(
        0.75, abs=0.01
    )


def test_flops_per_token_matches_megatron_general_form_for_gqa_swiglu():
    # Megatron training.py: 12 s l h^2 [(1 + g/a + s/h)(a d/h) + (f/h)(3/2) + V/(2 l h)] per
    # sequence.
    m = preset("Llama-3.1 70B")
    l, h, a, g, f, V, s = 80, 8192, 64, 8, 28672, 128256, 8192
    per_token = 12 * l * h * h * ((1 + g / a + s / h) + (f / h) * 1.5 + V / (2 * l * h))
    assert m.flops_per_token(s) == pytest.approx(per_token, rel=1e-12)


def test_recompute_flops_fraction_gpt3():
    m = preset("GPT-3 175B")
    l, h, V, s = 96, 12288, 50257, 2048
    f72 = 72 * l * h * h + 12 * l * h * s + 6 * V * h
    assert m.recompute_flops_fraction(s, "none") == 0
    assert m.recompute_flops_fraction(s, "full") == pytest.approx(
        (24 * l * h * h + 4 * l * h * s) / f72
    )
    assert m.recompute_flops_fraction(s, "selective") == pytest.approx(4 * l * h * s / f72)
    assert m.recompute_flops_fraction(s, "selective") == pytest.approx(0.0090, abs=5e-4)


def test_invalid_shapes_raise_with_rule_and_fix():
    with pytest.raises(
        ValueError,
        match=r"num_kv_heads=3 does not divide 32 query heads: .*"
        r"use num_kv_heads in \{1, 2, 4, 8, 16, 32\}",
    ):
        ModelSpec(
            name="x",
            num_layers=2,
            hidden_size=64,
            num_heads=32,
            num_kv_heads=3,
            ffn_hidden_size=128,
            gated_mlp=True,
            vocab_size=10,
            tied_embeddings=False,
        )
    with pytest.raises(ValueError, match="num_layers=0 must be a whole number"):
        ModelSpec(
            name="x",
            num_layers=0,
            hidden_size=64,
            num_heads=4,
            num_kv_heads=4,
            ffn_hidden_size=128,
            gated_mlp=True,
            vocab_size=10,
            tied_embeddings=False,
        )
    with pytest.raises(ValueError, match="hidden_size=100 is not divisible by num_heads=3"):
        ModelSpec(
            name="x",
            num_layers=2,
            hidden_size=100,
            num_heads=3,
            num_kv_heads=3,
            ffn_hidden_size=128,
            gated_mlp=True,
            vocab_size=10,
            tied_embeddings=False,
        )
    with pytest.raises(ValueError, match="model=.* is unknown: use one of"):
        preset("GPT-5")
    with pytest.raises(ValueError, match="num_params=-1"):
        ParamsOnly(num_params=-1)
    with pytest.raises(ValueError, match="recompute='some'"):
        preset("Llama-2 7B").recompute_flops_fraction(2048, "some")


def test_gpt_spec_builds_the_gpt3_preset():
    from core.model import gpt_spec

    g = gpt_spec("GPT-3 175B", 96, 12288, 96, 50257, 2048, "Brown et al. 2020, Table 2.1 (175.0B)")
    assert g == preset("GPT-3 175B")
    assert (g.ffn_hidden_size, g.num_kv_heads, g.learned_positions) == (4 * 12288, 96, 2048)
