"""Words of the self-check page: its question, the answer rules, takeaway and method (strings; no
Streamlit here).
"""

from __future__ import annotations

from core.quiz import Question

QUESTION = (
    "Can you derive the numbers yourself? Every question is drawn at random from "
    "the set's seed, answered by the same cores the other pages use, and explained once you "
    "answer."
)
SEED_HELP = "The same seed gives the same questions: copy the URL to share a set (and its answers)."
RULES = (
    "Numbers: type the value in the unit shown; within 2 % counts (±0.5 points for percentages, "
    "exact for counts). Memory units follow the sidebar."
)
TAKEAWAY = (
    "If you can produce these numbers on paper — 2(N−1) steps, ≈2·S bytes per rank, n_r/B weights, "
    "b·s·h·2 per TP all-reduce, (P−1)/(M+P−1), 16Ψ split by stage — you can size a training run."
)
HOW = (
    "Each set draws its parameters from `numpy.random.default_rng(seed)` in `core.quiz`, and "
    "each answer comes from a core: ring steps and bytes from the numpy ring simulator's trace, "
    "the data-parallel weights checked against a full-batch gradient (`core.data_parallel`), TP "
    "message sizes and link times from `core.tensor_parallel.comm`, bubbles from the pipeline "
    "event simulator, ZeRO savings from `core.memory.model_state_bytes_per_gpu`. Your answers "
    "live in the URL like every control; the score counts each question's first answer in this "
    "browser session."
)

LAB = (
    "Write the numbers as code: the lab has five numpy functions to fill in (ring all-reduce with "
    "its steps and bytes, data-parallel gradient averaging, a column- then row-parallel MLP, the "
    "GPipe bubble by simulation, ZeRO bytes per GPU). Its tests check them against the same "
    "cores as this page; the zip carries the core they need (numpy, pandas and pytest to run)."
)
# The answers are typed numbers (1.78, 27.5): a number input's ± buttons step by 0.01 or 1 and only
# get in the way. The data-testid values are the ones Streamlit 1.67 gives those two buttons.
NO_STEPPERS = (
    "<style>[data-testid='stNumberInputStepUp'], [data-testid='stNumberInputStepDown'] "
    "{ display: none; }</style>"
)


def shown(q: Question) -> str:
    """A question's answer as the page shows it: the choice, or the number with its unit."""
    return q.answer if not q.numeric else f"{q.answer:,.4g}{' ' + q.unit if q.unit else ''}"


def verdict(q: Question, ok: bool) -> str:
    return "Correct." if ok else f"Not quite: the answer is {shown(q)}."
