"""Hand-computed memory cases: ZeRO paper, Korthikanti et al. Table 2, Megatron layout, seeds."""

import math
from dataclasses import replace

import pytest

from core.memory import (
    FSDP_STRATEGIES,
    activation_bytes_per_layer,
    fits,
    fsdp_to_zero,
    layer_allgather_bytes,
    memory_by_zero_stage,
    memory_per_gpu,
    model_state_bytes_per_gpu,
    recompute_tradeoff,
    what_fits,
    zero_comm_bytes_per_gpu,
)
from core.model import ParamsOnly, preset
from core.parallel import Layout
from core.training import RECIPES, Training

GB = 1e9
H100 = 81_559 * 2**20  # what nvidia-smi reports for an "80 GB" H100 (core/hardware.py)


# --- model states (ZeRO paper, Rajbhandari et al. 2020) ---


def test_70b_needs_1_12_tb_at_16_bytes_per_param():
    ms = model_state_bytes_per_gpu(70e9, 1, 0)
    assert (ms.parameters_bytes, ms.gradients_bytes, ms.optimizer_bytes) == (140e9, 140e9, 840e9)
    assert ms.total_bytes == 1_120_000_000_000
    assert ms.total_bytes / 2**30 == pytest.approx(1043.08, abs=0.01)  # 1.12e12 B / 2^30 B per GiB


def test_zero3_over_16_gpus_is_70_gb_per_gpu():
    assert model_state_bytes_per_gpu(70e9, 16, 3).total_bytes == 70_000_000_000


def test_zero_paper_figure1_example():
    # ZeRO paper Fig. 1: Psi = 7.5B, N_d = 64, K = 12 -> 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
    totals = [model_state_bytes_per_gpu(7.5e9, 64, z).total_bytes / GB for z in range(4)]
    assert [round(t, 1) for t in totals] == [120.0, 31.4, 16.6, 1.9]


def test_zero_stage_formulas_by_hand():
    psi, n = 1_000_000, 8
    assert model_state_bytes_per_gpu(psi, n, 1).total_bytes == 4 * psi + 12 * psi // n
    assert model_state_bytes_per_gpu(psi, n, 2).total_bytes == 2 * psi + 14 * psi // n
    assert model_state_bytes_per_gpu(psi, n, 3).total_bytes == 16 * psi // n
    # An uneven split pads: 10 params over 4 ranks -> 3 elements on each rank.
    assert model_state_bytes_per_gpu(10, 4, 3).total_bytes == 16 * 3


def test_18_vs_16_bytes_and_megatron_distributed_optimizer():
    psi = 70e9
    assert model_state_bytes_per_gpu(psi, 1, 0, "megatron_fp32_grads").total_bytes == 18 * psi
    assert model_state_bytes_per_gpu(psi, 1, 0, "mixed_adam").total_bytes == 16 * psi
    # NVIDIA/Megatron-LM docs/user-guide/features/dist_optimizer.md: bf16 params + fp32 grads
    # 6 + 12/d; fp32 + fp32 8 + 8/d.
    d = 8
    assert model_state_bytes_per_gpu(psi, d, 1, "megatron_fp32_grads").total_bytes == psi * (
        6 + 12 / d
    )
    assert model_state_bytes_per_gpu(psi, d, 1, "fp32_adam").total_bytes == psi * (8 + 8 / d)


def test_recipes_bytes_per_param():
    assert {k: r.bytes_per_param for k, r in RECIPES.items()} == {
        "mixed_adam": 16,
        "megatron_fp32_grads": 18,
        "fp32_adam": 16,
        "bf16_no_master": 12,
        "sgd_momentum": 12,
    }
    assert all(r.source for r in RECIPES.values())


