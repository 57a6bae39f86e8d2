"""The training-step page in AppTest: its defaults follow the planner's pick, a deep link opens a
custom layout at a phase, and the words under the chart name the links the traffic uses.
"""

import pytest

from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, evaluate, search
from core.stepplan import step_plan
from tests.registry import assert_self_check, chart_specs, run_page_file

PAGE = "app_pages/training_step.py"


def _title(spec: dict) -> str:
    return spec["layout"]["title"]["text"]


def test_defaults_draw_the_planners_fastest_layout_before_the_step():
    at = run_page_file(PAGE)
    assert not at.error, [e.value for e in at.error]
    (spec,) = chart_specs(at)
    model, cluster = preset("Llama-2 70B"), make_cluster(num_nodes=8)
    training = Training(global_batch=1152, seq_len=4096, recompute="selective")
    fastest = search(model, cluster, training).fastest.layout  # the planner page's defaults
    assert fastest.label in " ".join(c.value for c in at.caption)
    # The stepper has one step per phase of that layout's step, in the core's order; which
    # phases exist depends on the pick (no gather phase under ZeRO-0/3, no drain at PP = 1).
    plan = step_plan(model, cluster, fastest, training)
    n = len(plan.phases)
    assert at.slider(key="phase").max == n - 1 and n >= 4
    assert "frames" not in spec  # one step control: the stepper, not an in-chart Play
    assert _title(spec).startswith(f"<b>Phase 1 of {n}: Before the step")
    assert at.slider(key="phase").value == 0


def test_deep_link_opens_a_custom_layout_at_its_fill():
    at = run_page_file(PAGE, pick="custom", dp="1", tp="8", pp="8", gb="64", phase="1")
    assert not at.error, [e.value for e in at.error]
    (spec,) = chart_specs(at)
    assert _title(spec).startswith("<b>Phase 2 of 5: Forward: the pipeline fills")
    veil = next(t for t in spec["data"] if t.get("name") == "waiting (greyed)")
    # Stage r runs P - r of the fill's forwards: busy (8 - r) F_r / sum F. The last stage also
    # times the LM head (F_7 a few % above the others), so stage 4 drops just under a half too.
    tr = Training(global_batch=64, seq_len=4096, recompute="selective")
    lay = Layout(dp=1, tp=8, pp=8)
    f = [
        st.forward_s
        for st in evaluate(preset("Llama-2 70B"), make_cluster(num_nodes=8), lay, tr).stages
    ]
    waiting = [r for r in range(8) if (8 - r) * f[r] / sum(f) < 0.5]
    assert waiting == [4, 5, 6, 7]
    assert veil["x"].count(None) == len(waiting) * 8  # the waiting stages wait > half the fill
    words = " ".join(m.value for m in at.markdown)
    assert "TP all-reduce (activations)" in words and "inside a node (NVLink 4)" in words
    assert "across nodes (InfiniBand NDR)" in words  # PP: one stage per node
    assert "stage(s) 4, 5, 6, 7" in words
    # The last of 8 stages waits for 7 forwards and computes 1 of the 8 the fill lasts: 87.5 %.
    assert_self_check(at, "q1", 87.5, 50)


def test_a_layout_that_breaks_a_rule_says_which():
    at = run_page_file(PAGE, pick="custom", dp="3", tp="8", pp="8")
    assert any("DP x PP x TP" in e.value or "DP × PP × TP" in e.value for e in at.error), [
        e.value for e in at.error
    ]


def test_draw_this_step_link_opens_that_layout():
    from app_pages.common.links import step_query, step_url
    from core.parallel import Layout

    lay = Layout(dp=2, tp=8, pp=4, zero_stage=1, micro_batch=2, order="tp-dp-pp")
    query = step_query(lay, nodes=8, global_batch=256, phase=4)
    at = run_page_file(PAGE, **query)
    assert not at.error, [e.value for e in at.error]
    assert not [w.value for w in at.warning if "URL value" in w.value]  # every value taken
    assert lay.label in " ".join(c.value for c in at.caption)
    (spec,) = chart_specs(at)
    assert spec["layout"]["title"]["text"].startswith("<b>Phase 5 of 7: Gradient sync")
    assert step_url(lay, nodes=8).startswith("training_step?nodes=8&gpn=8&gpu=H100%20SXM&")


SMALL = dict(nodes="2", pick="custom", tp="2", pp="2", gb="64", phase="2")  # 16 GPUs, steady


