"""Uneven pipeline stages: layer splits, per-stage times, per-rank simulator durations, memory of an
uneven split, and Llama 3 405B's published layout."""

import itertools

import pytest

from core.hardware import make_cluster
from core.memory import memory_per_gpu
from core.model import gpt_spec, preset
from core.parallel import Layout
from core.pipeline import simulate
from core.planner import Training, evaluate, layout_memory, pipeline_makespan_s, search
from core.planner.splits import balanced_split, head_layers


def test_layout_validates_layers_per_stage():
    lay = Layout(dp=1, pp=3, layers_per_stage=(3, 4, 3))
    assert lay.stage_layers(10) == (3, 4, 3)
    assert "layers 3/4…/3" in lay.label
    assert Layout(dp=1, pp=2).stage_layers(8) == (4, 4)
    with pytest.raises(ValueError, match="lists 2 stages for PP=3"):
        Layout(dp=1, pp=3, layers_per_stage=(5, 5))
    with pytest.raises(ValueError, match="add up to 10, not the model's 11"):
        lay.stage_layers(11)
    with pytest.raises(ValueError, match="add up to 9, not the model's 10"):
        Layout(dp=1, pp=3).stage_layers(10)  # 10 layers do not split evenly over 3


def test_llama3_405b_head_and_split_by_hand():
    """Llama 3 405B: h 16,384, 128 heads / 8 KV, FFN 53,248, V 128,256, 126 layers, s 8,192."""
    h, f, V, kv, s, L = 16384, 53248, 128256, 8 * 128, 8192, 126
    layer = 2 * (2 * h * h + 2 * h * kv + 3 * h * f) + 4 * h * s  # weights x 2 + QK^T, AV
    head = 2 * V * h
    assert head_layers(preset("Llama-3.1 405B"), s) == pytest.approx(head / layer)
    assert head / layer == pytest.approx(0.608, abs=1e-3)
    # Middle stages of 8 layers; first 7, last 7 + 0.61 ≤ 8: the paper's split (Sec. 3.3.2).
    assert balanced_split(L, 16, 0.608) == (7,) + (8,) * 14 + (7,)


@pytest.mark.parametrize("L, p, head", [(10, 3, 0.5), (13, 4, 1.2), (9, 2, 0.3), (20, 5, 2.5)])
def test_balanced_split_is_the_brute_force_minimum(L, p, head):
    # Every Megatron-style split (first a, middle k each, last c) by brute force.
    best = min(
        (max(a, *([k] * (p - 2)), c + head), a, k, c)
        for a, k, c in itertools.product(range(1, L + 1), repeat=3)
        if a + (p - 2) * k + c == L and (p > 2 or k == 1)
    )
    got = balanced_split(L, p, head)
    assert sum(got) == L and max(*got[:-1], got[-1] + head) == pytest.approx(best[0])


def test_simulator_per_rank_durations():
    # Uniform lists reproduce the scalar call exactly.
    a = simulate("1f1b", 4, 8, 1, 1.0, 1.0, 1.0)
    b = simulate("1f1b", 4, 8, 1, [1.0] * 4, [1.0] * 4, [1.0] * 4)
    assert a.makespan_s == b.makespan_s and a.busy_s == b.busy_s
    # 1F1B on 2 stages, the last heavier (F 1, B 2 vs F 2, B 4), M = 3, by hand: stage 1 runs
    # back to back once the first F arrives: F0 + 3 x (2 + 4) + B0 = 1 + 18 + 2.
    r = simulate("1f1b", 2, 3, 1, [1.0, 2.0], [1.0, 2.0], [1.0, 2.0])
    assert r.makespan_s == pytest.approx(21.0)
    assert r.busy_s == pytest.approx((9.0, 18.0))
    with pytest.raises(ValueError, match="lists 3 durations for 2 ranks"):
        simulate("1f1b", 2, 3, 1, [1.0, 1.0, 1.0])


def test_gpipe_uneven_closed_form_by_hand():
    # GPipe: forwards are a flow shop of M identical jobs (sum F + (M-1) max F), then backwards.
    f, b = (1.0, 1.5, 2.0), (2.0, 3.0, 5.0)
    want = sum(f) + 3 * max(f) + sum(b) + 3 * max(b)
    assert pipeline_makespan_s("gpipe", 3, 4, 1, f, b) == pytest.approx(want)
    half = [x / 2 for x in b]
    assert simulate("gpipe", 3, 4, 1, list(f), half, half).makespan_s == pytest.approx(want)


