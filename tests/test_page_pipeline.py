"""Pipeline page (AppTest): deep links, broken schedule rules, compare mode, exports, self-check.

Expected numbers are worked by hand from the closed forms of docs/notes/pipeline.md §3, not read
back from the page: 1F1B / GPipe A = (P−1)/(M+P−1); ZB-H1 idle per rank = (P−1)(t_F + t_I − t_W).
"""

import csv
import io
import json

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from core.pipeline import simulate
from tests.registry import ROOT, chart_specs, run_page_file

PAGE = str(ROOT / "app_pages" / "pipeline.py")  # from_file resolves relative paths against tests/


def run(**params: str) -> AppTest:
    return run_page_file(PAGE, **params)


specs = chart_specs


FLOW = "Pipeline ("  # the drawing of micro-batches flowing through the stages


def titles(at: AppTest) -> list[str]:
    """Chart titles, including the bold subplot titles of a side-by-side figure."""
    out = []
    for spec in specs(at):
        lay = spec["layout"]
        if lay.get("title", {}).get("text", "").startswith(FLOW):
            continue  # the flow drawing: its own test below
        out += [lay["title"]["text"]] if "title" in lay else []
        out += [a["text"][3:-4] for a in lay.get("annotations", []) if a["text"].startswith("<b>")]
    return out


def metric(at: AppTest, prefix: str, nth: int = 0):
    return [m for m in at.metric if m.label.startswith(prefix)][nth]


def test_defaults_show_the_worked_example():
    # docs/notes/pipeline.md §3: P=4, M=8, t_F=1, t_B=2: T = 33, idle 9 a rank, A = 9/33, B = 9/24.
    at = run()
    assert not at.error
    assert metric(at, "A.").value == f"{9 / 33:.1%}"
    assert metric(at, "B.").value == f"{9 / 24:.1%}"
    assert metric(at, "C.").value == f"{9 / 33:.1%}"  # 1F1B: every rank spans the whole step
    assert metric(at, "Peak").value == "4 mb"  # rank 0 holds P − 0 = 4
    assert titles(at) == [
        "1F1B · P=4 · M=8",
        "Bubble vs M · P=4",
        "Peak activations per rank · P=4 · M=8",
    ]
    table = next(md.value for md in at.markdown if "closed form |" in md.value)
    assert table.count(f"{9 / 33:.3%}") == 2 and table.count("| 9 s |") == 2


def test_deep_link_p8_m64_shows_the_1f1b_bubble():
    at = run(p="8", m="64")
    expected = (8 - 1) / (64 + 8 - 1)  # 7/71
    core = simulate(
        "1f1b", 8, 64, forward_s=1.0, backward_input_s=1.0, backward_weight_s=1.0
    ).bubble_fraction
    assert core == pytest.approx(expected)
    assert metric(at, "A.").value == f"{expected:.1%}" == "9.9%"
    gantt = specs(at)[0]
    assert gantt["layout"]["title"]["text"] == "1F1B · P=8 · M=64"
    assert f"bubble {expected:.1%}" in gantt["layout"]["title"]["subtitle"]["text"]
    assert any(f"{expected:.3%}" in md.value for md in at.markdown)  # 9.859% in the table


def test_interleaved_with_m_not_a_multiple_of_p_names_the_rule_and_keeps_the_page():
    at = run(sched="Interleaved", m="6")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "multiple of P" in errors[0] and "M=6" in errors[0]
    assert "use M=8" in errors[0]
    # The Gantt is replaced by the message; the sweep, memory chart and self-check still render.
    assert titles(at) == ["Bubble vs M · P=4", "Peak activations per rank · P=4 · M=6"]
    assert not at.get("download_button")
    assert len(at.number_input) == 2


def test_v_schedule_below_2p_states_the_rule():
    at = run(sched="ZB-V", m="4")
    assert any("M ≥ 2P" in e.value for e in at.error)


