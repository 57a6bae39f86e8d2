"""Why this layout, what flips it, the closest layout when nothing fits, and the page's words and
aggregated Gantt: each number checked against a brute-force search or a hand calculation."""

from dataclasses import replace

import pytest

from core.hardware import make_cluster
from core.memory import budget
from core.model import preset
from core.parallel import Layout, ParallelDims, group_span
from core.planner import (
    LLAMA3_405B,
    Training,
    closest_fit,
    evaluate,
    explain,
    group_collective_s,
    layout_memory,
    search,
    validate,
)
from figures.planner.gantt import aggregated_gantt_figure, busy_runs
from figures.planner.table import table_rows
from figures.planner.why import short_label, why_markdown

DEFAULT = Training(global_batch=1152, seq_len=4096, recompute="selective")


@pytest.fixture(scope="module")
def llama70():
    model, cluster = preset("Llama-2 70B"), make_cluster(num_nodes=8)
    res = search(model, cluster, DEFAULT)
    return model, cluster, res, explain(model, cluster, DEFAULT, res)


def test_memory_floor_by_brute_force(llama70):
    model, cluster, res, why = llama70
    floor = min(e.layout.tp * e.layout.pp for e in res.ranked)
    assert why.memory_floor == floor > 1
    # Every TP x PP below the floor, at every ZeRO stage and micro-batch 1 (the smallest): over.
    usable = budget(0.0, cluster.gpu.hbm_bytes, DEFAULT.memory_headroom).usable_bytes
    below = [(t, p) for t in (1, 2, 4, 8) for p in (1, 2, 4, 8) if t * p < floor]
    tries = [
        layout_memory(model, Layout(dp=64 // (t * p), tp=t, pp=p, zero_stage=z), DEFAULT)
        for t, p in below
        for z in range(4)
    ]
    assert all(m.total_bytes > usable for m in tries)
    assert why.below_floor.total_bytes == pytest.approx(min(m.total_bytes for m in tries))
    assert f"TP × PP ≥ {floor}" in why_markdown(why)


def test_tp8_alternative_and_runner_up_are_the_searchs(llama70):
    _, _, res, why = llama70
    assert why.best.layout.tp != 8
    assert why.other_tp is next(e for e in res.ranked if e.layout.tp == 8)
    text = why_markdown(why)
    extra = why.other_tp.breakdown.tp_s - why.best.breakdown.tp_s
    assert f"{why.other_tp.step_time_s / why.best.step_time_s - 1:+.0%}" in text and extra > 0
    sig = lambda e: (e.layout.dp, e.layout.tp, e.layout.pp, e.layout.zero_stage)  # noqa: E731
    assert why.runner_up is next(e for e in res.ranked if sig(e) != sig(why.best))


def test_flips_rerank_todays_top_layouts(llama70):
    """Each what-if is the fastest of today's top 40 layouts re-evaluated under the change."""
    model, cluster, res, why = llama70
    by = {f.change: f for f in why.flips}
    assert set(by) == {"batch", "gpus", "network"}

    def brute(cl, tr, scale):
        evs = []
        for e in res.ranked[:40]:
            lay = replace(e.layout, dp=e.layout.dp * scale)
            for cand in (lay, replace(lay, micro_batch=1)):
                try:
                    ev = evaluate(model, cl, cand, tr)
                except ValueError:
                    continue
                evs += [ev] if ev.fits else []
                break
        return min(evs, key=lambda x: x.step_time_s)

    quarter = brute(cluster, replace(DEFAULT, global_batch=288), 1)
    assert by["batch"].winner.step_time_s == pytest.approx(quarter.step_time_s)
    double = brute(make_cluster(num_nodes=16), DEFAULT, 2)
    assert by["gpus"].winner.step_time_s == pytest.approx(double.step_time_s)
    eff = replace(DEFAULT.efficiency, inter_link=DEFAULT.efficiency.inter_link / 4)
    slow = brute(cluster, replace(DEFAULT, efficiency=eff), 1)
    assert by["network"].winner.step_time_s == pytest.approx(slow.step_time_s)
    b = why.best.layout
    assert by["network"].flips == (
        (slow.layout.tp, slow.layout.pp, slow.layout.zero_stage) != (b.tp, b.pp, b.zero_stage)
    )


def test_zero3_gather_by_hand():
    """Llama-3.1 405B on 32 x 8 H100, B = 1,024, full recompute: DP 256 x ZeRO-3 wins; one layer's
    all-gather, two-level: 8 GPUs on NVLink, then 32 nodes on the NICs with 1/8 of the bytes."""
    model, cluster = preset("Llama-3.1 405B"), make_cluster(num_nodes=32)
    tr = Training(global_batch=1024, seq_len=4096, recompute="full")
    res = search(model, cluster, tr)
    why = explain(model, cluster, tr, res, what_ifs=False)
    assert (why.best.layout.tp, why.best.layout.pp, why.best.layout.zero_stage) == (1, 1, 3)
    h, kv, f = 16384, 8 * 128, 53248
    n = 2 * (2 * h * h + 2 * h * kv + 3 * h * f + 2 * h)  # bf16 weights of one layer, by hand
    span = group_span(ParallelDims(dp=256), "dp", cluster)  # all 256 GPUs, 8 on each node
    want = group_collective_s("all_gather", span, n, cluster, tr.efficiency)
    assert why.zero3_layer_gather_s == pytest.approx(want)
    assert why.sequences_per_gpu == 4
    assert why.zero3_layer_gather_s < why.best.stage.layer_forward_s  # hidden, as the text says
    assert "gathers hide behind compute" in why_markdown(why)


def test_closest_fit_when_nothing_fits():
    model, cluster = preset("Llama-2 70B"), make_cluster(num_nodes=1)
    res = search(model, cluster, DEFAULT)
    cl = closest_fit(model, cluster, DEFAULT, res)
    assert not res.ranked and cl.over_bytes > 0
    assert cl.memory.total_bytes == min(m.total_bytes for m in res.least_memory.values())
    names = [f.change for f in cl.fixes]
    assert names[-1].endswith("× the nodes")
    for f in cl.fixes[:-1]:
        assert f.memory.total_bytes < cl.memory.total_bytes  # each change saves memory
        assert f.fits == (f.memory.total_bytes <= cl.usable_bytes)


def test_short_labels_are_human_and_skip_degree_one(llama70):
    _, _, res, _ = llama70
    for e in res.ranked[:20]:
        text = short_label(e)
        assert "interleaved_1f1b" not in text and "1f1b" not in text
        assert ("PP" in text) == (e.layout.pp > 1) and ("TP" in text) == (e.layout.tp > 1)
    rows = table_rows(res)
    assert {r["schedule_label"] for r in rows if r["status"] == "ok"} <= {"1F1B", "GPipe"} | {
        f"Interleaved v={v}" for v in range(2, 9)
    } | {f"Interleaved 1F1B v={v}" for v in range(2, 9)}
    assert {r["zero"] for r in rows if r["status"] == "ok"} <= {"DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3"}


def test_aggregated_gantt_merges_back_to_back_ops():
    model, cluster = preset("Llama-2 70B"), make_cluster(num_nodes=8)
    ev = evaluate(model, cluster, Layout(dp=4, tp=4, pp=4, zero_stage=2), DEFAULT)
    pipe = ev.pipeline()
    assert pipe.num_microbatches == 288
    runs = busy_runs(pipe)
    # 1F1B at M = 288 with equal middle stages: each rank's ops run back to back after the fill.
    assert [r for r, *_ in runs] == [0, 1, 2, 3]
    assert all(k == 2 * 288 for *_, k, _ in runs)
    for r, s, e, _, busy in runs:
        assert busy == pytest.approx(pipe.busy_s[r])
        assert e - s >= busy
    fig = aggregated_gantt_figure(pipe)
    assert fig["layout"]["title"]["text"].endswith("M=288, aggregated")
    assert len(fig["data"][1]["y"]) == 4


def test_validation_rows_set_no_parameter():
    row = validate(LLAMA3_405B[0])
    ev = row.fitting
    assert ev.fits and ev.layout.layers_per_stage == (7,) + (8,) * 14 + (7,)
    assert ev.training.efficiency.matmul == 0.7  # the Table 1 fit, untouched
    assert row.error == pytest.approx(ev.mfu / 0.43 - 1)
    assert abs(row.error) < 0.2