@pytest.mark.parametrize("schedule, v", [("1f1b", 1), ("interleaved_1f1b", 2)])
@pytest.mark.parametrize("p", [4, 8])
@pytest.mark.parametrize("edges", [(0.9, 1.3), (1.2, 1.0), (0.8, 0.8)])
def test_uneven_makespan_extension_within_3_percent_of_full_simulation(schedule, v, p, edges):
    f, b = [1.0] * p, [2.0] * p
    f[0], b[0] = f[0] * edges[0], b[0] * edges[0]
    f[-1], b[-1] = f[-1] * edges[1], b[-1] * edges[1]
    for m in (3 * p, 8 * p):
        full = simulate(schedule, p, m, v, f, [x / 2 for x in b], [x / 2 for x in b]).makespan_s
        got = pipeline_makespan_s(schedule, p, m, v, tuple(f), tuple(b))
        assert got == pytest.approx(full, rel=0.03)


def test_uneven_memory_moves_one_layer_between_stages():
    model = gpt_spec("toy GPT", 6, 1024, 16, 32000, 1024)
    tr = Training(global_batch=8, seq_len=1024)
    even = memory_per_gpu(model, Layout(dp=1, pp=2), tr)
    same = layout_memory(model, Layout(dp=1, pp=2, layers_per_stage=(3, 3)), tr)
    assert [s.total_bytes for s in same.stages] == pytest.approx(
        [s.total_bytes for s in even.stages]
    )
    moved = layout_memory(model, Layout(dp=1, pp=2, layers_per_stage=(2, 4)), tr)
    layer = 12 * 1024 * 1024 + 13 * 1024  # one GPT layer's parameters
    assert moved.stages[0].params_on_gpu == even.stages[0].params_on_gpu - layer
    assert moved.stages[1].params_on_gpu == even.stages[1].params_on_gpu + layer
    # 1F1B with M = 8: stage 0 holds P = 2 micro-batches of its layers, stage 1 one.
    assert moved.stages[0].layers_in_flight == pytest.approx(2 * 2)
    assert moved.stages[1].layers_in_flight == pytest.approx(1 * 4)
    a0 = moved.stages[0].layer_activation_bytes
    assert moved.stages[0].activations_bytes == pytest.approx(
        even.stages[0].activations_bytes - 2 * a0
    )


def test_llama3_405b_published_layout_evaluates_with_lighter_edges():
    """TP 8, PP 16, DP 64 on 8,192 H100, s = 8,192, 16M-token batch (2,048 sequences), 126 layers
    as 7 / 8 x 14 / 7 (Dubey et al. 2024, Sec. 3.3.2 and Table 4)."""
    model = preset("Llama-3.1 405B")
    cluster = make_cluster(num_nodes=1024, gpus_per_node=8)
    tr = Training(global_batch=2048, seq_len=8192, recompute="full")
    split = (7,) + (8,) * 14 + (7,)
    ev = evaluate(model, cluster, Layout(dp=64, tp=8, pp=16, layers_per_stage=split), tr)
    st = ev.stages
    assert [s.layers for s in st] == list(split)
    assert st[0].forward_s != st[1].forward_s and st[-1].forward_s != st[-2].forward_s
    assert st[0].forward_s < st[1].forward_s  # 7 layers + embedding < 8 layers
    assert st[1].forward_s > st[-1].forward_s > st[0].forward_s  # 7 layers + LM head in between
    assert len({(s.forward_s, s.backward_s) for s in st[1:-1]}) == 1  # middle stages equal
    assert ev.num_microbatches == 32 and 0.2 < ev.mfu < 0.6


def test_search_splits_layers_that_pp_does_not_divide():
    model = gpt_spec("toy GPT", 10, 1024, 16, 32000, 1024)
    res = search(model, make_cluster(num_nodes=1, gpus_per_node=8), Training(global_batch=16))
    pp4 = [e for e in res.ranked if e.layout.pp == 4]
    assert pp4 and all(
        e.layout.layers_per_stage == balanced_split(10, 4, round(head_layers(model, 2048), 3))
        for e in pp4
    )
    assert all(sum(e.layout.layers_per_stage) == 10 for e in pp4)
