"""The self-check page's questions and scoreboard as one fragment (an answer reruns only the quiz,
not the page's controls, lab and notes), with its cached builders created once per process."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core import quiz
from core.pipeline import simulate
from figures import quiz_text as qt
from figures.pipeline import gantt_figure
from figures.quiz import scoreboard_figure

LOG = "_quiz_first_tries"  # {"seed:key": first verdict}; the session's score, no login


@st.cache_data(max_entries=64, show_spinner=False)
def questions(seed: int, units: str) -> tuple[quiz.Question, ...]:
    return quiz.questions(seed, units)


@st.cache_data(max_entries=32, show_spinner=False)
def gantt(schedule: str, p: int, m: int) -> dict:
    return gantt_figure(simulate(schedule, p, m))


def _answer(q: quiz.Question, where):
    if q.numeric:
        unit = f" ({q.unit})" if q.unit else ""
        return common.number(f"Your answer{unit}", None, None, None, key=q.key, where=where)
    choices = common.same((quiz.BLANK, *q.choices))
    return common.select("Your answer", choices, quiz.BLANK, key=q.key, where=where)


@st.fragment
def quiz_section(seed: int, units: str) -> None:
    """The scoreboard above the questions; each answered question shows its verdict and working."""
    common.sections.follow_page()  # args from a page run that finished
    with common.explain_errors():
        qs = questions(seed, units)
    # On a slide the first question comes right after the takeaway (the page's answer:
    # tests/e2e/test_above_fold.py NOT_A_CHART), the scoreboard after the questions.
    board = None if common.settings().presenter else st.container()
    verdicts = {}
    for i, q in enumerate(qs, 1):
        with st.container(border=True):
            st.markdown(f"**{i} · {q.goal}.** {q.prompt}")
            left, right = st.columns([1, 2])
            verdicts[q.key] = ok = quiz.check(q, _answer(q, left))
            if ok is None:
                right.caption("Answer to see the working.")
                continue
            (right.success if ok else right.error)(qt.verdict(q, ok), icon="✅" if ok else "❌")
            st.markdown(q.explanation)
            if q.pipeline:
                common.chart(gantt(*q.pipeline), key="gantt")
    log = st.session_state.setdefault(LOG, {})
    for k, ok in verdicts.items():
        if ok is not None:
            log.setdefault(f"{seed}:{k}", ok)
    score = (sum(log.values()), len(log))
    with board or st.container(key="slide_after"):  # presenting: not moved up (presenter_css)
        common.chart(scoreboard_figure(qs, verdicts, score, seed), key="score")
