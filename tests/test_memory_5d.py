"""Memory with context and expert parallelism (issue 17, "Everywhere else"): MoE models as
ModelSpecs, CP and EP in core.memory, and the rules a 5-D layout must obey. Every expected value
is derived by hand in the comments, from the tensor shapes or the formula sources named there.
"""

from __future__ import annotations

import pytest

from core.expert_parallel import MOE_PRESETS, MoeConfig, counts
from core.expert_parallel.spec import ALL_PRESETS, MOE_MODEL_PRESETS, any_preset, moe_spec
from core.memory import memory_per_gpu, what_fits
from core.model import preset
from core.parallel import Layout
from core.training import Training

# A tiny MoE: h 8, 2 layers, V 16, 2 heads of 4 (MHA), 4 experts of FFN 4, top-2, no shared.
# Per layer: 2 RMSNorms 2·8 = 16; Wq, Wk, Wv, Wo 4·8·8 = 256; router 4·8 = 32; experts
# 4 · 3·8·4 = 384 (gate, up, down) → 688. Model: 2·688 + embedding 128 + head 128 + norm 8 = 1640.
# Active: 1640 − 2 layers · (4 − 2) skipped experts · 96 = 1256.
TINY = MoeConfig(
    name="tiny",
    hidden=8,
    layers=2,
    vocab=16,
    heads=2,
    kv_heads=2,
    head_dim=4,
    experts=4,
    top_k=2,
    expert_ffn=4,
)


def _train(**kw) -> Training:
    return Training(**({"global_batch": 8, "seq_len": 8} | kw))


def test_tiny_moe_counts_by_hand():
    m = moe_spec(TINY)
    assert (m.num_params, m.active_params) == (1640, 1256)
    assert m.parts()["routed experts"] == 768
    assert m.params_per_gpu(1, 1, 0) == 1640 - 768  # everything but the routed experts
    assert m.expert_params_per_gpu(1, 1, 0, ep=2) == 384  # 2 of 4 experts, both layers


def test_tiny_moe_states_with_ep_by_hand():
    # DP 2, EP 2, ZeRO-1, mixed Adam (2 + 2 + 12 bytes): dense 872 params replicated, their
    # optimizer over DP = 2 → 436; experts 384 per GPU, EDP = DP × CP / EP = 1 → 384.
    r = memory_per_gpu(moe_spec(TINY), Layout(dp=2, ep=2, zero_stage=1), _train())
    assert (r.params_on_gpu, r.expert_params_on_gpu) == (872, 384)
    assert r.parameters_bytes == r.gradients_bytes == 2 * (872 + 384)
    assert r.optimizer_bytes == 12 * (436 + 384)


def test_tiny_moe_states_with_tp_and_ep_by_hand():
    # TP 2 (= ETP), DP 2, EP 2, ZeRO-1: per layer 48 whole (norms 16 + router 32) + 256/2 split;
    # embedding and head vocab-parallel 128/2 each, final norm 8 → 2·(48 + 128) + 64 + 8 + 64 = 488.
    # Experts 768 / (EP 2 × ETP 2) = 192, EDP = 1. Optimizer: 12·(488/2 + 192) = 5232.
    r = memory_per_gpu(moe_spec(TINY), Layout(dp=2, tp=2, ep=2, zero_stage=1), _train())
    assert (r.params_on_gpu, r.expert_params_on_gpu) == (488, 192)
    assert r.states_bytes == 4 * (488 + 192) + 12 * (244 + 192)


def test_expert_states_shard_over_the_expert_data_parallel_group():
    # DP 4 × CP 2 = 8 ranks hold replicas of the dense part; EP 2 → EDP 4 for the experts.
    # ZeRO-3: dense 872 / 8 = 109 each of weights, grads, optimizer; experts 384 / 4 = 96.
    lay = Layout(dp=4, cp=2, ep=2, zero_stage=3)
    r = memory_per_gpu(moe_spec(TINY), lay, _train())
    assert lay.edp == 4 and lay.world_size == 8
    assert r.parameters_bytes == 2 * (109 + 96)
    assert r.optimizer_bytes == 12 * (109 + 96)


