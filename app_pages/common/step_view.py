"""The training-step page's drawing section: the one phase control (URL-bound, with Play), the
step drawn at that phase and its words, as a fragment; and the cached builders it shares with the
page (in a module, so a full rerun does not re-create them and tests can count their calls).
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.cache import cached
from app_pages.common.glide import next_token
from app_pages.common.widgets import play_tick, playing
from core.parallel import Layout
from core.stepplan import StepPlan
from core.units import ByteSystem
from figures.planner.run import Run
from figures.step import FRAME_MS, open_at, step_figure
from figures.step import text as tx
from figures.step.run import plan_run, step_search

PLAY_EVERY_S = FRAME_MS / 1000
search = cached(16)(step_search)  # shared, never mutated
plan = cached(64)(plan_run)


# shared, never mutated: open_at copies what it changes
@cached(32)
def figure(run: Run, lay: Layout, units: str, present: bool) -> dict:
    return step_figure(plan(run, lay), 0, ByteSystem(units), present)


def came_from(view: tuple, phase: int) -> int | None:
    """The phase the chart showed before this run when it is a neighbour of `phase` in the same
    drawing (Next / Back, a key, a Play tick or a one-phase drag: the bars glide), else None (a
    jump: the first run, a longer drag, another layout); as the ring does (ring_view.came_from)."""
    before = st.session_state.get("_step_shown")
    st.session_state["_step_shown"] = (view, phase)
    if before is None or before[0] != view or abs(before[1] - phase) != 1:
        return None
    return before[1]


def drawing(run: Run, lay: Layout, units: ByteSystem) -> None:
    """The phase stepper (URL-bound, with Play), the drawing and its words, as a fragment: a
    phase step (press, drag or Play tick) reruns only this section, not the page's inputs."""
    every = PLAY_EVERY_S if playing("phase") else None

    @st.fragment(run_every=every)
    def section() -> None:
        common.sections.follow_page()  # args from a page run that finished
        if playing("phase") != (every is not None):  # ▶ / ❚❚ pressed: re-arm the timer
            st.rerun(scope="app")
        drawn: StepPlan = plan(run, lay)
        last = len(drawn.phases) - 1
        play_tick("phase", last, PLAY_EVERY_S)
        present = common.settings().presenter
        # A slide: the drawing right under the takeaway, its stepper below it (keys ← → step it
        # from anywhere); above it the stepper pushed the grid half off the 1280×720 screen.
        top = common.sections.chart_slot(present)
        phase = common.stepper("Phase", last, key="phase", play=True)
        view = (run, lay, units.value, present)
        prev = came_from(view, phase)
        token = next_token("step") if prev is not None else ""
        with top or st.container():
            common.chart(open_at(figure(*view), phase, came_from=prev, token=token), key="step")
        st.markdown("\n".join(tx.phase_lines(drawn, phase, units)))
        with st.expander("What one GPU of each stage holds in this phase"):
            st.markdown("\n".join(f"- {line}" for line in tx.holding_lines(drawn, phase, units)))

    section()
