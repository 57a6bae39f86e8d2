"""Planner page (AppTest): deep links against the core API, broken rules named, the ranked table.

Expected numbers come from calling core.planner directly in the test (search / evaluate with the
settings the URL encodes), never from the page's own output; the placement exercise's TP time is
also checked against the ring all-reduce worked by hand in tests/test_planner.py.
"""

import re
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, closest_fit, evaluate, search
from core.units import format_bytes, format_seconds
from tests.registry import ROOT, chart_specs, run_page_file

PAGE = str(ROOT / "app_pages" / "planner.py")
EXERCISE = dict(
    model="GPT-3 175B",
    seq="2048",
    gb="64",
    rc="full",
    pick="custom",
    dp="1",
    tp="8",
    pp="8",
    cmp="true",
)
DEFAULT = Training(global_batch=1152, seq_len=4096, recompute="selective")  # the page's defaults
CROSS = "#C62828"  # figures.style.COLOURS["crossing"], the outline of a group crossing a node


def run(**params: str) -> AppTest:
    return run_page_file(PAGE, **params)


specs = chart_specs


def metric(at: AppTest, label: str):
    return next(m for m in at.metric if m.label == label)


@pytest.fixture(scope="module")
def exercise():
    """The seeds' exercise via the core API: GPT-3 175B, 8 x 8 H100, TP 8 in NVLink vs across
    nodes.
    """
    model, cluster = preset("GPT-3 175B"), make_cluster(num_nodes=8, gpus_per_node=8)
    tr = Training(global_batch=64, seq_len=2048, recompute="full")
    return (
        evaluate(model, cluster, Layout(dp=1, tp=8, pp=8), tr),
        evaluate(model, cluster, Layout(dp=1, tp=8, pp=8, order="pp-tp-dp"), tr),
    )


def test_defaults_draw_the_searchs_fastest_layout_and_the_ranked_table():
    at = run()
    assert not at.error
    res = search(preset("Llama-2 70B"), make_cluster(num_nodes=8), DEFAULT)
    best = res.fastest
    assert metric(at, "Step time").value == format_seconds(best.step_time_s)
    assert metric(at, "MFU").value == f"{best.mfu:.1%}"
    assert metric(at, "GPUs").value == "64"
    assert (
        metric(at, "GPUs").delta
        == f"DP {best.layout.dp} × TP {best.layout.tp} × PP {best.layout.pp}"
    )
    cluster, overview = specs(at)
    assert (
        f"DP {best.layout.dp} × PP {best.layout.pp} × TP {best.layout.tp}"
        in cluster["layout"]["title"]["text"]
    )
    assert len(cluster["data"][0]["x"]) == 64
    # Left panel: the step-time stack sums to the step; right panel: one memory stack per pipeline
    # stage.
    time_bars = [t for t in overview["data"] if t.get("xaxis", "x") == "x"]
    assert sum(t["y"][0] for t in time_bars) == pytest.approx(best.step_time_s)
    memory = [t for t in overview["data"] if t.get("xaxis") == "x2" and t["name"] != "Reserve"]
    per_stage = [
        sum(t["y"][i] for t in memory) * 1e9 for i in range(best.layout.pp)
    ]  # GB, the default
    assert per_stage == pytest.approx([st.total_bytes for st in best.memory.stages])
    table = at.dataframe[0].value
    assert len(table) == min(60, len(res.ranked) + len(res.rejected))
    ranked = table[table.status == "ok"]
    assert len(ranked) == min(60, len(res.ranked))  # the table shows at most 60 rows
    assert list(ranked.step_time_s) == pytest.approx([e.step_time_s for e in res.ranked][:60])
    assert tuple(table.iloc[0][["dp", "tp", "pp", "zero_stage"]]) == (
        best.layout.dp,
        best.layout.tp,
        best.layout.pp,
        best.layout.zero_stage,
    )
    slower = res.boring.step_time_s / best.step_time_s - 1
    said = "also the fastest" if res.boring is res.fastest else f"{slower:.0%} slower"
    assert any(res.boring.layout.label in s.value and said in s.value for s in at.success)


