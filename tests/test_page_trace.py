"""AppTest for the plan-vs-trace page: the demo, uploads (good, broken, hostile), deep links."""

import gzip
import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from core.traces import analyze, load_trace
from tests.charts import charts
from tests.registry import ROOT, chart_specs, run_page_file

DEMO = sorted((ROOT / "data" / "traces").glob("ddp_gloo_rank*.json.gz"))


def run(**params: str) -> AppTest:
    return run_page_file(str(ROOT / "app_pages" / "trace.py"), **params)


def upload(files: list[tuple[str, bytes]]) -> AppTest:
    at = run(demo="false")
    at.file_uploader(key="files").set_value(
        [(n, d, "application/octet-stream") for n, d in files]
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


specs = chart_specs


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+) (ms|µs|s)", text).groups()
    return float(value) * {"ms": 1e-3, "µs": 1e-6, "s": 1.0}[unit]


def test_demo_renders_both_ranks_and_the_plan():
    at = run(src="gloo")
    assert not at.error and not at.warning
    trace, timeline, bars = specs(at)
    assert {y for t in trace["data"] for y in t["y"]} == {"trace · rank 0", "trace · rank 1"}
    assert {y for t in timeline["data"] for y in t["y"]} == {"plan · rank 0", "plan · rank 1"}
    assert bars["data"][0]["y"] == ["trace · rank 0", "trace · rank 1", "plan · every rank"]
    # The displayed step time is the mean traced span over the 3 profiled steps.
    spans = [
        r.span_s for r in analyze([load_trace(p.read_bytes(), name=p.name) for p in DEMO]).ranks
    ]
    assert ms(metric(at, "Step time: trace")) == pytest.approx(sum(spans) / 2 / 3, rel=2e-3)
    names = at.dataframe[1].value["op"].tolist()
    assert set(names) == {"gloo:all_reduce", "c10d::allreduce_"}
    assert [b.label for b in at.get("download_button")] == [
        "Analysis (CSV)",
        "Simulated plan (Chrome trace JSON)",
    ]
    # Issue 15 §3: the Perfetto address is a link, not plain text.
    assert any("[ui.perfetto.dev](https://ui.perfetto.dev)" in m.value for m in at.markdown)


def test_deep_link_sets_the_plan_ranks():
    at = run(n="4", fit="false", gf="100", src="gloo")
    rows = {y for t in specs(at)[1]["data"] for y in t["y"]}
    assert rows == {f"plan · rank {r}" for r in range(4)}
    assert at.slider(key="gf").value == 100


def test_no_upload_asks_for_files():
    at = run(demo="false")
    assert not at.error and "Upload one trace per rank" in at.info[0].value
    assert not charts(at)


def test_uploading_the_demo_files_gives_the_demo_view():
    at = upload([(p.name, p.read_bytes()) for p in DEMO])
    assert not at.error
    assert metric(at, "Step time: trace") == metric(run(src="gloo"), "Step time: trace")


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("bad.json", b'{"traceEvents": [', "ends early"),
        ("cut.json.gz", DEMO[0].read_bytes()[:-50], "gzip stream ends early"),
        ("list.json", b"[1, 2]", "no complete"),
        ("nan.json", b'[{"ph": "X", "ts": NaN, "dur": 1}]', "not valid JSON"),
        (
            "zero.json",
            b'[{"ph": "X", "ts": 5, "dur": 0, "cat": "cpu_op", "name": "aten::mm"}]',
            "span 0",
        ),
    ],
)
def test_broken_upload_shows_an_error_not_a_traceback(name, data, message):
    at = upload([(name, data)])
    assert (
        len(at.error) == 1
        and name.split(".")[0] in at.error[0].value
        and message in at.error[0].value
    )
    assert not charts(at)


def test_hostile_names_stay_plain_text():
    raw = json.loads(gzip.decompress(DEMO[0].read_bytes()))
    evil = "<img src=x onerror=alert(1)> all_reduce ![x](http://e.vil/p.png)"
    for e in raw["traceEvents"]:
        if e.get("name") == "gloo:all_reduce":
            e["name"] = evil
    at = upload(
        [
            ("<script>alert(1)</script>.json", json.dumps(raw).encode()),
            (DEMO[1].name, DEMO[1].read_bytes()),
        ]
    )
    assert not at.error
    assert evil in at.dataframe[1].value["op"].tolist()  # shown as data, verbatim
    assert at.dataframe[0].value["file"][0] == "_script_alert_1___script_.json"
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "<img" not in shown and "e.vil" not in shown and "<script" not in shown
    assert "e.vil" not in json.dumps(specs(at))  # no file text in the charts


def test_one_rank_cannot_fit_a_bandwidth_and_says_so():
    at = upload([(DEMO[0].name, DEMO[0].read_bytes())])
    # distributedInfo says world size 2: the bandwidth fit uses p = 2 and says a file is missing.
    assert "world size 2, but 1 file was given" in at.warning[0].value and len(specs(at)) == 3


def test_page_never_renders_html():
    for f in ("app_pages/trace.py", "figures/trace.py"):
        assert "unsafe_allow_html" not in (ROOT / f).read_text()


# ---- the A100 NCCL demo (HolisticTraceAnalysis) and planner layouts (issue 16, item 9) ---------

A100 = ROOT / "data" / "traces" / "a100_2rank_nccl_ddp_rank0.json.gz"