def test_fsdp_mapping():
    assert fsdp_to_zero("NO_SHARD", 16) == (0, 16)
    assert fsdp_to_zero("SHARD_GRAD_OP", 16) == (2, 16)
    assert fsdp_to_zero("FULL_SHARD", 16) == (3, 16)
    assert fsdp_to_zero("HYBRID_SHARD", 32, gpus_per_node=8) == (3, 8)
    assert set(FSDP_STRATEGIES) >= {"NO_SHARD", "SHARD_GRAD_OP", "FULL_SHARD", "HYBRID_SHARD"}
    # HYBRID_SHARD: 16 B x Psi / 8 per GPU, whatever the number of nodes.
    stage, shard = fsdp_to_zero("HYBRID_SHARD", 32)
    r = memory_per_gpu(
        ParamsOnly(num_params=8_000_000),
        Layout(dp=32, zero_stage=stage, shard_degree=shard),
        Training(global_batch=32, flash_attention=False),
    )
    assert r.total_bytes == 16_000_000


# --- the seeds' 13B question: DDP vs FULL_SHARD on 80 GB cards ---


def test_13b_ddp_does_not_fit_full_shard_does():
    m = preset("Llama-2 13B")
    tr = Training(global_batch=8, seq_len=4096, flash_attention=True)
    ddp = memory_per_gpu(m, Layout(dp=8, zero_stage=0, micro_batch=1), tr)
    stage, shard = fsdp_to_zero("FULL_SHARD", 8)
    fsdp = memory_per_gpu(m, Layout(dp=8, zero_stage=stage, shard_degree=shard), tr)
    assert ddp.parameters_bytes + ddp.gradients_bytes + ddp.optimizer_bytes == 16 * 13_015_864_320
    assert not fits(ddp.total_bytes, H100)
    # By hand: states 16 x 13,015,864,320 / 8. Activations of a Llama block (no dropout, flash),
    # per token: norm inputs 2h + 2h, QKV and MLP inputs 2h + 2h, Q 2h, K 2h, V 2h, output
    # projection input 2h (MHA: g = a), SwiGLU gate|up 4f + down input 2f; x 40 layers, + 4 s h
    # (final norm, LM-head input) + 4 s V (fp32 logits); no embedding dropout mask.
    s, h, f, V = 4096, 5120, 13824, 32000
    per_token = 8 * h + 8 * h + 6 * f
    assert per_token == 164_864  # 32.2 h, not GPT's 34 h
    states = 16 * 13_015_864_320 // 8
    acts = 40 * per_token * s + 4 * s * h + 4 * s * V
    # FULL_SHARD's working set: the current layer and the prefetched one gathered (2 B each) and
    # the current layer's bf16 gradients: 6 B x 317,204,480 parameters.
    gathered = 6 * 317_204_480
    assert (states, acts, gathered) == (26_031_728_640, 27_619_491_840, 1_903_226_880)
    assert fsdp.gathered_bytes == gathered and ddp.gathered_bytes == 0
    assert fsdp.total_bytes == states + acts + gathered
    assert fits(fsdp.total_bytes, H100, 0.1 * H100)


def test_price_of_full_shard_in_bytes():
    m = preset("Llama-2 13B")
    layer = 4 * 5120 * 5120 + 3 * 5120 * 13824 + 2 * 5120  # attention, SwiGLU MLP, two RMSNorms
    assert m.layer_params_per_gpu(1) == layer == 317_204_480
    assert m.layer_params_per_gpu(2) == (layer - 2 * 5120) // 2 + 2 * 5120  # norms stay whole
    # One layer's all-gather (twice per step under FULL_SHARD): 2-byte weights, ring (n-1)/n.
    per_layer = zero_comm_bytes_per_gpu(m.layer_params_per_gpu(1), 8, 3).parameter_bytes / 2
    assert per_layer == layer * 2 * 7 / 8 == 555_107_840
    ddp, z3 = (
        zero_comm_bytes_per_gpu(m.num_params, 8, 0),
        zero_comm_bytes_per_gpu(m.num_params, 8, 3),
    )
    assert ddp.total_bytes == 2 * m.num_params * 2 * 7 / 8  # 2 Psi elements of 2 bytes, ring
    assert z3.total_bytes == pytest.approx(1.5 * ddp.total_bytes)
    assert ddp.parameter_bytes == 0 and z3.gradient_bytes == ddp.gradient_bytes / 2


