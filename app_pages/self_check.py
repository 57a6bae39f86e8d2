"""Self-check: randomised questions on every learning goal, reproducible from the URL, working
shown.
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core import quiz
from core.pipeline import simulate
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


def _shown(q: quiz.Question) -> str:
    return q.answer if not q.numeric else f"{q.answer:,.4g}{' ' + q.unit if q.unit else ''}"


common.start_page(
    "Self-check",
    "Can you derive the numbers yourself? Every question is drawn at random from "
    "the set's seed, answered by the same cores the other pages use, and explained once you "
    "answer.",
)
c = st.columns([2, 1.3, 2])
seed = common.slider(
    "Question set (seed)",
    1,
    MAX_SEED,
    1,
    key="seed",
    where=c[0],
    help="The same seed gives the same questions: copy the URL to share a set (and its answers).",
)
c[1].button("New questions", on_click=_next_set, icon="🎲", width="stretch")
c[2].caption(
    "Numbers: type the value in the unit shown; within 2 % counts (±0.5 points for percentages, "
    "exact "
    "for counts). Memory units follow the sidebar."
)
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
                {x: x for x in (quiz.BLANK, *q.choices)},
                quiz.BLANK,
                key=q.key,
                where=left,
            )
        verdicts[q.key] = ok = quiz.check(q, guess)
        if ok is None:
            right.caption("Answer to see the working.")
            continue
        (right.success if ok else right.error)(
            "Correct." if ok else f"Not quite: the answer is {_shown(q)}.",
            icon="✅" if ok else "❌",
        )
        st.markdown(q.explanation)
        if q.pipeline:
            common.chart(_gantt(*q.pipeline), key="gantt")

log = st.session_state.setdefault(LOG, {})
for k, ok in verdicts.items():
    if ok is not None:
        log.setdefault(f"{seed}:{k}", ok)
with board:
    common.chart(scoreboard_figure(qs, verdicts, (sum(log.values()), len(log)), seed), key="score")

common.takeaway(
    "If you can produce these numbers on paper — 2(N−1) steps, ≈2·S bytes per rank, n_r/B weights, "
    "b·s·h·2 per TP all-reduce, (P−1)/(M+P−1), 16Ψ split by stage — you can size a training run."
)
with st.expander("How this is computed"):
    st.markdown(
        "Each set draws its parameters from `numpy.random.default_rng(seed)` in `core.quiz`, and "
        "each answer "
        "comes from a core: ring steps and bytes from the numpy ring simulator's trace, the "
        "data-parallel weights "
        "checked against a full-batch gradient (`core.data_parallel`), TP message sizes and link "
        "times from "
        "`core.tensor_parallel.comm`, bubbles from the pipeline event simulator, ZeRO savings from "
        "`core.memory.model_state_bytes_per_gpu`. Your answers live in the URL like every control; "
        "the score "
        "counts each question's first answer in this browser session."
    )
common.show_url_notices()
