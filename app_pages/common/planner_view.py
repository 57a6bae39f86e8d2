"""The planner page's cached builders and its drawn-layout section, defined once per process (a
cache decorator in a page file is re-created on every full rerun: ~6 ms each, the perf finding of
issue 18) and cache_resource, not cache_data: the searches, evaluations and figure dicts are never
mutated (common.chart copies before it changes a height), so a hit returns the same object
instead of unpickling a copy.
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.cache import cached
from core.parallel import Layout
from figures import planner as fp
from figures.planner import text as pt
from figures.planner.gantt import planner_gantt_figure
from figures.planner.run import Run, answer_words, evaluate_run, search_run

search = cached(16)(search_run)
evaluate = cached(128)(evaluate_run)


@cached(64)
def cluster_figure(run: Run, lay: Layout, colour: str) -> dict:
    return fp.cluster_figure(evaluate(run, lay).placement, colour_by=colour)


@cached(64)
def layout_figure(run: Run, lay: Layout, units: str) -> dict:
    """Where the time and the memory go."""
    return fp.layout_figure(evaluate(run, lay), units)


@cached(32)
def compare_figure(run: Run, lay: Layout, other: Layout, labels: tuple, units: str) -> dict:
    return fp.compare_figure(evaluate(run, lay), evaluate(run, other), labels, units)


@cached(16)
def gantt(run: Run, lay: Layout) -> dict:
    # The simulated step: a ValueError (shown by the caller) past the simulator's P·M·v op limit.
    return planner_gantt_figure(evaluate(run, lay).pipeline())


@cached(16)
def why(run: Run, units: str) -> str:
    """Why the fastest layout, or the closest fit when nothing fits (not keyed on the drawn one)."""
    return answer_words(run, search(run), units)


@cached(32)
def table(run: Run, rule: str, limit: int, units: str) -> list[dict]:
    """The search's rows the table shows: rebuilt from every ranked and rejected layout, they
    cost ~20 ms a rerun (py-spy of the planner's nodes slider, 2026-12-03)."""
    return fp.filter_rows(fp.table_rows(search(run)), rule, limit, units)


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
