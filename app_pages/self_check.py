"""Self-check: randomised questions on every learning goal, reproducible from the URL, working
shown.
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.course_lab import RUN_COMMAND, ZIP_NAME, lab_zip_bytes
from app_pages.common.quiz_view import quiz_section
from core import quiz
from figures import quiz_text as qt

MAX_SEED = 1000


def _next_set() -> None:
    """'New questions': the next seed, set before the slider renders (a bound widget takes session
    state).
    """
    st.session_state["seed"] = int(st.session_state.get("seed", 1)) % MAX_SEED + 1


def _clear_answers() -> None:
    for k in quiz.KEYS:
        st.session_state[k] = quiz.BLANK if k in ("split", "fix") else None


@st.fragment(key="quiz_main")
def main_section() -> None:
    """The seed and its questions: a new set reruns this, not the lab and the notes below."""
    common.sections.follow_page()  # args from a page run that finished
    c = st.columns([2, 1.3, 2])
    seed = common.slider(
        "Question set (seed)", 1, MAX_SEED, 1, key="seed", where=c[0], help=qt.SEED_HELP
    )
    c[1].button("New questions", on_click=_next_set, icon="🎲", width="stretch")
    c[2].caption(qt.RULES)
    if st.session_state.get("_quiz_seed") not in (None, seed):  # a new set: drop the old answers
        _clear_answers()
    st.session_state["_quiz_seed"] = seed

    quiz_section(seed, common.memory_units().value)


common.start_page("Self-check", qt.QUESTION)
st.markdown(qt.NO_STEPPERS, unsafe_allow_html=True)  # typed answers like 1.78: no ± buttons
main_section()
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
