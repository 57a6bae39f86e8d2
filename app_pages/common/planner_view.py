"""The planner page's cached builders and its drawn-layout section, defined once per process (a
cache decorator in a page file is re-created on every full rerun: ~6 ms each, the perf finding of
issue 18) and cache_resource, not cache_data: the searches, evaluations and figure dicts are never
mutated (common.chart copies before it changes a height), so a hit returns the same object
instead of unpickling a copy.
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core.parallel import Layout
from figures import planner as fp
from figures.planner import text as pt
from figures.planner.gantt import planner_gantt_figure
from figures.planner.run import Run, answer_words, evaluate_run, search_run

search = st.cache_resource(max_entries=16, show_spinner=False)(search_run)
evaluate = st.cache_resource(max_entries=128, show_spinner=False)(evaluate_run)


@st.cache_resource(max_entries=64, show_spinner=False)
def cluster_figure(run: Run, lay: Layout, colour: str) -> dict:
    return fp.cluster_figure(evaluate(run, lay).placement, colour_by=colour)


@st.cache_resource(max_entries=64, show_spinner=False)
def layout_figure(run: Run, lay: Layout, units: str) -> dict:
    """Where the time and the memory go."""
    return fp.layout_figure(evaluate(run, lay), units)


@st.cache_resource(max_entries=32, show_spinner=False)
def compare_figure(run: Run, lay: Layout, other: Layout, labels: tuple, units: str) -> dict:
    return fp.compare_figure(evaluate(run, lay), evaluate(run, other), labels, units)


@st.cache_resource(max_entries=16, show_spinner=False)
def gantt(run: Run, lay: Layout) -> dict:
    # The simulated step: a ValueError (shown by the caller) past the simulator's P·M·v op limit.
    return planner_gantt_figure(evaluate(run, lay).pipeline())


@st.cache_resource(max_entries=16, show_spinner=False)
def why(run: Run, units: str) -> str:
    """Why the fastest layout, or the closest fit when nothing fits (not keyed on the drawn one)."""
    return answer_words(run, search(run), units)


exercise_markdown = st.cache_resource(show_spinner=False)(pt.exercise_markdown)
calibration_rows = st.cache_resource(show_spinner=False)(fp.calibration_rows)
validation_rows = st.cache_resource(show_spinner=False)(fp.validation_rows)


def drawn_section(run: Run, ev, res, units: str) -> None:
    """The drawn layout's cluster map, time and memory, the comparison and the Gantt, with the
    controls only they read (colour, compare, Gantt), as a fragment: those controls rerun this
    section, not the search, the table or the rest of the page (issue 18)."""

    @st.fragment
    def section() -> None:
        common.sections.follow_page()  # args from a page run that finished
        c = st.columns(3)
        colour = common.select("Colour GPUs by", fp.COLOUR_BY, "tp", key="colour", where=c[0])
        cmp = common.toggle("Compare two layouts", False, key="cmp", where=c[1])
        vs = (
            common.select("Second layout", pt.VS, "TP flipped", key="vs", where=c[2])
            if cmp
            else None
        )
        st.caption(pt.drawn_caption(ev, res))
        common.chart(cluster_figure(run, ev.layout, colour), key="cluster")
        common.chart(layout_figure(run, ev.layout, units), key="layout", height=480)
        if cmp:
            other, labels = pt.second_layout(ev, res, vs)
            if other is not None:
                common.chart(
                    compare_figure(run, ev.layout, other, labels, units), key="compare", height=520
                )
            else:
                st.info(pt.NOTHING_TO_COMPARE)
        if ev.layout.pp > 1 and common.toggle(pt.GANTT, False, key="gantt", help=pt.gantt_help(ev)):
            if fig := common.attempt(gantt, run, ev.layout, prefix="Gantt: "):  # or why not
                common.chart(fig, key="gantt_chart")  # aggregated when M is large

    section()