def test_zero_comm_volumes():
    psi = 1_000_000
    for z in (0, 1, 2):
        assert zero_comm_bytes_per_gpu(psi, 4, z).total_bytes == 2 * psi * 2 * 3 / 4
    assert zero_comm_bytes_per_gpu(psi, 4, 3).total_bytes == 3 * psi * 2 * 3 / 4
    assert zero_comm_bytes_per_gpu(psi, 1, 3).total_bytes == 0
    # fp32 main grads: the gradient reduction moves 4-byte elements.
    assert zero_comm_bytes_per_gpu(psi, 2, 0, "megatron_fp32_grads").total_bytes == 2 * psi * 4 / 2


def test_seed_70b_zero3_on_16_cards_is_borderline():
    """The seed's "ZeRO-3 on 16 x 80 GB: ~70 GB/GPU (just barely)", re-derived by hand."""
    m = preset("Llama-2 70B")
    par = Layout(dp=16, zero_stage=3)
    states = 16 * 68_976_648_192 // 16  # 69.0 GB: 81 % of the card before anything else
    s, h, V = 4096, 8192, 32000
    tr = Training(global_batch=16, seq_len=s, flash_attention=False)
    full = memory_per_gpu(m, par, replace(tr, recompute="full"))
    assert full.activations_bytes == 80 * 2 * s * h + 4 * s * h + 4 * s * V  # no dropout mask
    # One layer: attention 2h^2 (1 + 8/64), SwiGLU 3 h f, two RMSNorms 2h; gathered + prefetched
    # (2 B each) + its gradients (2 B).
    layer = 2 * h * h * 9 // 8 + 3 * h * 28672 + 2 * h
    assert layer == 855_654_400 and full.gathered_bytes == 6 * layer == 5_133_926_400
    assert full.total_bytes == states + 6_027_214_848 + 5_133_926_400 == 80_137_789_440
    # The margin: 85,520,809,984 − 80,137,789,440 = 5,383,020,544 B = 6.29 % of the card. The
    # app's 10 % reserve says OOM; a 5 % reserve would fit with 1.1 GB to spare: just barely.
    assert not fits(full.total_bytes, H100, 0.10 * H100)
    assert fits(full.total_bytes, H100, 0.05 * H100)
    assert (H100 - full.total_bytes) / H100 == pytest.approx(0.0629, abs=5e-5)
    none = memory_per_gpu(m, par, tr)
    assert not fits(none.total_bytes, H100)


# --- activations: Korthikanti et al. 2022, Table 2, GPT-3 175B shape (s 2048, h 12288, a 96, t 8)
# ---

S, H, A, T = 2048, 12288, 96, 8
SBH = S * H  # b = 1: 25,165,824; 5as/h = 5 x 96 x 2048 / 12288 = 80


@pytest.mark.parametrize(
    "tp, sp, recompute, per_sbh",
    [
        (1, False, "none", 34 + 80),  # no parallelism: sbh (34 + 5as/h)
        (T, False, "none", 10 + 24 / 8 + 80 / 8),  # TP: sbh (10 + 24/t + 5as/(ht)) = 23 sbh
        (T, True, "none", (34 + 80) / 8),  # TP + SP: sbh (34 + 5as/h) / t = 14.25 sbh
        (T, False, "selective", 10 + 24 / 8),  # TP + selective: 13 sbh
        (T, True, "selective", 34 / 8),  # TP + SP + selective: 4.25 sbh
        (T, False, "full", 2),  # full recompute: 2 sbh
        (T, True, "full", 2 / 8),  # ... the SP-sharded layer input (Megatron)
    ],
)
def test_korthikanti_table2(tp, sp, recompute, per_sbh):
    assert activation_bytes_per_layer(S, 1, H, A, tp, sp, recompute) == SBH * per_sbh