def test_a100_demo_is_the_default_with_its_licence_and_its_model_size():
    assert (
        (ROOT / "data" / "traces" / "LICENSE.HolisticTraceAnalysis")
        .read_text()
        .startswith("MIT License")
    )
    # The model size the page assumes, recounted from the file: the all-reduced elements of the
    # record_param_comms events inside the first ProfilerStep.
    ev = json.loads(gzip.decompress(A100.read_bytes()))["traceEvents"]
    step = next(e for e in ev if e.get("name", "").startswith("ProfilerStep#"))
    inside = [
        e["args"]["In msg nelems"]
        for e in ev
        if e.get("name") == "record_param_comms"
        and e["args"].get("Collective name") == "allreduce"
        and step["ts"] <= e["ts"] <= step["ts"] + step["dur"]
    ]
    assert sum(inside) == 25_557_032  # ResNet-50's parameter count
    at = run()
    assert at.number_input(key="params").value == 25_557_032 and not at.error
    assert "world size 2, but 1 file was given" in at.warning[0].value
    assert "GPU kernels" in " ".join(c.value for c in at.caption)


def test_a_planner_layout_as_the_plan_and_a_rank_count_warning():
    at = run(plan="layout", ldp="4", ltp="2", lpp="1")
    rows = {y for t in specs(at)[1]["data"] for y in t["y"]}
    assert rows == {f"plan · rank {r}" for r in range(8)}  # DP 4 × TP 2 = 8 ranks
    warn = " ".join(w.value for w in at.warning)
    assert "The plan has 8 ranks but the traced job had 2" in warn
    assert not run(plan="layout", ldp="2").warning[1:]  # 2 = 2: only the demo's own note


def test_the_self_checks_answer_is_hidden_until_answered():
    # Issue 15 §3: the per-rank table printed rank 0's idle time right above the question.
    at = run(src="gloo")
    r0 = analyze([load_trace(p.read_bytes(), name=p.name) for p in DEMO]).ranks[0]
    idle_ms = r0.idle_s * 1e3
    assert "idle_s" not in at.dataframe[0].value.columns
    words = " ".join(m.value for m in at.markdown)
    assert "idle (the self-check below)" in words
    at.number_input(key="q1").set_value(round(idle_ms, 3)).run()
    assert any(s.value.startswith("Correct") for s in at.success)
    table = at.dataframe[0].value
    assert table["idle_s"].iloc[0] == pytest.approx(idle_ms)  # shown once answered, in ms


def test_plan_inputs_fold_into_one_expander_labelled_with_their_values():
    at = run(src="gloo", n="4", batch="32")
    label = next(e.label for e in at.expander if e.label.startswith("Plan inputs"))
    # the gloo demo's model: 4 × (512² + 512) = 1,050,624 parameters, DDP buckets of 1 MiB
    assert label == "Plan inputs · 4 ranks · 1,050,624 parameters · 32 samples per rank · 1 MiB"


def test_presenter_slide_takeaway_is_one_line_of_the_metrics_numbers():
    """Issue 15: the slide's headline says what the metric row shows, in one line; the laptop
    page keeps the full five-line takeaway."""
    from tests.test_pages import run_app

    def takeaway(at: AppTest) -> str:
        return next(s.value for s in at.success if s.value.startswith("**Takeaway.**"))

    slide = run_app("app_pages/trace.py", {"present": "true"})
    assert not slide.exception
    trace_s, plan_s = metric(slide, "Step time: trace"), metric(slide, "Step time: plan")
    hid_t, hid_p = metric(slide, "Comm hidden: trace"), metric(slide, "Comm hidden: plan")
    line = takeaway(slide).removeprefix("**Takeaway.** ")
    gap = ms(plan_s) / ms(trace_s) - 1  # from the shown (rounded) metrics: the sign and size
    assert line.startswith(f"Fitted: plan {plan_s} vs trace {trace_s} (")
    assert abs(int(line.split("(")[1].split("%")[0]) - 100 * gap) < 3 and len(line) <= 90
    assert line.endswith(f"comm hidden: plan {hid_p}, trace {hid_t}.")
    full = takeaway(run_app("app_pages/trace.py"))
    assert full.count(".") >= 3 and "Fitted to the trace's own compute" in full


# --- fragment guard (issue 18): a real server, counted, over the browser's protocol -------------

PAGE_RUN = "app_pages.common:start_page"  # once per whole-page run, never in a fragment
TABLE = "figures.trace_text:rank_rows"  # the per-rank table, built from the trace alone
PLAN_FIG = "figures.trace:plan_figure"


@pytest.fixture(scope="module")
def app():
    from tests.fragments import shared_app

    return shared_app()


def test_a_plan_control_reruns_the_plan_section_only(app):
    tab = app.open("trace")
    assert tab.widgets["n"][1] and tab.widgets["demo"][1] == ""  # n in the fragment, demo not
    with app.counting() as calls:
        tab.move("n", 5)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE_RUN] == 0 and calls[TABLE] == 0 and calls[PLAN_FIG] == 1
    # the trace's own chart is unchanged (the 5-rank plan fits in its span): not re-sent in full
    assert tab.charts == ["timeline", "breakdown"] and tab.refs >= 1
    assert "n" in tab.url_bound  # still bound to the URL inside the fragment


def test_the_demo_switch_reruns_the_page(app):
    tab = app.open("trace")
    with app.counting() as calls:
        tab.move("src", "gloo")
    assert not tab.fragment_run and calls[PAGE_RUN] == 1 and calls[TABLE] == 1
    assert tab.charts == ["trace", "timeline", "breakdown"]