def test_compare_mode_draws_two_gantts_with_their_own_numbers():
    at = run(cmp="true")  # second schedule defaults to ZB-H1
    gantts = [t for t in titles(at) if "M=8" in t and not t.startswith("Peak")]
    assert gantts == ["1F1B · P=4 · M=8", "ZB-H1 · P=4 · M=8"]
    # Split backward shows t_I and t_W (1 each, so 1F1B's B = 2 as before).
    # ZB-H1: idle (P−1)(t_F + t_I − t_W) = 3, T = 8·3 + 3 = 27: A = 3/27.
    first, second = metric(at, "A.", 0), metric(at, "A.", 1)
    assert first.value == f"{9 / 33:.1%}" and second.value == f"{3 / 27:.1%}"
    assert second.delta == f"{(3 / 27 - 9 / 33) * 100:+.1f} pts vs first"
    assert len(at.get("download_button")) == 4
    bars = [t["name"] for t in specs(at)[-1]["data"] if t["type"] == "bar"]
    assert bars == ["GPipe", "1F1B", "ZB-H1"]


def test_compare_the_same_schedule_twice_and_big_rasters():
    at = run(cmp="true", sched="ZB-H1")
    assert len(at.get("download_button")) == 4
    at = run(p="32", m="128", sched="ZB-V", cmp="true", sched2="DualPipeV")
    heat = [s for s in specs(at) if s["data"][0]["type"] == "heatmap"]
    assert len(heat) == 2  # 24,576 and 17,904 ops: raster, not bars


def test_v_is_forced_where_the_schedule_fixes_it():
    at = run(sched="ZB-V", v="4")
    assert titles(at)[0] == "ZB-V · P=4 · M=8 · v=2"
    assert any("forced to 2" in c.value for c in at.caption)
    at = run(sched="Interleaved", v="3", p="2", m="4")
    assert titles(at)[0] == "Interleaved 1F1B · P=2 · M=4 · v=3"
    at = run(sched="Interleaved", v="1")
    assert titles(at)[0].endswith("v=2") and any("v ≥ 2" in c.value for c in at.caption)


def test_sweep_marks_this_run_on_the_formula():
    at = run(sched="Interleaved")
    sweep = specs(at)[-1]  # bubble vs M (left) beside peak activations (right)
    star = next(t for t in sweep["data"] if t["name"].startswith("this run"))
    # Interleaved, v = 2: A = (P−1)/(vM + P−1) = 3/19 at M = 8.
    assert star["x"] == [8] and star["y"] == [pytest.approx(3 / 19)]
    pts = next(t for t in sweep["data"] if t["name"] == "Interleaved (v=2) simulated")
    assert pts["x"] == [4, 8, 16, 32, 64, 128]  # multiples of P only
    assert pts["y"] == pytest.approx([3 / (2 * m + 3) for m in pts["x"]])


def test_latency_is_named_as_the_gap_to_the_formula():
    # By hand, 1F1B at P=2, M=4, t_F=1, t_B=2, 0.5 s per send: every steady-state B on rank 0
    # waits a round trip, the step ends at 17 s (not 12 + 3 = 15): A = 2·(17 − 12)/(2·17).
    at = run(p="2", m="4", lat="0.5")
    assert metric(at, "A.").value == f"{10 / 34:.1%}"
    table = next(md.value for md in at.markdown if "closed form |" in md.value)
    assert f"{3 / 15:.3%}" in table and "p2p latency" in table  # the formula ignores latency


def test_downloads_hold_the_simulated_timeline(monkeypatch):
    made = {}
    original = MediaFileManager.add_deferred

    def spy(self, fn, *args, **kwargs):
        fid = original(self, fn, *args, **kwargs)
        made[fid] = fn
        return fid

    monkeypatch.setattr(MediaFileManager, "add_deferred", spy)
    at = run()
    buttons = {b.proto.label: b.proto.deferred_file_id for b in at.get("download_button")}
    assert set(buttons) == {"Chrome trace (JSON)", "Timeline (CSV)"}
    trace = json.loads(made[buttons["Chrome trace (JSON)"]]())
    boxes = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(boxes) == 2 * 4 * 8  # one F and one B per (rank, micro-batch)
    busy = {r: sum(e["dur"] for e in boxes if e["tid"] == r) for r in range(4)}
    assert busy == {r: pytest.approx(8 * 3 * 1e6) for r in range(4)}  # M(t_F + t_B) in µs
    rows = list(csv.DictReader(io.StringIO(made[buttons["Timeline (CSV)"]]())))
    assert len(rows) == 64 and max(float(r["end_s"]) for r in rows) == pytest.approx(33)


