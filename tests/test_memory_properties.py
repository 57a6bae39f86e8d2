"""Property tests: sharding never adds memory, totals are sums of parts, monotone in batch."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.memory import activation_bytes_per_layer, memory_per_gpu, model_state_bytes_per_gpu
from core.model import MODEL_PRESETS
from core.parallel import Layout
from core.training import RECIPES, Training

FAST = settings(max_examples=60, deadline=None)


def _divisors(n, limit=64):
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


@st.composite
def runs(draw):
    """A valid (model, layout, training) triple built from a preset."""
    m = draw(st.sampled_from(list(MODEL_PRESETS.values())))
    heads_ok = [t for t in _divisors(m.num_kv_heads, 16) if m.ffn_hidden_size % t == 0]
    t = draw(st.sampled_from(heads_ok))
    p = draw(st.sampled_from(_divisors(m.num_layers, 16)))
    schedule = draw(st.sampled_from(["1f1b", "gpipe"]))
    par = Layout(
        dp=draw(st.integers(1, 64)),
        tp=t,
        pp=p,
        zero_stage=draw(st.integers(0, 3)),
        sequence_parallel=draw(st.booleans()),
        micro_batch=draw(st.integers(1, 8)),
        schedule=schedule,
    )
    tr = Training(
        seq_len=draw(st.sampled_from([512, 2048, 4096])),
        global_batch=draw(st.integers(1, 32)) * par.dp * par.micro_batch,
        recipe=draw(st.sampled_from(list(RECIPES))),
        recompute=draw(st.sampled_from(["none", "selective", "full"])),
        flash_attention=draw(st.booleans()),
    )
    return m, par, tr


@FAST
@given(psi=st.integers(1, 10**12), dp=st.integers(1, 4096), recipe=st.sampled_from(list(RECIPES)))
def test_model_states_never_grow_with_more_sharding(psi, dp, recipe):
    totals = [model_state_bytes_per_gpu(psi, dp, z, recipe).total_bytes for z in range(4)]
    assert totals == sorted(totals, reverse=True)
    for z in range(4):
        assert (
            model_state_bytes_per_gpu(psi, dp + 1, z, recipe).total_bytes
            <= model_state_bytes_per_gpu(psi, dp, z, recipe).total_bytes
        )
    # ZeRO-3 holds at least the exact share and less than one extra element per state.
    z3 = model_state_bytes_per_gpu(psi, dp, 3, recipe).total_bytes
    bpp = RECIPES[recipe].bytes_per_param
    assert bpp * psi / dp <= z3 < bpp * (psi / dp + 1)


@FAST
@given(runs())
def test_more_sharding_never_increases_memory(run):
    m, par, tr = run
    # Sharded states and activations never grow; ZeRO-3 adds its gathered units on top, which
    # can outweigh the weights it shards when a GPU holds few layers (hence their own slice).
    runs_ = [memory_per_gpu(m, replace(par, zero_stage=z), tr) for z in range(4)]
    held = [r.total_bytes - r.gathered_bytes for r in runs_]
    assert held == sorted(held, reverse=True)
    assert [r.gathered_bytes > 0 for r in runs_] == [False, False, False, par.dp > 1]
    twice = replace(tr, global_batch=tr.global_batch * 2)  # the same micro-batches per pipeline
    more_dp = memory_per_gpu(m, replace(par, dp=par.dp * 2), twice)
    assert more_dp.total_bytes - more_dp.gathered_bytes <= held[par.zero_stage]


@FAST
@given(runs())
def test_totals_are_sums_of_parts(run):
    m, par, tr = run
    r = memory_per_gpu(m, par, tr)
    for s in r.stages:
        parts = s.parameters_bytes + s.gradients_bytes + s.optimizer_bytes + s.activations_bytes
        assert s.total_bytes == parts + s.gathered_bytes
        assert (
            s.activations_bytes
            == s.layers_in_flight * s.layer_activation_bytes + s.extra_activation_bytes
        )
    assert r.total_bytes == max(s.total_bytes for s in r.stages)
    assert (
        r.total_bytes
        == r.parameters_bytes
        + r.gradients_bytes
        + r.optimizer_bytes
        + r.activations_bytes
        + r.gathered_bytes
    )
    # Summing the TP-rank shards over stages recovers the model (+ the tied copy, + TP-replicated
    # norms).
    t, p = par.tp, par.pp
    total = t * sum(s.params_on_gpu for s in r.stages)
    replicated = (
        m.num_layers * m.layer_replicated_params + m.final_norm_params + m.position_embedding_params
    )
    tied_copy = m.word_embedding_params if m.tied_embeddings and p > 1 else 0
    padding = 2 * t  # vocab shards are padded to a multiple of t
    assert 0 <= total - (m.num_params + tied_copy + (t - 1) * replicated) < padding


@FAST
@given(runs(), st.integers(1, 7))
def test_monotone_in_micro_batch_and_seq_len(run, extra):
    m, par, tr = run
    base = memory_per_gpu(m, par, tr)
    b, mb = par.micro_batch, tr.num_microbatches(par)
    bigger = memory_per_gpu(
        m, replace(par, micro_batch=b + extra), replace(tr, global_batch=mb * par.dp * (b + extra))
    )
    longer = memory_per_gpu(m, par, replace(tr, seq_len=tr.seq_len * 2))
    assert bigger.total_bytes >= base.total_bytes and longer.total_bytes >= base.total_bytes
    # Activations are linear in the micro-batch, stage by stage.
    for lo, hi in zip(base.stages, bigger.stages):
        scaled = lo.activations_bytes * (b + extra) / b
        assert hi.activations_bytes == pytest.approx(scaled, rel=1e-12)


@FAST
@given(
    s=st.integers(1, 8192),
    b=st.integers(1, 16),
    heads=st.sampled_from([8, 32, 96, 128]),
    tp=st.sampled_from([1, 2, 4, 8]),
    sp=st.booleans(),
)
def test_recompute_and_flash_never_store_more(s, b, heads, tp, sp):
    h = heads * 128
    none = activation_bytes_per_layer(s, b, h, heads, tp, sp, "none")
    flash = activation_bytes_per_layer(s, b, h, heads, tp, sp, "none", True)
    sel = activation_bytes_per_layer(s, b, h, heads, tp, sp, "selective")
    full = activation_bytes_per_layer(s, b, h, heads, tp, sp, "full")
    assert none >= flash == sel >= full > 0
    with_sp = activation_bytes_per_layer(s, b, h, heads, tp, True)
    assert with_sp <= activation_bytes_per_layer(s, b, h, heads, tp)


@FAST
@given(runs())
def test_first_stage_holds_the_most_layer_activations_under_1f1b(run):
    m, par, tr = run
    r = memory_per_gpu(m, replace(par, schedule="1f1b"), tr)
    layer_acts = [s.layers_in_flight * s.layer_activation_bytes for s in r.stages]
    assert layer_acts == sorted(layer_acts, reverse=True)
    assert (
        r.stages[0].layers_in_flight
        == min(par.pp, tr.num_microbatches(par)) * m.num_layers / par.pp
    )