def test_korthikanti_table2_absolute_values():
    assert activation_bytes_per_layer(S, 1, H, A) == 2_868_903_936  # 25,165,824 x 114
    assert activation_bytes_per_layer(S, 1, H, A, 8, True, "selective") == 106_954_752
    # Selective recompute saves 70% for GPT-3 (Korthikanti et al. 2022): 1 - 34/114.
    assert 1 - 34 / 114 == pytest.approx(0.70, abs=0.005)


def test_flash_attention_drops_the_score_term():
    assert activation_bytes_per_layer(S, 1, H, A, flash_attention=True) == 34 * SBH
    assert activation_bytes_per_layer(
        S, 1, H, A, 8, True, "none", True
    ) == activation_bytes_per_layer(S, 1, H, A, 8, True, "selective")


def test_activations_scale_with_micro_batch():
    assert activation_bytes_per_layer(S, 4, H, A, 8) == 4 * activation_bytes_per_layer(
        S, 1, H, A, 8
    )


# --- pipeline: Megatron layout and in-flight micro-batches ---


def test_pipeline_stage_split_llama2_7b():
    m = preset("Llama-2 7B")
    layer = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096  # 202,383,360
    r = memory_per_gpu(m, Layout(dp=1, pp=4), Training(global_batch=8, flash_attention=False))
    assert [st.params_on_gpu for st in r.stages] == [
        8 * layer + 32000 * 4096,
        8 * layer,
        8 * layer,
        8 * layer + 4096 + 32000 * 4096,
    ]
    assert sum(st.params_on_gpu for st in r.stages) == m.num_params
    assert r.stage == 0  # the fullest: the first stage holds p micro-batches and the embedding
    assert r.total_bytes == max(st.total_bytes for st in r.stages)


def test_pipeline_with_tp_shards_matrices_and_replicates_norms():
    m = preset("Llama-2 7B")
    r = memory_per_gpu(m, Layout(dp=1, tp=2, pp=2), Training(global_batch=1))
    sharded = 4 * 4096 * 4096 + 3 * 4096 * 11008
    per_layer = sharded // 2 + 2 * 4096
    assert r.stages[0].params_on_gpu == 16 * per_layer + 32000 * 4096 // 2
    assert r.stages[1].params_on_gpu == 16 * per_layer + 4096 + 32000 * 4096 // 2


def test_tied_embedding_copy_on_last_stage():
    m = preset("GPT-2 small (124M)")
    tr = Training(global_batch=1, seq_len=1024)
    one, two = (memory_per_gpu(m, Layout(dp=1, pp=p), tr) for p in (1, 2))
    assert one.stages[0].params_on_gpu == m.num_params
    assert (
        sum(st.params_on_gpu for st in two.stages) == m.num_params + 50257 * 768
    )  # Megatron's copy


def test_in_flight_micro_batches():
    m = preset("Llama-2 7B")  # 32 layers
    par, tr = Layout(dp=1, pp=4), Training(global_batch=8, flash_attention=False)
    f1b = memory_per_gpu(m, par, tr)
    assert [st.layers_in_flight for st in f1b.stages] == [32, 24, 16, 8]  # min(p - r, m) x L/p
    gpipe = memory_per_gpu(m, replace(par, schedule="gpipe"), tr)
    assert [st.layers_in_flight for st in gpipe.stages] == [64] * 4  # m x L/p
    few = memory_per_gpu(m, par, replace(tr, global_batch=2))
    assert [st.layers_in_flight for st in few.stages] == [16, 16, 16, 8]
    inter = memory_per_gpu(m, replace(par, schedule="interleaved_1f1b", num_chunks=2), tr)
    assert inter.stages[0].layers_in_flight == 32 * (1 + 3 / (4 * 2))  # L (1 + (p-1)/(p v)) = 44
    # Korthikanti Eq. 5: the first 1F1B stage stores L layers' worth. Llama-2 7B's block by hand
    # (s 2048, no flash): per token 8h whole + 8h (Q, K, V, output input) + 6f (SwiGLU), plus the
    # softmax output 2 a s^2 (no dropout mask, no dropout output).
    layer = 2048 * (16 * 4096 + 6 * 11008) + 2 * 32 * 2048**2
    assert layer == 537_919_488
    assert f1b.stages[0].activations_bytes - f1b.stages[0].extra_activation_bytes == 32 * layer