def test_exercise_deep_link_shows_tp_inside_vs_tp_crossing(exercise):
    good, bad = exercise
    at = run(**EXERCISE)
    assert metric(at, "Step time").value == format_seconds(good.step_time_s)
    assert not at.warning  # TP inside NVLink: nothing crosses
    cluster = specs(at)[0]
    assert CROSS not in cluster["data"][0]["marker"]["line"]["color"]
    assert cluster["layout"]["title"]["subtitle"]["text"].startswith("0 of 8 TP groups cross")
    cmp = next(s for s in specs(at) if "vs" in s["layout"]["title"]["text"])
    assert cmp["layout"]["title"]["text"].startswith(
        "TP in node vs TP across nodes: TP across nodes takes "
        f"{bad.step_time_s / good.step_time_s:.2f}×"
    )
    tp = next(t for t in cmp["data"] if t["name"] == "exposed TP")
    assert tp["x"] == ["TP in node", "TP across nodes"]
    assert tp["y"] == pytest.approx([good.breakdown.tp_s, bad.breakdown.tp_s])
    compute = next(t for t in cmp["data"] if t["name"] == "compute")
    # Same work on each stage; the breakdown follows the busiest stage, which moves from the last
    # (LM head) to the first (its embedding all-reduce now crosses nodes).
    assert compute["y"] == pytest.approx([good.breakdown.compute_s, bad.breakdown.compute_s])
    assert good.stages[7].matmul_s == bad.stages[7].matmul_s
    # By hand (tests/test_planner.py): 64 micro-batches x 12 layers x 6 ring all-reduces of 48 MiB,
    # as NCCL's tuner picks them (ring/Simple; NVIDIA/nccl src/graph/tuning.cc): + 8.4 µs base,
    # and across nodes 14 NET hops at 14 µs, x1.4; across, + the embedding's one per micro-batch.
    n = 2048 * 12288 * 2
    inside = (8.4 + 14 * 3.4) * 1e-6 + 14 / 8 * n / (450e9 * 0.77)
    across = (8.4 + 14 * 14) * 1.4e-6 + 14 / 8 * n / (50e9 * 0.94)
    assert tp["y"][0] == pytest.approx(64 * 12 * 6 * inside)
    assert tp["y"][1] == pytest.approx((64 * 12 * 6 + 64) * across)
    text = next(m.value for m in at.markdown if "Same layout, TP across nodes" in m.value)
    assert format_seconds(good.step_time_s) in text and format_seconds(bad.step_time_s) in text


def test_exercise_with_tp_crossing_nodes_is_flagged_and_outlined(exercise):
    good, bad = exercise
    at = run(**EXERCISE, order="pp-tp-dp")
    assert metric(at, "Step time").value == format_seconds(bad.step_time_s)
    assert any(
        "cross the node boundary" in w.value and "InfiniBand NDR" in w.value for w in at.warning
    )
    cluster = specs(at)[0]
    assert cluster["data"][0]["marker"]["line"]["color"] == [CROSS] * 64
    cmp = next(s for s in specs(at) if "vs" in s["layout"]["title"]["text"])
    tp = next(t for t in cmp["data"] if t["name"] == "exposed TP")
    assert tp["x"] == ["TP across nodes", "TP in node"]
    assert tp["y"] == pytest.approx([bad.breakdown.tp_s, good.breakdown.tp_s])


def test_layout_not_using_every_gpu_names_the_rule_and_keeps_the_table():
    at = run(pick="custom", dp="2", tp="8", pp="8")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "DP x PP x TP = 2 x 8 x 8 = 128 ≠ 64 GPUs" in errors[0]
    assert "use DP = 1" in errors[0]
    assert specs(at)[0]["layout"]["title"]["text"].endswith("no layout drawn")
    assert len(at.dataframe[0].value) > 0  # the ranked table still shows


def test_tp_not_dividing_the_heads_names_the_rule():
    at = run(nodes="3", model="Llama-2 7B", gb="64", pick="custom", dp="8", tp="3", pp="1")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "TP=3 does not divide 32 attention heads" in errors[0]


