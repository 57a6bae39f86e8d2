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