def test_activation_extras_first_and_last_stage():
    lay = Layout(dp=1, pp=2, tp=2, sequence_parallel=True)
    s, h, V = 1024, 768, 50257
    r = memory_per_gpu(
        preset("GPT-2 small (124M)"),
        lay,
        Training(global_batch=4, seq_len=s, flash_attention=False),
    )
    assert r.stages[0].extra_activation_bytes == 2 * s * h / 2  # dropout mask, 2 micro-batches
    assert r.stages[1].extra_activation_bytes == 4 * s * h / 2 + 4 * s * V / 2
    s, h, V = 2048, 4096, 32000
    llama = memory_per_gpu(preset("Llama-2 7B"), lay, Training(global_batch=4, seq_len=s))
    assert llama.stages[0].extra_activation_bytes == 0  # no dropout, so no embedding mask
    assert llama.stages[1].extra_activation_bytes == 4 * s * h / 2 + 4 * s * V / 2


def test_params_only_mode():
    r = memory_per_gpu(
        ParamsOnly(num_params=70_000_000_000),
        Layout(dp=16, zero_stage=3),
        Training(global_batch=16),
    )
    assert (r.total_bytes, r.activations_bytes) == (70e9, 0)
    r = memory_per_gpu(
        ParamsOnly(num_params=70_000_000_000), Layout(dp=1, tp=8, pp=2), Training(global_batch=1)
    )
    assert r.total_bytes == 70e9 * 16 / 16


# --- recompute trade, what fits ---


def test_recompute_tradeoff():
    m = preset("GPT-3 175B")
    opts = recompute_tradeoff(
        m,
        Layout(dp=1, tp=8, pp=8, sequence_parallel=True),
        Training(global_batch=64, flash_attention=False),
    )
    none, sel, full = opts
    assert none.saved_bytes == 0 and none.extra_compute_fraction == 0
    assert none.activations_bytes > sel.activations_bytes > full.activations_bytes
    layers = 96 * SBH  # first stage: L layers' worth (8 micro-batches x 12 layers)
    assert sel.saved_bytes == pytest.approx(layers * 80 / 8)  # the 5as/(ht) term goes
    assert full.extra_compute_fraction == pytest.approx(1 / 3, abs=0.005)


def _brute_min_dp(psi, z, cap):
    for d in range(1, 200):
        if model_state_bytes_per_gpu(psi, d, z).total_bytes <= cap:
            return d
    return None


def test_what_fits_model_states_only():
    rows = what_fits(
        ParamsOnly(num_params=13_000_000_000),
        Layout(dp=1),
        Training(global_batch=1),
        80 * GB,
        max_dp=199,
    )
    # By hand: DDP 208 GB never; ZeRO-1 52 + 156/N <= 80 -> N = 6; ZeRO-2 26 + 182/N -> 4; ZeRO-3
    # 208/N -> 3.
    assert [r.min_dp for r in rows] == [None, 6, 4, 3]
    assert [r.min_dp for r in rows] == [_brute_min_dp(13e9, z, 80 * GB) for z in range(4)]
    rows = what_fits(
        ParamsOnly(num_params=70_000_000_000), Layout(dp=1, tp=2), Training(global_batch=1), 80 * GB
    )
    # Psi = 35e9 per TP rank. ZeRO-2: 70e9 + 490e9/N <= 80e9 needs N >= 49, but at 49 the padded
    # shard ceil(35e9/49) = 714,285,715 puts 14 x that at 10 B over the line: 50. ZeRO-3: 560e9/N ->
    # 7.
    assert [r.min_dp for r in rows] == [None, None, 50, 7]
    assert rows[3].min_gpus == 14 and rows[3].max_micro_batch is None


