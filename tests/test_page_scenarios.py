"""AppTest for the scenarios page: every scenario renders its computed numbers, and every link it
offers
opens its target page with exactly the stated widgets and the same headline number."""

import re
from urllib.parse import parse_qsl

import pytest

from core import scenarios as cs
from core.hardware import SCALE_OUT_LINKS
from core.units import format_bytes, format_seconds
from figures.scenarios import walkthrough
from tests.test_pages import assert_clean, chart_specs, run_app

PAGE = "app_pages/scenarios.py"
LABELS = {
    "size": "Size 70B",
    "scale": "DP scale-out",
    "place": "3D placement",
    "pipe": "GPipe vs 1F1B",
    "fsdp": "DDP vs FSDP",
    "sentence": "The sentence",
}
RESULTS = {
    "size": cs.size_70b,
    "scale": cs.scale_out,
    "place": cs.placement,
    "pipe": cs.gpipe_vs_1f1b,
    "fsdp": cs.ddp_vs_fsdp,
    "sentence": cs.sentence,
}


def text(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def links(at) -> list[tuple[str, dict]]:
    return [
        (p.proto.page, dict(parse_qsl(p.proto.query_string)))
        for p in at.get("page_link")
        if p.proto.query_string
    ]


def widget_value(at, key: str) -> str:
    """The value of the main-area widget with this key, as the URL would spell it."""
    for kind in ("slider", "selectbox", "radio", "toggle", "number_input"):
        try:
            v = getattr(at, kind)(key=key).value
        except (KeyError, IndexError, ValueError):
            continue
        if isinstance(v, bool):
            return str(v).lower()
        return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
    raise AssertionError(f"no widget with key {key!r}")


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_defaults_show_the_70b_sizing_with_numbers_from_the_core():
    at = run_app(PAGE)
    assert_clean(at)
    assert not at.error
    s = cs.size_70b()
    body = text(at)
    for number in (
        s.states_bytes,
        s.states_per_gpu_bytes,
        s.activations_bytes["full"],
        s.used_bytes("full"),
    ):
        assert format_bytes(number, "decimal") in body
    assert "1.12 TB" in body and "70 GB per GPU" in body  # 70e9 x 16 B and its 16th: GB default
    assert chart_specs(at) and at.slider(key="nd").value == 16
    assert links(at) == [("memory", dict(x.params)) for x in s.links]


@pytest.mark.parametrize("kind", LABELS)
def test_every_scenario_renders_its_steps_chart_and_links(kind):
    at = run_app(PAGE, {"sc": LABELS[kind]})
    assert_clean(at)
    assert not at.error and not at.warning
    assert len(chart_specs(at)) == 1
    expected = RESULTS[kind]().links
    assert links(at) == [(x.page.split("/")[1][:-3], dict(x.params)) for x in expected]
    assert len(at.get("page_link")) == len(expected)


def test_pipeline_scenario_deep_link_and_knob():
    at = run_app(PAGE, {"sc": "GPipe vs 1F1B", "stages": "4"})
    body = text(at)
    assert "3/11 = **27.27%**" in body and "3/67 = **4.48%**" in body  # (P−1)/(M+P−1) at P = 4
    assert all(q["p"] == "4" for _, q in links(at))


def test_placement_knob_changes_the_network():
    at = run_app(PAGE, {"sc": "3D placement", "net": "100 GbE"})
    assert_clean(at)
    assert "100 GbE" in text(at) and all(q["inter"] == "100 GbE" for _, q in links(at))


def test_binary_units_travel_with_the_links():
    at = run_app(PAGE, {"mem": "GiB"})
    assert "65.2 GiB per GPU" in text(at)  # 70e9 B / 2^30
    assert all(q.get("mem") == "GiB" for _, q in links(at))


def test_self_check_scores_a_right_answer_and_explains_a_wrong_one():
    at = run_app(PAGE)
    at.number_input(key="q_size").set_value(35.0).run()  # 16 × 70e9 / 32 B = 35 GB
    assert any(s.value.startswith("Correct") for s in at.success)
    at.number_input(key="q_size").set_value(70.0).run()
    err = [e.value for e in at.error]
    assert err and "16 Ψ / N" in err[0]


def test_hostile_scenario_value_falls_back_with_a_notice():
    at = run_app(PAGE, {"sc": "<script>x</script>", "nd": "1e9"})
    assert_clean(at)
    notes = " ".join(w.value for w in at.warning)
    assert "`sc=" in notes and "`nd=" in notes
    assert chart_specs(at)


# ---------- issue 15: the presenter slide's one-line takeaway ----------
def takeaways(at) -> list[str]:
    return [x.value for x in at.success if x.value.startswith("**Takeaway.**")]


def test_presenter_slide_shows_the_one_line_takeaway_and_the_laptop_the_full_one():
    laptop, slide = run_app(PAGE), run_app(PAGE, {"present": "true"})
    (full,), (short,) = takeaways(laptop), takeaways(slide)
    # By hand: 70e9 parameters × 16 B = 1.12e12 B; ZeRO-3 over 16 GPUs: 1.12e12 / 16 = 70e9 B.
    assert "1.12 TB" in short and "ZeRO-3 over 16 GPUs: 70 GB each + activations" in short
    assert len(short) <= len("**Takeaway.** ") + HEADLINE_CHARS < len(full)
    # The full takeaway checks the doubled run: ZeRO-3 over 32 fits (tests/test_scenarios.py).
    assert "ZeRO-3 over 32: fits" in full and "ZeRO-3 over 32" not in short


def test_presenter_takeaway_follows_the_knob():
    (short,) = takeaways(run_app(PAGE, {"present": "true", "sc": "GPipe vs 1F1B", "stages": "4"}))
    # (P−1)/(M+P−1) at P = 4: 3/11 = 27.3% at M = 8, 3/67 = 4.5% at M = 64; 1F1B's first rank holds
    # P = 4 micro-batches, GPipe's all M = 64.
    assert "P = 4, M 8 → 64: bubble 27.3% → 4.5%" in short
    assert "1F1B holds 4 micro-batches, GPipe 64" in short


# One line at 1280×720 in presenter type (26 px, app_pages/common/presenter_css.py): the ~1,040 px
# after "💡 Takeaway." hold ~85 characters of these digits and symbols (seen on
# docs/screens/scenarios_present_1280.png and its variants; 86 wrapped).
HEADLINE_CHARS = 85
KNOBS = {
    "size": (cs.size_70b, (1, 16, 128)),
    "scale": (cs.scale_out, (16, 64, 512)),
    "place": (cs.placement, tuple(SCALE_OUT_LINKS)),
    "pipe": (cs.gpipe_vs_1f1b, (2, 8, 32)),
    "fsdp": (cs.ddp_vs_fsdp, (2, 8, 64)),
    "sentence": (lambda _: cs.sentence(), (None,)),
    "ctx": (cs.long_context, cs.five_d.CPS),
    "moe": (cs.moe_two_nodes, cs.five_d.EPS),
}


@pytest.mark.parametrize("kind", KNOBS)
def test_every_headline_is_one_line_quoting_the_full_texts_numbers(kind):
    run, knobs = KNOBS[kind]
    for knob in knobs:
        for units in ("decimal", "binary"):
            words, _ = walkthrough(run(knob), units, units)
            full = " ".join((words.intro, *words.steps, words.takeaway))
            assert len(words.headline) <= HEADLINE_CHARS and "\n" not in words.headline, words
            # the same live values, not new ones: each number the slide states is in the full text
            missing = [n for n in re.findall(r"\d[\d,.]*\d|\d", words.headline) if n not in full]
            assert missing == [], (kind, knob, units, words.headline, missing)


# Every link: the target page shows the stated widgets (nothing ignored) and the headline number the
# scenario quotes. (page, metric label, the scenario's number for that link)
def _expected_metric(kind: str, i: int) -> tuple[str, str]:
    r = RESULTS[kind]()
    if kind == "size":
        return "ZeRO-3, per GPU", format_bytes(r.used_bytes(("full", "none")[i]), "decimal")
    if kind == "scale":
        steps = (r.run.large, r.run.fixes[-1].step, r.run.dgx_large)  # thin, 8 NICs, DGX-class
        return "Step at N=64", format_seconds(steps[i].step_s)
    if kind == "place":
        return "Step time", format_seconds((r.inside, r.across)[i].step_s)
    if kind == "pipe":
        return "A. bubble fraction", f"{r.rows['1f1b', (8, 64)[i]].simulated:.1%}"
    if kind == "fsdp":
        return ("DDP", "ZeRO-3")[i] + ", per GPU", format_bytes(
            r.budget((r.ddp, r.fsdp)[i]).used_bytes, "decimal"
        )
    return "Step time", format_seconds((r.inside, r.ddp, r.across)[i].step_s)


CASES = [(k, i) for k in LABELS for i in range(len(RESULTS[k]().links))]


@pytest.mark.parametrize("kind, i", CASES, ids=[f"{k}-{i}" for k, i in CASES])
def test_link_opens_its_page_with_the_stated_configuration(kind, i):
    link = RESULTS[kind]().links[i]
    params = dict(link.params)
    at = run_app(link.page, params)
    assert_clean(at)
    notes = [w.value for w in at.warning if "was ignored" in w.value]
    assert not notes, notes
    for key, value in params.items():
        assert widget_value(at, key) == value, (key, value)
    label, value = _expected_metric(kind, i)
    assert metrics(at)[label] == value


def step_links(at) -> list[dict]:
    """The queries of the page's "Draw this step" links (markdown links to the Training step)."""
    found = [m for md in at.markdown for m in re.findall(r"\(training_step\?([^)]+)\)", md.value)]
    return [dict(parse_qsl(q)) for q in found]


@pytest.mark.parametrize("kind", ["place", "sentence"])
def test_layout_scenarios_offer_draw_this_step_for_each_planner_layout(kind):
    at = run_app(PAGE, {"sc": LABELS[kind]})
    assert_clean(at)
    planner = [dict(x.params) for x in RESULTS[kind]().links if x.page.endswith("/planner.py")]
    assert len(planner) >= 2  # 3D placement: both orders; the sentence: ZeRO, DDP, TP across
    expected = [{k: v for k, v in q.items() if k != "cmp"} for q in planner]
    assert step_links(at) == expected


def test_draw_this_step_link_opens_the_step_page_without_notices():
    at = run_app(PAGE, {"sc": LABELS["place"]})
    query = step_links(at)[1]  # TP across nodes
    step = run_app("app_pages/training_step.py", query)
    assert_clean(step)
    notes = [w.value for w in step.warning if "was ignored" in w.value]
    assert not notes, notes
    for key, value in query.items():
        assert widget_value(step, key) == value, (key, value)


# ---------- 7 · 128K context and 8 · an MoE on two nodes (issue 17) ----------
NEW = {
    "ctx": ("128K context", cs.long_context, "ctxcp"),
    "moe": ("MoE on 2 nodes", cs.moe_two_nodes, "moeep"),
}


@pytest.mark.parametrize("kind", NEW)
def test_5d_scenarios_render_core_numbers_and_links(kind):
    label, run, _ = NEW[kind]
    at = run_app(PAGE, {"sc": label})
    assert_clean(at)
    assert not at.error and not at.warning
    assert len(chart_specs(at)) == 1
    r, body = run(), text(at)
    if kind == "ctx":
        assert "**CP = 8**" in body and "8.39 MB" in body and "360 GB" in body  # S/C hand tests
        assert "arXiv:2407.21783" in body
    else:
        assert "46.7B" in body and "12.9B" in body and "33.6 MB" in body  # buffer / 2 on the NIC
    assert links(at) == [(x.page.split("/")[1][:-3], dict(x.params)) for x in r.links]


def test_128k_knob_moves_the_ring_and_the_verdict():
    at = run_app(PAGE, {"sc": "128K context", "ctxcp": "4"})
    body = text(at)
    assert "**At CP = 4:**" in body and "**does not fit (OOM)**" in body.split("**At CP")[1]
    assert "16.8 MB" in body  # K/V block at C = 4: 2 × 32,768 × 1 × 128 × 2 B
    assert all(q.get("cp", q.get("lcp")) == "4" for _, q in links(at))


def test_moe_knob_at_ep_4_does_not_fit():
    at = run_app(PAGE, {"sc": "MoE on 2 nodes", "moeep": "4"})
    body = text(at)
    assert "at EP 4: **does not fit (OOM)**" in body
    assert all(q.get("ep", q.get("mep")) == "4" for _, q in links(at))


NEW_CASES = [(k, i) for k in NEW for i in range(len(NEW[k][1]().links))]


@pytest.mark.parametrize("kind, i", NEW_CASES, ids=[f"{k}-{i}" for k, i in NEW_CASES])
def test_5d_link_opens_its_page_with_the_stated_configuration(kind, i):
    r = NEW[kind][1]()
    link = r.links[i]
    params = dict(link.params)
    at = run_app(link.page, params)
    assert_clean(at)
    notes = [w.value for w in at.warning if "was ignored" in w.value]
    assert not notes, notes
    for key, value in params.items():
        assert widget_value(at, key) == value, (key, value)
    shown = metrics(at)
    if link.page.endswith("context_parallel.py"):
        assert shown["one K/V block (B_kv)"] == format_bytes(r.kv_block_bytes, "decimal")
    if link.page.endswith("expert_parallel.py"):
        assert shown["total parameters"] == "46.7B"


# ---------- issue 18: a scenario's knob reruns the scenario fragment, not the page ----------
@pytest.fixture(scope="module")
def app():
    from tests.fragments import shared_app

    return shared_app()  # one spied server per test session (tests/fragments.py)


def test_knob_reruns_only_the_scenario_fragment(app):
    tab = app.open("scenarios")
    assert tab.widgets["nd"][1], "the knob should sit inside the scenario fragment"
    with app.counting() as calls:
        tab.move("nd", 32)
    assert tab.fragment_run and not tab.exceptions
    assert calls["app_pages.common:start_page"] == 0
    assert calls["app_pages.common:show_url_notices"] == 0  # outside the fragment
    assert calls["figures.scenarios:walkthrough"] == 1  # the scenario, rebuilt at N = 32
    assert tab.charts == ["fig_size"]
    assert "nd" in tab.url_bound
