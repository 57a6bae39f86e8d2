"""The pages' words and runs moved out of app_pages (text.py and run.py in the figures packages):
values checked by hand, no Streamlit.
"""

from urllib.parse import parse_qsl, urlsplit

import pytest

from core.hardware import make_cluster
from core.model import preset
from core.planner import Training, search
from figures import trace_text as tt
from figures.memory import text as mt
from figures.memory.run import Run as MemoryRun
from figures.memory.run import Split, compute
from figures.planner import text as pt
from figures.planner.run import Run, evaluate_run, search_run


def test_planner_row_click_fills_the_layout_widgets_with_their_url_labels():
    row = dict(dp=2, tp=4, pp=8, zero_stage=1, micro_batch=2, schedule="interleaved_1f1b")
    values = pt.row_controls(row | dict(num_chunks=1, reason=""))
    assert values == dict(
        pick="custom",
        dp=2,
        tp=4,
        pp=8,
        zero="ZeRO-1",
        mb=2,
        sched="Interleaved 1F1B",  # the schedule registry's label
        v=2,  # the chunks slider starts at 2
        order="tp-pp-dp",  # the default order: TP innermost
        cp=1,  # a row without CP / EP degrees is a 3-D layout
        ep=1,
    )


def test_planner_row_for_a_whole_family_is_a_note_not_a_layout():
    row = dict(dp=2, tp=1, pp=32, zero_stage=None, micro_batch=None, reason="PP=32 splits 80")
    note = pt.row_controls(row | dict(schedule="1f1b", num_chunks=1))
    assert note == "That row stands for every DP 2 × TP 1 × PP 32 layout: PP=32 splits 80"


def test_planner_run_is_a_cache_key_equal_for_equal_controls():
    tr = Training(global_batch=1152, seq_len=4096, recompute="selective")
    a = Run(model="Llama-2 70B", cluster=make_cluster(num_nodes=8), training=tr)
    # "GPU's own" link and naming the H100's NVLink 4 build the same cluster: one cache entry.
    b = Run(
        model="Llama-2 70B",
        cluster=make_cluster(num_nodes=8, intra_link_name="NVLink 4"),
        training=Training(global_batch=1152, seq_len=4096, recompute="selective"),
    )
    assert a == b and hash(a) == hash(b)
    res = search_run(a)
    direct = search(preset("Llama-2 70B"), make_cluster(num_nodes=8), tr)
    assert [e.step_time_s for e in res.ranked] == [e.step_time_s for e in direct.ranked]
    best = evaluate_run(a, res.fastest.layout)
    assert best.step_time_s == pytest.approx(direct.fastest.step_time_s)


def test_planner_picked_layout_names_every_rule_when_nothing_runs():
    # One node of 7 GPUs (7 nodes of 8 now run Llama-2 70B: PP = 7 or 28 on uneven stages). The
    # three grids by hand: DP 7 does not divide 1152 = 2^7 · 3^2 (batch); TP 7 does not divide 64
    # heads (model split); PP 7 holds 69e9 params x 16 B / 7 ≈ 158 GB per GPU on average > 80 GB
    # (memory, for 1F1B and GPipe at each of the 24 micro-batches dividing 1152: 48), and
    # interleaved 1F1B needs M a multiple of 7, never true as 7 ∤ 1152 (schedule: v = 2..8, every
    # stage of the 10 / 12 x 5 / 10 split holding ≥ 8 layers, times 24 micro-batches: 168).
    tr = Training(global_batch=1152, seq_len=4096, recompute="selective")
    cluster = make_cluster(num_nodes=1, gpus_per_node=7)
    res = search_run(Run(model="Llama-2 70B", cluster=cluster, training=tr))
    with pytest.raises(ValueError, match="No layout of 7 GPUs runs Llama-2 70B") as err:
        pt.picked_layout(res, "fastest", 7, "Llama-2 70B")
    for rule in ("schedule (168)", "memory (48)", "batch (1)", "model split (1)"):
        assert rule in str(err.value)
    assert "PP at most the layers" in str(err.value)  # uneven stages: PP need not divide them