def test_rejected_layouts_filter_by_rule_with_their_reasons():
    at = run(rule="TP crosses node")
    table = at.dataframe[0].value
    model, cluster = preset("Llama-2 70B"), make_cluster(num_nodes=8)
    res = search(model, cluster, DEFAULT)
    want = [r for r in res.rejected if r.rule == "TP crosses node"]
    assert len(table) == len(want) > 0 and set(table.status) == {"TP crosses node"}
    assert list(table.reason) == [r.reason for r in want]
    assert any("TP=16 exceeds 8 GPUs per node" in r for r in table.reason)
    # PP = 7 no longer needs to divide the 80 layers: the search splits them unevenly.
    seven = search(model, make_cluster(num_nodes=7), DEFAULT)
    assert any(e.layout.pp == 7 and sum(e.layout.layers_per_stage) == 80 for e in seven.ranked)
    memory = run(rule="memory").dataframe[0].value
    assert set(memory.status) == {"memory"} and all("does not fit" in r for r in memory.reason)


def test_nothing_fits_names_the_closest_layout_and_the_fix():
    at = run(nodes="1")  # 70B on 8 H100: 16 B/param is 1.1 TB, 140 GB per GPU even sharded
    model, cluster = preset("Llama-2 70B"), make_cluster(num_nodes=1)
    res = search(model, cluster, DEFAULT)
    assert not res.ranked
    error = at.error[0].value
    assert error.startswith("No layout of 8 GPUs runs Llama-2 70B")
    for rule in {r.rule for r in res.rejected}:
        assert f"{rule} ({sum(r.rule == rule for r in res.rejected):,})" in error
    assert specs(at)[0]["layout"]["title"]["text"] == "1 nodes × 8 H100 SXM · no layout drawn"
    assert any("nothing fits" in s.value for s in at.success)
    cl = closest_fit(model, cluster, DEFAULT, res)
    text = next(m.value for m in at.markdown if m.value.startswith("**Nothing fits.**"))
    assert cl.memory.layout.label in text
    assert format_bytes(cl.memory.total_bytes, "decimal") in text  # the default unit, GB
    grow = cl.fixes[-1]  # more nodes: the first doubling that fits, with its fastest layout
    k = int(grow.change.split("×")[0])
    assert grow.fits and grow.change == f"{k}× the nodes"
    fastest = search(model, make_cluster(num_nodes=k), DEFAULT).fastest
    assert not search(model, make_cluster(num_nodes=k // 2), DEFAULT).ranked
    assert format_seconds(fastest.step_time_s) in text


def test_pick_boring_and_compare_with_fastest():
    res = search(preset("Llama-2 70B"), make_cluster(num_nodes=8), DEFAULT)
    at = run(pick="boring", cmp="true", vs="fastest")
    assert metric(at, "Step time").value == format_seconds(res.boring.step_time_s)
    cmp = next(s for s in specs(at) if "vs" in s["layout"]["title"]["text"])
    ratio = res.fastest.step_time_s / res.boring.step_time_s
    assert cmp["layout"]["title"]["text"].startswith(
        f"drawn vs fastest: fastest takes {ratio:.2f}×"
    )


def test_calibration_table_and_self_checks():
    at = run()
    calib = at.dataframe[1].value
    assert len(calib) == 10 and list(calib["published TFLOP/s"])[:3] == [137, 138, 142]
    assert calib.error.abs().max() < 0.15
    at.number_input(key="q1").set_value(64).run()  # 4 x 8 x 2
    at.number_input(key="q2").set_value(8).run()  # PP innermost: all 8 TP groups span 8 nodes
    assert sum("Correct" in s.value for s in at.success) == 2


def test_gantt_on_request_is_the_simulated_pipeline_of_the_step():
    # A pipelined layout (the default search now picks PP = 1 on 81,559 MiB H100s).
    lay = Layout(dp=4, tp=8, pp=2, zero_stage=1)
    best = evaluate(preset("Llama-2 70B"), make_cluster(num_nodes=8), lay, DEFAULT)
    at = run(pick="custom", dp="4", tp="8", pp="2", zero="ZeRO-1")
    at.toggle(key="gantt").set_value(True).run()
    gantt = specs(at)[-1]
    m = DEFAULT.global_batch // (best.layout.dp * best.layout.micro_batch)
    # 288 micro-batches: each rank's ops merge into busy runs (a barcode otherwise).
    assert gantt["layout"]["title"]["text"] == f"1F1B · P={best.layout.pp} · M={m}, aggregated"
    busy = next(t for t in gantt["data"] if t["name"].startswith("busy"))
    assert sorted(busy["y"]) == list(range(best.layout.pp))  # one run per rank: no idle gaps
    # The pipeline makespan is the step minus what happens outside it (exposed DP sync, optimizer).
    makespan = best.step_time_s - best.breakdown.dp_s - best.breakdown.optimizer_s
    assert f"makespan {makespan:.4g} s" in gantt["layout"]["title"]["subtitle"]["text"]


def test_gantt_past_the_simulators_op_limit_says_why_and_the_page_goes_on():
    # 1F1B at P = 8 with M = 65,536 micro-batches (DP 1, micro-batch 1): 2 P M = 1,048,576 F and
    # B ops, over core.pipeline's 1,000,000-op limit. The step time comes from the planner's short
    # simulation (P + 2 micro-batches), so only the drawing cannot run: it says why and what to do.
    at = run(pick="custom", dp="1", tp="8", pp="8", gb="65536")
    at.toggle(key="gantt").set_value(True).run()
    assert not at.exception
    error = next(e.value for e in at.error if e.value.startswith("Gantt: "))
    assert "has 1,048,576 ops, over the 1,000,000-op limit" in error
    assert "use a smaller P·M·v" in error
    assert metric(at, "Step time").value  # the answer above still stands
    assert at.dataframe  # and the page goes on to the table


def _step_link(at: AppTest) -> dict[str, str]:
    """The query of the page's one "Draw this step" link (to the Training step page)."""
    found = [m for c in at.caption for m in re.findall(r"\[🎞️ Draw this step\]\(([^)]+)\)", c.value)]
    assert len(found) == 1, found
    path, _, query = found[0].partition("?")
    assert path == "training_step"
    return {k: v[0] for k, v in parse_qs(query).items()}


ZERO_LABELS = {0: "DDP", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3"}  # the ZeRO select's URL labels


def test_draw_this_step_link_carries_the_recommended_layout_and_the_run():
    at = run()
    assert not at.error
    best = search(preset("Llama-2 70B"), make_cluster(num_nodes=8), DEFAULT).fastest.layout
    q = _step_link(at)
    assert (q["pick"], q["dp"], q["tp"], q["pp"], q["zero"]) == (
        "custom",
        str(best.dp),
        str(best.tp),
        str(best.pp),
        ZERO_LABELS[best.zero_stage],
    )
    assert int(q["dp"]) * int(q["tp"]) * int(q["pp"]) == 64  # the page's 8 nodes × 8 GPUs
    assert (q["nodes"], q["gpn"], q["model"], q["seq"], q["gb"], q["rc"]) == (
        "8",
        "8",
        "Llama-2 70B",
        "4096",
        "1152",
        "selective",
    )


def test_draw_this_step_link_follows_a_custom_layout_and_cluster():
    at = run(**EXERCISE)  # GPT-3 175B on 8 × 8 H100, DP 1 × TP 8 × PP 8, global batch 64
    q = _step_link(at)
    assert (q["dp"], q["tp"], q["pp"], q["zero"], q["model"], q["gb"], q["seq"], q["rc"]) == (
        "1",
        "8",
        "8",
        "DDP",
        "GPT-3 175B",
        "64",
        "2048",
        "full",
    )


# ---------- issue 17: CP and EP in the planner ----------
def test_moe_preset_runs_and_the_answer_names_expert_parallelism():
    from core.expert_parallel.spec import any_preset

    at = run(model="Mixtral 8x7B", nodes="2", gb="64")
    assert not at.error and not at.exception
    tr = Training(global_batch=64, seq_len=4096, recompute="selective")
    best = search(any_preset("Mixtral 8x7B"), make_cluster(num_nodes=2), tr).fastest
    assert best.layout.ep > 1  # nothing fits 16 GPUs without sharding the experts
    assert metric(at, "Step time").value == format_seconds(best.step_time_s)
    words = " ".join(m.value for m in at.markdown)
    assert f"**Expert parallelism {best.layout.ep}:**" in words
    table = at.dataframe[0].value
    assert {"cp", "ep"} <= set(table.columns) and table.iloc[0]["ep"] == best.layout.ep


def test_custom_cp_layout_from_the_url_is_evaluated_with_its_ring():
    params = dict(model="Llama-3.1 70B", seq="131072", nodes="32", gb="16", sp="true")
    at = run(**params, pick="custom", dp="4", tp="8", pp="1", cp="8", ep="1", zero="ZeRO-3")
    assert not at.error and not at.exception
    tr = Training(global_batch=16, seq_len=131072, recompute="selective")
    lay = Layout(dp=4, tp=8, pp=1, cp=8, zero_stage=3, sequence_parallel=True)
    ev = evaluate(preset("Llama-3.1 70B"), make_cluster(num_nodes=32), lay, tr)
    assert metric(at, "Step time").value == format_seconds(ev.step_time_s)
    assert at.number_input(key="cp").value == 8


def test_ep_on_a_dense_model_names_the_rule_and_the_fix():
    at = run(pick="custom", dp="8", tp="8", pp="1", ep="2")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "EP=2 on a dense model" in errors[0] and "use EP = 1" in errors[0]
    assert len(at.dataframe[0].value) > 0  # the table still shows


# ---------- issue 18: the drawn-layout controls rerun only their fragment ----------
@pytest.fixture(scope="module")
def app():
    from tests.fragments import shared_app

    return shared_app()  # one spied server per test session (tests/fragments.py)


def test_compare_toggle_reruns_only_the_drawn_layout_fragment(app):
    tab = app.open("planner")
    assert tab.widgets["cmp"][1], "the compare toggle should sit inside a fragment"
    assert tab.widgets["colour"][1] == tab.widgets["cmp"][1]  # with Colour GPUs by
    with app.counting() as calls:
        tab.move("cmp", True)
    assert tab.fragment_run and not tab.exceptions
    assert calls["app_pages.common:start_page"] == 0  # the page body did not rerun
    assert calls["figures.planner:table_rows"] == 0  # nor the table section
    assert calls["figures.planner.run:search_run"] == 0  # nor the search
    assert calls["figures.planner:cluster_figure"] == 0  # the drawn figures come from cache
    assert calls["figures.planner:compare_figure"] == 1  # the one new figure
    # only the new chart goes out in full; the unchanged cluster map and time/memory chart
    # (≥ 10 kB each) go as references to the browser's cached copies (the harness sends its
    # cached hashes, as the browser does), and the chart component leaves them as drawn
    assert tab.charts == ["compare"] and tab.kept == ["cluster", "layout"]
    assert "cmp" in tab.url_bound


def test_nodes_slider_reruns_the_search_section_not_the_page(app):
    tab = app.open("planner")
    assert tab.widgets["nodes"][1], "Nodes should sit in the search section's fragment"
    with app.counting() as calls:
        tab.move("nodes", 4)
    assert tab.fragment_run and not tab.exceptions
    assert calls["app_pages.common:start_page"] == 0  # title, sidebar: not re-sent
    assert calls["app_pages.common.lesson:self_check"] == 0  # nor the self-checks
    assert calls["figures.planner:calibration_rows"] == 0  # nor the calibration tables
    assert calls["figures.planner:table_rows"] == 1  # the table follows the new cluster
    assert "Every layout of 32 GPUs, fastest first" in tab.texts  # 4 nodes × 8 GPUs
    # the takeaway, in the tail's slot, is rewritten from the fragment for the new search
    assert sum(t.startswith("**Takeaway.**") for t in tab.texts) == 1