def test_what_fits_micro_batch_matches_linear_scan():
    m = preset("Llama-2 7B")
    tr = Training(global_batch=8, seq_len=4096, recompute="selective", flash_attention=False)
    rows = what_fits(m, Layout(dp=8), tr, 80 * GB, reserve_bytes=5 * GB)
    for row in rows:
        scan = 0
        for b in range(1, 200):
            lay = Layout(dp=8, zero_stage=row.zero_stage, micro_batch=b)
            total = memory_per_gpu(m, lay, replace(tr, global_batch=8 * b)).total_bytes
            if total + 5 * GB > 80 * GB:
                break
            scan = b
        assert row.max_micro_batch == scan
    assert rows[0].max_micro_batch == 0 and rows[3].max_micro_batch > 0


def test_memory_by_zero_stage_is_decreasing():
    rs = memory_by_zero_stage(preset("Llama-3.1 8B"), Layout(dp=8), Training(global_batch=8))
    assert [r.layout.zero_stage for r in rs] == [0, 1, 2, 3]
    assert all(a.total_bytes > b.total_bytes for a, b in zip(rs, rs[1:]))


# --- bad input: numbers, rule and fix ---


def test_tp_not_dividing_heads():
    with pytest.raises(ValueError) as e:
        memory_per_gpu(preset("Llama-2 7B"), Layout(dp=1, tp=3), Training(global_batch=1))
    assert str(e.value) == (
        "TP=3 does not divide 32 attention heads: each TP rank must own whole heads; "
        "use TP in {1, 2, 4, 8, 16, 32}"
    )
    with pytest.raises(ValueError, match="TP=3 does not divide 32 attention heads"):
        activation_bytes_per_layer(2048, 1, 4096, 32, tp=3)


def test_tp_not_dividing_kv_heads():
    with pytest.raises(
        ValueError, match=r"TP=16 does not divide 8 KV heads.*use TP in \{1, 2, 4, 8\}"
    ):
        memory_per_gpu(preset("Llama-2 70B"), Layout(dp=1, tp=16), Training(global_batch=1))


def test_pp_not_dividing_layers():
    with pytest.raises(
        ValueError,
        match=r"PP=3 does not divide 32 layers: .*"
        r"use PP in \{1, 2, 4, 8, 16, 32\}",
    ):
        memory_per_gpu(preset("Llama-2 7B"), Layout(dp=1, pp=3), Training(global_batch=1))
    with pytest.raises(ValueError, match="PP x v=24 does not divide 32 layers"):
        memory_per_gpu(
            preset("Llama-2 7B"),
            Layout(dp=1, pp=8, schedule="interleaved_1f1b", num_chunks=3),
            Training(global_batch=8),
        )
    with pytest.raises(ValueError, match="multiple of PP"):
        memory_per_gpu(
            preset("Llama-2 7B"),
            Layout(dp=1, pp=4, schedule="interleaved_1f1b", num_chunks=2),
            Training(global_batch=6),
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"micro_batch": 0}, "micro_batch=0 must be a whole number ≥ 1"),
        ({"seq_len": -5}, "seq_len=-5"),
        ({"global_batch": 0}, "global_batch=0 must be a whole number ≥ 1"),
        ({"recipe": "adam8bit"}, "recipe='adam8bit' is unknown: use one of mixed_adam"),
        ({"recompute": "half"}, "recompute='half' is unknown"),
        ({"schedule": "zb"}, "schedule='zb' is unknown"),
        (
            {"num_chunks": 2},
            r"1f1b allows num_chunks = 1 \(model chunks per rank\): num_chunks=2; use num_chunks=1",
        ),
    ],
)
def test_training_and_layout_validation(kwargs, match):
    on_layout = ("micro_batch", "schedule", "num_chunks")
    layout = {k: v for k, v in kwargs.items() if k in on_layout}
    training = {k: v for k, v in kwargs.items() if k not in on_layout}
    with pytest.raises(ValueError, match=match):
        Layout(dp=1, **layout)
        Training(**{"global_batch": 1, **training})


