"""Guided walks: the control (AppTest.from_function) and every walk against its real page."""

from streamlit.testing.v1 import AppTest


def _walk_app():
    import streamlit as st

    from app_pages import common
    from figures.walks import WalkStep

    steps = [
        WalkStep(say="Two GPUs.", set={"n": 2, "alg": "Tree"}),
        WalkStep(say="Eight GPUs.", set={"n": 8, "on": True}),
        WalkStep(say="Takeaway: sixteen.", set={"n": 16}),
    ]
    common.walk(steps)
    n = common.slider("N", 1, 32, 4, key="n")
    alg = common.select("Algorithm", {"ring": "Ring", "tree": "Tree"}, "ring", key="alg")
    on = common.toggle("On", False, key="on")
    st.write(f"n={n} alg={alg} on={on}")


def _app() -> AppTest:
    return AppTest.from_function(_walk_app, default_timeout=30)


def _shown(at: AppTest) -> tuple:
    return at.slider(key="n").value, at.selectbox(key="alg").value, at.toggle(key="on").value


def test_start_next_back_leave_and_user_override():
    at = _app().run()
    assert not at.exception
    assert "walk" not in at.query_params and _shown(at) == (4, "Ring", False)
    assert not at.info  # no sentence before the walk starts
    at.button(key="walk_start").click().run()
    assert at.query_params["walk"] == "1"
    assert _shown(at) == (2, "Tree", False)
    assert at.info[0].value == "Two GPUs."
    assert any("step 1 of 3" in m.value for m in at.markdown)
    assert at.button(key="walk_back").disabled
    at.button(key="walk_next").click().run()
    assert at.query_params["walk"] == "2"
    assert _shown(at) == (8, "Tree", True)  # alg not set by step 2: the value stays
    at.slider(key="n").set_value(5).run()  # the user moves a slider during the walk
    assert _shown(at) == (5, "Tree", True) and at.query_params["walk"] == "2"
    at.toggle(key="on").set_value(False).run()
    assert _shown(at) == (5, "Tree", False)  # both overrides persist: a step applies once
    at.button(key="walk_next").click().run()
    assert at.query_params["walk"] == "3" and _shown(at)[0] == 16
    assert at.button(key="walk_next").disabled
    at.button(key="walk_back").click().run()
    assert at.query_params["walk"] == "2" and _shown(at) == (8, "Tree", True)
    at.slider(key="n").set_value(11).run()
    at.button(key="walk_leave").click().run()
    assert "walk" not in at.query_params
    assert _shown(at) == (11, "Tree", True)  # leaving keeps the current values
    assert not at.info and not at.exception


def test_a_link_opens_at_its_step_and_the_links_own_values_win():
    at = _app()
    at.query_params["walk"] = "2"
    at.run()
    assert not at.exception and _shown(at) == (8, "Ring", True)
    assert at.info[0].value == "Eight GPUs."
    at = _app()
    at.query_params["walk"] = "2"
    at.query_params["n"] = "7"  # a link copied after the user moved n at step 2
    at.run()
    assert _shown(at) == (7, "Ring", True)


def test_a_step_outside_the_walk_is_ignored():
    for raw in ("9", "0", "x", "-1"):
        at = _app()
        at.query_params["walk"] = raw
        at.run()
        assert not at.exception and "walk" not in at.query_params
        assert _shown(at) == (4, "Ring", False) and not at.info


# ---- every walk against its real page -------------------------------------------------------
# The page runs as the coordinator will wire it: `common.walk("<page>")` right after start_page,
# before its controls. Widgets a step sets but the page only shows in another state (e.g. the
# second schedule while compare is off) may be absent; every other key must be a widget.

import pytest  # noqa: E402

from figures import walks  # noqa: E402
from tests.registry import ROOT  # noqa: E402

