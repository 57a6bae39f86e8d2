"""The training-step page in AppTest: its defaults follow the planner's pick, a deep link opens a
custom layout at a phase, and the words under the chart name the links the traffic uses.
"""

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