def test_parallel_and_model_state_validation():
    with pytest.raises(ValueError, match="dp=0 must be a whole number"):
        Layout(dp=0)
    with pytest.raises(ValueError, match="zero_stage=4"):
        Layout(dp=1, zero_stage=4)
    with pytest.raises(ValueError, match=r"shard_degree=3 does not divide 8 DP ranks"):
        Layout(dp=8, shard_degree=3)
    with pytest.raises(ValueError, match=r"global batch 12 is not divisible by DP × micro-batch"):
        memory_per_gpu(preset("Mistral 7B"), Layout(dp=8), Training(global_batch=12))
    with pytest.raises(ValueError, match="num_params=0"):
        model_state_bytes_per_gpu(0, 1, 0)
    with pytest.raises(ValueError, match="zero_stage=5"):
        model_state_bytes_per_gpu(10, 1, 5)
    with pytest.raises(ValueError, match="unknown: use one of NO_SHARD"):
        fsdp_to_zero("ZERO", 8)
    assert math.isfinite(
        memory_per_gpu(
            preset("Mistral 7B"), Layout(dp=1, tp=8, pp=4), Training(global_batch=1)
        ).total_bytes
    )


def test_layer_allgather_bytes_is_one_layers_weights():
    m = preset("Llama-2 13B")
    layer = 4 * 5120 * 5120 + 3 * 5120 * 13824 + 2 * 5120  # by hand, as above
    assert layer_allgather_bytes(m) == 2 * layer == 634_408_960  # bf16 weights
    assert layer_allgather_bytes(m, recipe="fp32_adam") == 4 * layer
    assert layer_allgather_bytes(m, tp=2) == 2 * ((layer - 2 * 5120) // 2 + 2 * 5120)
    with pytest.raises(ValueError, match="tp=0 must be a whole number"):
        layer_allgather_bytes(m, tp=0)


def test_sized_schedules_are_names_of_the_one_registry():
    from core.memory import SIZED_SCHEDULES
    from core.pipeline import SCHEDULES

    assert set(SIZED_SCHEDULES) <= set(SCHEDULES)
    assert [SCHEDULES[s].label for s in SIZED_SCHEDULES] == ["1F1B", "GPipe", "Interleaved 1F1B"]


def test_activations_module_is_reexported_and_sized_by_hand():
    from core import memory, training
    from core.memory import activations

    assert memory.activation_bytes_per_layer is activations.activation_bytes_per_layer
    assert activations.RECOMPUTE_MODES == training.RECOMPUTE_MODES == ("none", "selective", "full")
    assert not hasattr(memory, "RECOMPUTE_MODES")  # one home: core.training
    # 1F1B, p = 4, m = 8, L = 32: stage r holds (4 - r) micro-batches of 8 layers; GPipe holds all
    # 8.
    assert [activations.layers_in_flight(r, 32, 4, 8) for r in range(4)] == [32, 24, 16, 8]
    assert activations.layers_in_flight(3, 32, 4, 8, "gpipe") == 64
    assert activations.layers_in_flight(0, 32, 4, 2) == 16  # fewer micro-batches than stages
    # Interleaved, v = 2: rank 0 holds L (1 + (p - 1)/(p v)) = 32 x 11/8 = 44 layers' worth.
    assert activations.layers_in_flight(0, 32, 4, 8, "interleaved_1f1b", 2) == 44
    s, b, h, v = 1024, 2, 512, 1000
    assert activations.edge_activation_bytes(0, 2, s, b, h, v) == s * b * h  # dropout mask only
    assert (
        activations.edge_activation_bytes(1, 2, s, b, h, v, tp=2)
        == 4 * s * b * h + 4 * s * b * v / 2
    )
    assert activations.edge_activation_bytes(0, 1, s, b, h, v, tp=2, sequence_parallel=True) == (
        5 * s * b * h / 2 + 4 * s * b * v / 2
    )


def test_one_training_default_is_flash_attention():
    """Memory and planner share one Training: flash attention on unless asked otherwise."""
    m, lay = preset("Llama-2 7B"), Layout(dp=1)
    s, h = 2048, 4096
    on = memory_per_gpu(m, lay, Training(global_batch=1, seq_len=s))
    off = memory_per_gpu(m, lay, Training(global_batch=1, seq_len=s, flash_attention=False))
    # Llama block (docs/notes/memory.md §3): 8h whole + 8h attention + 6f SwiGLU per token,
    # 32.125 s h; without flash attention + the softmax output 2 a s^2 (no dropout).
    assert on.layer_activation_bytes == s * (16 * h + 6 * 11008) == 32.125 * s * h
    assert off.layer_activation_bytes == on.layer_activation_bytes + 2 * 32 * s * s
    gpt = memory_per_gpu(preset("GPT-3 175B"), lay, Training(global_batch=1, seq_len=s))
    assert gpt.layer_activation_bytes == 34 * s * 12288  # Korthikanti Table 2 without 5as/h


def test_labels_come_from_the_registries():
    """Recipe, recompute and ZeRO labels live on their registries (today's texts: URL values)."""
    from core.parallel import ZERO_STAGES
    from core.training import RECOMPUTE, RECOMPUTE_MODES

    assert [r.label for r in RECIPES.values()] == [
        "16 B mixed Adam",
        "18 B Megatron",
        "16 B fp32 Adam",
        "12 B bf16 no master",
        "12 B SGD",
    ]
    assert RECOMPUTE_MODES == tuple(RECOMPUTE) == ("none", "selective", "full")
    assert [m.label for m in RECOMPUTE.values()] == ["No recompute", "Selective", "Full"]
    assert [m.phrase for m in RECOMPUTE.values()] == [
        "no recompute",
        "selective recompute",
        "full recompute",
    ]
    assert all(m.source for m in RECOMPUTE.values())
    assert [z.pytorch for z in ZERO_STAGES.values()] == [
        "NO_SHARD",
        "ZeroRedundancyOptimizer",
        "SHARD_GRAD_OP",
        "FULL_SHARD",
    ]


def test_block_types_store_what_their_layers_keep():
    """GPT keeps Korthikanti's 34 sbh + 5 a s^2 b; a Llama block is derived term by term."""
    from core.memory import block_of, gpt_block

    s, h, a = 2048, 8192, 64
    gpt = activation_bytes_per_layer(s, 1, h, a, block=gpt_block(h))
    assert gpt == activation_bytes_per_layer(s, 1, h, a) == 34 * s * h + 5 * a * s * s
    llama = block_of(preset("Llama-2 70B"))  # GQA g = 8 of 64, SwiGLU f = 28672, no dropout
    # whole 8h; Q + output input 4h; K + V 4h g/a = 0.5h; SwiGLU 6f = 21h; scores 2 a s^2.
    assert activation_bytes_per_layer(s, 1, h, a, block=llama) == (33.5 * s * h + 2 * a * s * s)
    # With TP 8 and no SP only the 8h stays whole; with SP everything is split.
    assert activation_bytes_per_layer(s, 1, h, a, 8, flash_attention=True, block=llama) == (
        (8 + 25.5 / 8) * s * h
    )
    assert activation_bytes_per_layer(s, 1, h, a, 8, True, "selective", block=llama) == (
        33.5 / 8 * s * h
    )
