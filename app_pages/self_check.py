"""Self-check: randomised questions on every learning goal, reproducible from the URL, working
shown.
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.course_lab import RUN_COMMAND, ZIP_NAME, lab_zip_bytes
from core import quiz
from core.pipeline import simulate
from figures import quiz_text as qt
from figures.pipeline import gantt_figure
from figures.quiz import scoreboard_figure

MAX_SEED = 1000
LOG = "_quiz_first_tries"  # {"seed:key": first verdict}; the session's score, no login


@st.cache_data(max_entries=64)
def _questions(seed: int, units: str) -> tuple[quiz.Question, ...]:
    return quiz.questions(seed, units)


@st.cache_data(max_entries=32)
def _gantt(schedule: str, p: int, m: int) -> dict:
    return gantt_figure(simulate(schedule, p, m))


def _next_set() -> None:
    """'New questions': the next seed, set before the slider renders (a bound widget takes session
    state).
    """
    st.session_state["seed"] = int(st.session_state.get("seed", 1)) % MAX_SEED + 1


def _clear_answers() -> None:
    for k in quiz.KEYS:
        st.session_state[k] = quiz.BLANK if k in ("split", "fix") else None


common.start_page("Self-check", qt.QUESTION)
st.markdown(qt.NO_STEPPERS, unsafe_allow_html=True)  # typed answers like 1.78: no ± buttons
c = st.columns([2, 1.3, 2])
seed = common.slider(
    "Question set (seed)", 1, MAX_SEED, 1, key="seed", where=c[0], help=qt.SEED_HELP
)
c[1].button("New questions", on_click=_next_set, icon="🎲", width="stretch")
c[2].caption(qt.RULES)
if st.session_state.get("_quiz_seed") not in (None, seed):  # a new set: drop the old set's answers
    _clear_answers()
st.session_state["_quiz_seed"] = seed

with common.explain_errors():
    qs = _questions(seed, common.memory_units().value)
board = st.container()
verdicts = {}
for i, q in enumerate(qs, 1):
    with st.container(border=True):
        st.markdown(f"**{i} · {q.goal}.** {q.prompt}")
        left, right = st.columns([1, 2])
        if q.numeric:
            guess = common.number(
                f"Your answer{f' ({q.unit})' if q.unit else ''}",
                None,
                None,
                None,
                key=q.key,
                where=left,
            )
        else:
            guess = common.select(
                "Your answer",
                common.same((quiz.BLANK, *q.choices)),
                quiz.BLANK,
                key=q.key,
                where=left,
            )
        verdicts[q.key] = ok = quiz.check(q, guess)
        if ok is None:
            right.caption("Answer to see the working.")
            continue
        (right.success if ok else right.error)(qt.verdict(q, ok), icon="✅" if ok else "❌")
        st.markdown(q.explanation)
        if q.pipeline:
            common.chart(_gantt(*q.pipeline), key="gantt")

log = st.session_state.setdefault(LOG, {})
for k, ok in verdicts.items():
    if ok is not None:
        log.setdefault(f"{seed}:{k}", ok)
with board:
    common.chart(scoreboard_figure(qs, verdicts, (sum(log.values()), len(log)), seed), key="score")

common.takeaway(qt.TAKEAWAY)
st.subheader("The course lab")
st.markdown(qt.LAB)
lab_cols = st.columns([1, 2], vertical_alignment="center")
lab_cols[0].download_button(
    f"Download the lab ({ZIP_NAME})",
    lab_zip_bytes,
    file_name=ZIP_NAME,
    mime="application/zip",
    on_click="ignore",
    icon="📦",
)
lab_cols[1].code(RUN_COMMAND, language="bash")
with st.expander("How this is computed"):
    st.markdown(qt.HOW)
common.show_url_notices()