@pytest.mark.parametrize("m, answer", [(8, 100 * 7 / 15), (64, 100 * 7 / 71)])
def test_self_check_accepts_the_right_answer_within_1_percent(m, answer):
    at = run()
    box = at.number_input(key=f"q{m}")
    box.set_value(round(answer * 1.005, 3)).run()
    assert any("Correct" in s.value for s in at.success)
    box.set_value(round(answer * 1.03, 3)).run()
    assert any("Not quite" in e.value for e in at.error)


def _button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def test_keys_step_p_and_m_and_every_press_lands():
    at = run(p="4", m="12")
    shortcuts = {b.label: b.proto.shortcut for b in at.button}
    assert shortcuts["M × 2 →"] == "right" and shortcuts["P + 1 ↑"] == "up"
    _button(at, "M × 2 →").click().run()  # 12 → the next power of two, 16
    assert at.slider(key="m").value == 16 and at.query_params["m"] == "16"
    # A press made during the last rerun carries the browser's stale M (12): it still doubles 16.
    at.slider(key="m").set_value(12)
    _button(at, "M × 2 →").click().run()
    assert at.slider(key="m").value == 32
    assert not [w for w in at.warning if "was ignored" in w.value]  # the URL said m=12: no notice
    _button(at, "M ÷ 2 ←").click().run()
    _button(at, "P + 1 ↑").click().run()
    assert (at.slider(key="p").value, at.slider(key="m").value) == (5, 16)
    # The Gantt follows: 1F1B, P = 5, M = 16: A = (P−1)/(M+P−1) = 4/20 = 20.0%.
    assert "1F1B · P=5 · M=16" in titles(at)
    assert metric(at, "A.").value == "20.0%"
    for _ in range(3):
        _button(at, "P − 1 ↓").click().run()
    assert at.slider(key="p").value == 2  # clamped at the slider's minimum


def _is_flow(spec: dict) -> bool:
    return spec["layout"].get("title", {}).get("text", "").startswith(FLOW)


def test_the_flow_drawing_follows_the_chosen_schedule_and_refuses_big_pipes_politely():
    at = run(sched="GPipe")
    (flow,) = [sp for sp in specs(at) if _is_flow(sp)]
    assert flow["layout"]["title"]["text"].startswith("Pipeline (GPipe)")
    assert "4 GPUs · 8 micro-batches" in flow["layout"]["title"]["subtitle"]["text"]
    big = run(p="16")  # more GPUs than the drawing animates: a warning names the limit
    assert not big.exception and not big.error
    assert not [sp for sp in specs(big) if _is_flow(sp)]
    assert any("P ≤ 8" in w.value for w in big.warning)


# --- the fill-and-drain time cursor (issue 14 §3: in the URL, in sync, no spurious notices) -----


def _cover(at: AppTest) -> list[float]:
    """[x0, x1] of the Gantt's cover over what has not happened yet, [] for the whole step."""
    shapes = specs(at)[0]["layout"].get("shapes", [])
    return [[s["x0"], s["x1"]] for s in shapes if s["type"] == "rect"][0] if shapes else []


def test_a_link_opens_at_the_moment_the_pipe_is_full():
    # 1F1B, P = 4, M = 8, t_F = 1: rank r starts F0 at r s, so the moments run 0, 1, 2, 3 … and
    # moment 3 (t = 3 s) is the first with all four ranks busy. Every later op is covered.
    at = run(t="3")
    assert _cover(at) == [3.0, 33.0] and not [w for w in at.warning if "ignored" in w.value]
    said = " ".join(md.value for md in at.markdown)
    assert "t = 3 s · 4 of 4 ranks busy, the pipe is full" in said
    flow = next(sp for sp in specs(at) if _is_flow(sp))
    assert (
        "at t = 3 s (the pipe is full) of a 33 s step"
        in flow["layout"]["title"]["subtitle"]["text"]
    )
    assert "frames" not in flow and "frames" not in specs(at)[0]  # one control: the page's