def test_planner_self_checks_answer_by_hand():
    q1, q2 = pt.self_checks()
    assert q1["answer"] == 4 * 8 * 2
    # PP innermost on 8 x 8: the 8 stages of one pipeline fill a node, so every TP group spans all
    # 8 nodes.
    assert q2["answer"] == 8 and "each of 8 nodes" in q2["explanation"]


def test_planner_exercise_links_open_the_page_on_both_cases():
    text = pt.exercise_markdown()
    links = [part.split(")", 1)[0] for part in text.split("](")[1:]]
    assert len(links) == 2 and all(link.startswith("planner?") for link in links)
    first = dict(parse_qsl(urlsplit(links[0]).query))
    assert first == dict(pt.EXERCISE) and links[1] == links[0] + "&order=pp-tp-dp"


def test_memory_sizing_lines_keep_the_global_settings_in_their_links():
    lines = mt.sizing_lines([("Q1?", "A1."), ("Q2?", "A2."), ("Q3?", "A3.")], {"mem": "GB"})
    assert lines[0].startswith("**Q1?** A1. [Open this setting ↗](memory?")
    query = dict(parse_qsl(urlsplit(lines[1].split("](", 1)[1][:-1]).query))
    assert query == {"model": "Llama-2 70B", "dp": "16", "zero": "3", "rc": "full", "mem": "GB"}
    assert "mem=GB" not in " ".join(mt.sizing_lines([("Q?", "A.")], {}))


def test_memory_run_hsdp_shards_over_one_node_and_params_only_has_no_activations():
    run = MemoryRun(
        model="Llama-2 7B",
        seq=4096,
        recipe="mixed_adam",
        flash=True,
        gpu="H100 SXM",
        reserve_pct=5,
        units="binary",
    )
    out = compute(run, Split(dp=32, tp=1, pp=1, zero="hsdp", mb=1, rc="none", sp=False))
    assert out["nd"] == 8  # HYBRID_SHARD: ZeRO-3 inside an 8-GPU node, replicated across
    p7 = preset("Llama-2 7B").num_params
    assert out["states"][0] == 16 * p7  # DDP: 2 + 2 + 12 bytes per parameter on every GPU
    bare = MemoryRun(
        model="params",
        billions=13,
        seq=4096,
        recipe="mixed_adam",
        flash=True,
        gpu="H100 SXM",
        reserve_pct=5,
        units="binary",
    )
    out = compute(bare, Split(dp=8, tp=1, pp=1, zero="3", mb=1, rc="none", sp=False))
    assert out["ch"].activations_bytes == 0 and out["trade"] is False
    assert out["states"][3] == pytest.approx(16 * 13e9 / 8)


def test_trace_takeaway_names_the_gap_and_what_it_tests():
    class Step:  # a plan step: 12 ms, 2 of its 4 ms of communication hidden
        step_s, comm_s, hidden_comm_s = 0.012, 0.004, 0.002

    fitted = tt.takeaway(Step.step_s, 0.010, 0.45, 0.5, fitted=True)
    assert "the plan's step is 12 ms against 10 ms measured (+20%)" in fitted
    assert "the trace hid 45% of its communication behind compute, the plan 50%" in fitted
    hand = tt.takeaway(Step.step_s, 0.010, 0.45, 0.5, fitted=False)
    assert hand.startswith("At hand-set rates the plan predicts 12 ms per step against 10 ms")
    # The slide's headline (issue 15): one line of the same numbers, 12 ms / 10 ms − 1 = +20%.
    slide = tt.takeaway(Step.step_s, 0.010, 0.45, 0.5, fitted=True, presenting=True)
    assert slide == "Fitted: plan 12 ms vs trace 10 ms (+20%); comm hidden: plan 50%, trace 45%."
    slide = tt.takeaway(Step.step_s, 0.010, 0.45, 0.5, fitted=False, presenting=True)
    assert slide.startswith("Hand-set: plan 12 ms vs trace 10 ms (+20%)") and len(slide) < 90
    metrics = tt.metrics(Step.step_s, 0.010, 0.45, 0.5)
    assert [m["value"] for m in metrics] == ["10 ms", "12 ms", "45%", "50%"]
    assert metrics[1]["delta"] == "+20% vs trace"