KINDS = ("slider", "selectbox", "radio", "toggle", "number_input")
CONDITIONAL = {"collectives": {"alg_a", "alg_b"}, "pipeline": {"sched2", "i", "w", "b"}}
WIRED = """
import runpy
from app_pages import common
from figures import walks
common.walk({name!r})
runpy.run_path({path!r}, run_name="__main__")
"""


def wired(name: str, **params: str) -> AppTest:
    path = ROOT / "app_pages" / f"{name}.py"
    script = WIRED.format(name=name, path=str(path))
    if f"common.walk({name!r})".replace("'", '"') in path.read_text():  # the page is wired
        script = f"import runpy\nrunpy.run_path({str(path)!r}, run_name='__main__')\n"
    at = AppTest.from_string(script, default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    return at


def widget(at: AppTest, key: str):
    for kind in KINDS:
        try:
            return getattr(at, kind)(key=key)
        except KeyError:
            continue
    return None


def shown(w) -> object:
    return w.value


def assert_step_shown(at: AppTest, name: str, step: walks.WalkStep) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    notices = [w.value for w in at.warning if "URL value" in w.value]
    assert not notices, notices
    for key, value in step.set.items():
        w = widget(at, key)
        if w is None:
            assert key in CONDITIONAL.get(name, set()), f"{name}: no widget with key {key!r}"
            continue
        got = shown(w)
        if isinstance(value, float):
            assert got == pytest.approx(value), (name, key)
        else:
            assert got == value, (name, key, got, value)
    assert step.say in [i.value for i in at.info]


def page_steps(name: str) -> tuple:
    """The walk as `common.walk(name)` builds it at the default settings (GB, GB/s)."""
    return walks.for_page(name)


STEPS = [(name, k) for name, fn in walks.WALKS.items() for k in range(1, len(fn()) + 1)]


@pytest.mark.parametrize("name, k", STEPS, ids=[f"{n}-{k}" for n, k in STEPS])
def test_every_step_is_accepted_by_its_page(name, k):
    step = page_steps(name)[k - 1]
    at = wired(name, walk=str(k)).run()
    assert_step_shown(at, name, step)


def test_next_walks_the_real_pipeline_page_and_a_slider_move_sticks():
    at = wired("pipeline").run()
    at.button(key="walk_start").click().run()
    steps = walks.pipeline()
    for k, step in enumerate(steps, start=1):
        assert at.query_params["walk"] == str(k)
        assert_step_shown(at, "pipeline", step)
        if k < len(steps):
            at.button(key="walk_next").click().run()
    at.slider(key="m").set_value(16).run()  # the learner moves M at the last step
    assert at.slider(key="m").value == 16 and at.selectbox(key="sched").value == "ZB-H1"
    at.button(key="walk_leave").click().run()
    assert "walk" not in at.query_params and at.slider(key="m").value == 16
    assert not at.exception and not at.error


# ---- the numbers the sentences cite, worked by hand -----------------------------------------


def test_pipeline_numbers():
    # 1F1B, P = 4, t_F = 1, t_B = 2: bubble share (P−1)/(M+P−1); interleaved v: (P−1)/v over
    # M + (P−1)/v stage-times; ZB-H1 idle (P−1)(t_F + t_I − t_W) = 3 s of a 24 + 3 s step.
    say = [s.say for s in walks.pipeline()]
    assert "3 s of a 12 s step" in say[0] and "75% bubble" in say[0]
    assert "idles 9 s" in say[1] and f"{3 / 11:.1%}" in say[1] and "33 s step" in say[1]
    assert f"{3 / 35:.1%}" in say[2]
    assert "holds 8 micro-batches" in say[3] and "at most 4" in say[3]
    assert f"{1.5 / 9.5:.1%}" in say[4]
    assert f"{3 / 27:.1%}" in say[5] and "Takeaway" in say[5]


def test_collectives_numbers():
    # Ring on N ranks: 2(N−1) steps, 2(N−1)/N·S sent per rank; time 2(N−1)α + 2(N−1)/N·S/B.
    # Binomial tree: reduce then broadcast, 2·log2 N steps of α + S/B. NVLink 4: 450 GB/s, 3.4 µs.
    say = [s.say for s in walks.collectives()]
    alpha, bw = 3.4e-6, 450e9
    assert "2(N−1) = 6 steps" in say[0] and "25%" in say[1]
    assert "1.5·S = 1.5 GB" in say[2]
    ring = 62 * alpha + 62 / 32 * 1e9 / bw
    assert "1.94·S" in say[3] and f"{ring * 1e3:.3g} ms" in say[3]
    ring_small, tree_small = 62 * alpha + 62 / 32 * 64e3 / bw, 10 * (alpha + 64e3 / bw)
    assert f"{ring_small * 1e6:.3g} µs" in say[4] and f"{tree_small * 1e6:.3g} µs" in say[4]
    assert f"{10 * (alpha + 1e9 / bw) * 1e3:.3g} ms" in say[5]


def test_memory_numbers():
    # Mixed-precision Adam: 2 (weights) + 2 (grads) + 12 (fp32 master, m, v) = 16 B per parameter
    # (ZeRO paper, Rajbhandari et al. 2020 §3.1); ZeRO-1 shards the 12, ZeRO-3 all 16, over DP = 8.
    from core.model import preset

    p, gib = preset("Llama-2 13B").num_params, 2**30
    say = [s.say for s in walks.memory()]
    assert f"{16 * p / gib:.3g} GiB" in say[0]
    assert f"{(4 + 12 / 8) * p / gib:.3g} GiB of states" in say[1]
    assert f"{16 / 8 * p / gib:.3g} GiB of states" in say[2]


def test_reliability_numbers():
    # Job MTBF = GPU MTBF / N; a week holds 168 h / MTBF interruptions; Young's interval
    # √(2·δ·M) is within a minute of the optimum the walk cites.
    import math
    import re

    from core import reliability as rel

    say = [s.say for s in walks.reliability()]
    mtbf_h = rel.LLAMA3_GPU_MTBF_S / 3600 / 16_384
    assert f"every {mtbf_h:.3g} h" in say[0] and f"about {168 / mtbf_h:.0f} times" in say[0]
    delta = float(re.search(r"takes ([\d.]+) s", say[1]).group(1))
    young_min = math.sqrt(2 * delta * mtbf_h * 3600) / 60
    tau = int(re.search(r"every (\d+) min", say[1]).group(1))
    assert abs(tau - young_min) < 1.0
    assert f"{mtbf_h / 2:.3g} h" in say[3]


# The page's own readout at a step shows the number the step's sentence cites.
READOUTS = [
    ("data_parallel", 3, "Scaling efficiency"),
    ("data_parallel", 5, "Scaling efficiency"),
    ("pipeline", 2, "A. bubble fraction"),
    ("pipeline", 3, "A. bubble fraction"),
    ("pipeline", 6, "A. bubble fraction"),
    ("memory", 3, "ZeRO-3, per GPU"),
    ("memory", 3, "States / GPU"),
    ("reliability", 1, "Job MTBF"),
    ("reliability", 2, "Exact optimum"),
    ("tensor_parallel", 2, "Bytes per all-reduce"),
]


@pytest.mark.parametrize("name, k, label", READOUTS)
def test_the_sentence_cites_what_the_page_shows(name, k, label):
    at = wired(name, walk=str(k)).run()
    value = next(m.value for m in at.metric if m.label.startswith(label))
    assert value in page_steps(name)[k - 1].say, (value, page_steps(name)[k - 1].say)


def test_a_page_name_picks_its_walk_in_the_sidebars_units():
    assert "GiB" in walks.for_page("memory", memory_units="binary")[0].say
    assert "GB" in walks.for_page("memory")[0].say and "GiB" not in walks.for_page("memory")[0].say
    assert walks.for_page("pipeline") == walks.pipeline()
    with pytest.raises(ValueError, match="no walk for page 'planner'"):
        walks.for_page("planner")