def test_the_cursor_opens_at_the_whole_step_and_stays_there_as_p_moves():
    at = run()
    assert _cover(at) == [] and at.slider(key="t").value == at.slider(key="t").proto.max
    _button(at, "P + 1 ↑").click().run()  # P = 5: a longer step, more moments
    assert _cover(at) == [] and at.slider(key="t").value == at.slider(key="t").proto.max
    assert "1F1B · P=5 · M=8" in titles(at)


def test_next_and_back_step_one_moment_and_keep_the_url_without_notices():
    at = run(t="3")
    at.button(key="t_L").click().run()
    assert at.slider(key="t").value == 4 and at.query_params["t"] == "4" and _cover(at)[0] == 4.0
    at.button(key="t_J").click().run()
    at.button(key="t_J").click().run()
    assert at.slider(key="t").value == 2 and _cover(at)[0] == 2.0
    assert not [w for w in at.warning if "was ignored" in w.value]  # the URL said t=3: no notice
    at.button(key="t_End").click().run()
    assert _cover(at) == []


def test_play_at_the_end_starts_from_the_first_moments_and_pause_stops():
    at = run()
    at.button(key="t_play").click().run()  # ▶ at the whole step: replay from the start
    assert at.button(key="t_play").label == "❚❚ Pause" and 0 < at.slider(key="t").value <= 1
    assert _cover(at)[0] == at.slider(key="t").value  # moments 0, 1 are t = 0 s, 1 s here
    at.button(key="t_play").click().run()
    assert at.button(key="t_play").label == "▶ Play" and not at.exception


def test_a_moment_past_the_end_falls_back_to_the_whole_step_with_a_notice():
    at = run(t="999")
    notes = [w.value for w in at.warning if "`t=999`" in w.value]
    assert len(notes) == 1 and "must be a moment from 0 to" in notes[0] and _cover(at) == []


# --- fragment guards (issue 18): a real server, spied, over the browser's protocol ---------------

PAGE_RUN = "app_pages.common:start_page"  # once per whole-page run, never in a fragment
GANTT = "app_pages.common.pipeline_view:_gantt"
SWEEP = "app_pages.common.pipeline_view:m_and_memory"  # the section below the fragment
DRAWN = "app_pages.common.pipeline_view:_flow"


@pytest.fixture(scope="module")
def app():
    from tests.fragments import spied_app

    with spied_app(PAGE_RUN, GANTT, SWEEP, DRAWN) as a:
        yield a


def test_the_time_cursor_reruns_only_the_timeline_fragment(app):
    tab = app.open("pipeline")
    assert tab.widgets["t"][1] and tab.widgets["p"][1]  # both in fragments: t's inside P's
    assert tab.widgets["t"][1] != tab.widgets["p"][1]
    with app.counting() as calls:
        tab.move("t", 3)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE_RUN] == 0 and calls[SWEEP] == 0  # the page and the bubble chart: untouched
    assert calls[DRAWN] == 1 and tab.charts == ["gantt0", "pp_draw"]  # only these re-sent
    assert "t" in tab.url_bound  # still bound to ?t= inside the fragment
    with app.counting() as calls:
        tab.move("t_L", True)  # Next ▶ (key L): the same fragment only
    assert tab.fragment_run and calls[PAGE_RUN] == 0 and calls[SWEEP] == 0


def test_p_reruns_the_sections_it_feeds_not_the_page(app):
    """P feeds the Gantt, the drawing and the M-vs-memory chart: one fragment
    (app_pages/pipeline.py), so the title, takeaway and self-checks are not re-sent."""
    tab = app.open("pipeline")
    with app.counting() as calls:
        tab.move("p", 5)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE_RUN] == 0 and calls[SWEEP] == 1
    assert {"gantt0", "pp_draw", "m_and_memory"} <= set(tab.charts) and "t" in tab.url_bound
    assert not any(t.startswith("**Takeaway.**") for t in tab.texts)  # static: not re-sent
    # the How lines follow P: 1F1B at P=5, M=8 idles (P−1)/(M+P−1) = 4/12 of the step
    assert any("| 12 s | 33.333% |" in t for t in tab.texts), tab.texts


def test_a_self_check_answer_reruns_only_the_checks(app):
    tab = app.open("pipeline")
    with app.counting() as calls:
        tab.move("q8", 46.7)
    assert tab.fragment_run and calls[PAGE_RUN] == 0 and calls[GANTT] == 0 and tab.charts == []