def test_cp_halves_activations_and_shards_zero_over_dp_x_cp():
    # Llama-2 7B (N = 6,738,415,616, HF config; h 4096, f 11008, MHA, V 32000, no dropout),
    # selective recompute + flash, TP 1: per token and layer 8h + 4q + 4kv + 6f = 131,584 bytes
    # (docs/notes/memory.md §3); CP 2 of 4096 tokens → 2048 per rank; 32 layers; the last stage
    # adds 4sbh (final-norm and head inputs) + 4sbV (fp32 logits) at s = 2048.
    m, s = preset("Llama-2 7B"), 2048
    tr = _train(global_batch=4, seq_len=4096, recompute="selective")
    r = memory_per_gpu(m, Layout(dp=4, cp=2, zero_stage=1), tr)
    assert r.activations_bytes == 32 * 131584 * s + 4 * s * 4096 + 4 * s * 32000
    n = 6_738_415_616
    assert m.num_params == n
    assert r.states_bytes == 2 * n + 2 * n + 12 * n // 8  # optimizer over DP × CP = 8 ranks


@pytest.mark.parametrize("name", list(MOE_PRESETS))
def test_moe_presets_are_listed_with_their_exact_counts(name):
    m = any_preset(name)
    c = counts(MOE_PRESETS[name])
    assert name in ALL_PRESETS and name in MOE_MODEL_PRESETS
    assert (m.num_params, m.active_params) == (c.total, c.active)
    assert sum(m.parts().values()) == c.total
    # summed over the GPUs of one TP × EP group of a stage, dense once and experts once
    assert m.params_per_gpu(1, 1, 0) + m.expert_params_per_gpu(1, 1, 0, ep=1) == c.total


def test_mixtral_fits_on_eight_h100_with_ep_but_not_without():
    # Mixtral 8x7B: 46.7B params, 45.1B of them routed experts (8 × 32 layers × 3·4096·14336).
    # DDP on one GPU needs 16 B × 46.7B ≈ 747 GB; ZeRO-3 over DP 8 with EP 8 holds 1/8 of it.
    m = any_preset("Mixtral 8x7B")
    assert m.parts()["routed experts"] == 8 * 32 * 3 * 4096 * 14336
    tr = _train(seq_len=4096, recompute="full")
    big = memory_per_gpu(m, Layout(dp=8, zero_stage=0), tr).states_bytes
    small = memory_per_gpu(m, Layout(dp=8, ep=8, zero_stage=3), tr).states_bytes
    assert big == 16 * m.num_params
    assert small == pytest.approx(16 * m.num_params / 8, rel=1e-6)


@pytest.mark.parametrize(
    "model, layout, seq, rule",
    [
        ("Mixtral 8x7B", dict(dp=3, cp=2, ep=3), 4096, "EP=3 does not divide 8 experts"),
        ("Llama-2 7B", dict(dp=2, ep=2), 4096, "EP=2 on a dense model"),
        ("Llama-2 7B", dict(dp=1, cp=8), 4104, r"2·CP = 16 chunks"),
        ("Llama-2 7B", dict(dp=1, cp=64, cp_kind="ulysses"), 4096, "Ulysses with CP=64"),
    ],
)
def test_rules_that_need_the_model_name_the_rule_and_the_fix(model, layout, seq, rule):
    with pytest.raises(ValueError, match=rule) as err:
        lay = Layout(**layout)
        memory_per_gpu(any_preset(model), lay, _train(global_batch=lay.dp, seq_len=seq))
    assert "use" in str(err.value)


def test_ep_must_divide_dp_x_cp():
    with pytest.raises(ValueError, match=r"EP × ETP = 8 does not divide TP × CP × DP = 6"):
        Layout(dp=3, tp=2, ep=4)
    assert Layout(dp=2, cp=2, ep=4).edp == 1  # EP may span CP ranks too


def test_what_fits_counts_cp_gpus_and_steps_dp_in_multiples_ep_allows():
    # EP 4, CP 2: DP must be a multiple of 2 for EP to divide DP × CP.
    m = any_preset("Mixtral 8x7B")
    rows = what_fits(m, Layout(dp=2, cp=2, ep=4), _train(seq_len=4096), 80e9)
    for row in rows:
        assert row.min_dp is None or row.min_dp % 2 == 0
        assert row.min_gpus is None or row.min_gpus == row.min_dp * 2