def test_cp_deep_link_draws_the_cp_ring():
    at = run_page_file(
        PAGE, model="Llama-2 7B", dp="2", cp="2", **SMALL
    )  # DP 2 x CP 2 x TP 2 x PP 2
    assert not at.error, [e.value for e in at.error]
    assert "DP 2 × TP 2 × PP 2 × CP 2" in " ".join(c.value for c in at.caption)  # Layout.label
    words = " ".join(m.value for m in at.markdown)
    assert "CP ring: K/V blocks → next CP rank" in words and "inside a node (NVLink 4)" in words


def test_ep_on_a_dense_model_names_the_rule():
    at = run_page_file(PAGE, model="Llama-2 7B", dp="4", ep="2", **SMALL)
    assert any("EP=2 on a dense model" in e.value for e in at.error), [e.value for e in at.error]


def test_memory_page_link_opens_an_moe_step_with_ep():
    from urllib.parse import parse_qsl, urlsplit

    from app_pages.common.links import memory_step_url

    url = memory_step_url(
        dp=4, tp=2, pp=2, zero=1, mb=1, seq=4096, model="Mixtral 8x7B", recompute="selective",
        sp=False, nodes=2, global_batch=64, ep=2,
    )  # fmt: skip
    at = run_page_file(PAGE, **dict(parse_qsl(urlsplit(url).query)))
    assert not at.error, [e.value for e in at.error]
    assert not [w.value for w in at.warning if "URL value" in w.value]  # every value taken
    assert "EP 2" in " ".join(c.value for c in at.caption)
    hsdp = dict(dp=1, tp=1, pp=1, zero="hsdp", mb=1, seq=4096, model="Llama-2 7B")
    rest = dict(recompute="selective", sp=False, nodes=1, global_batch=8)
    assert memory_step_url(**hsdp, **rest) is None  # HSDP is not drawn


def test_memory_page_link_with_cp_draws_the_step_the_planner_times():
    # The link the memory page builds for DP 2 x TP 4 x PP 1 x CP 2 (16 GPUs, 2 nodes): its global
    # batch is DP 2 x micro-batch 1 x PP 1 = 2 sequences. The step page used to read dp as
    # DP x CP = 4, and then the batch rule failed (2 sequences over 4 replicas).
    import re
    from urllib.parse import parse_qsl, urlsplit

    from core.units import format_seconds

    mem = run_page_file(
        "app_pages/memory.py", model="Llama-2 7B", dp="2", tp="4", pp="1", cp="2", seq="32768"
    )
    text = " ".join(md.value for md in mem.markdown)
    url = re.search(r"\]\((training_step\?[^)]+)\)", text).group(1)
    q = dict(parse_qsl(urlsplit(url).query))
    assert (q["dp"], q["cp"], q["gb"], q["nodes"]) == ("2", "2", "2", "2")
    at = run_page_file(PAGE, **q)
    assert not at.error, [e.value for e in at.error]
    assert not [w.value for w in at.warning if "URL value" in w.value]  # every value taken
    (spec,) = chart_specs(at)  # the step is drawn
    caption = " ".join(c.value for c in at.caption)
    assert "DP 2 × TP 4 × PP 1 × CP 2" in caption
    lay = Layout(dp=2, tp=4, cp=2, zero_stage=int(q["zero"][-1]))  # "ZeRO-3" -> 3
    training = Training(global_batch=2, seq_len=32768, recompute=q["rc"])
    ev = evaluate(preset("Llama-2 7B"), make_cluster(num_nodes=2), lay, training)
    assert f"step {format_seconds(ev.step_time_s)} (the planner's)" in caption


# The fragment guard (issue 18; tests/fragments.py drives a real server: AppTest reruns whole
# scripts). Phase steps rerun only the drawing section (app_pages/common/step_view.py).
@pytest.fixture(scope="module")
def app():
    from tests.fragments import shared_app

    return shared_app()


def test_a_phase_step_reruns_only_the_drawing_fragment(app):
    tab = app.open(
        "training_step", query_string="model=Llama-2+7B&nodes=2&pick=custom&dp=4&tp=2&pp=2&gb=64"
    )
    assert tab.widgets["phase"][1], "the phase stepper should sit inside a fragment"
    assert tab.widgets["cp"][1] != tab.widgets["phase"][1]  # the page's inputs: its parent
    with app.counting() as calls:
        tab.move("phase", 2)
    assert tab.fragment_run and not tab.exceptions
    assert calls["app_pages.common:start_page"] == 0  # the page body did not rerun
    assert calls["figures.step.inputs_text:drawn_caption"] == 0  # nor its caption
    assert calls["figures.step.text:takeaway"] == 0  # nor the takeaway under the drawing
    assert calls["figures.step.figure:open_at"] == 1  # the drawing, at the new phase
    assert tab.charts == ["step"]  # only the drawing re-sent
    assert "phase" in tab.url_bound  # the stepper still writes ?phase= into the URL
