"""The lesson around a page's charts: the takeaway (one green box, the slide's headline when
presenting), the "How this is computed" lines and the self-checks.

Apart from app_pages/common/__init__.py (its line budget); pages call them as `common.<name>`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from contextlib import nullcontext
from typing import Any

import streamlit as st

from app_pages.common.widgets import number

HEADLINE = "_headline_slot"  # presenter mode: where the takeaway goes (under the question)


def _next_takeaway() -> tuple[Any, int]:
    """The headline slot (presenting, for the page's first takeaway; else None) and the
    takeaway's number N (class st-key-takeaway-N: app_pages/common/presenter_css.py)."""
    n = st.session_state["_takeaways"] = st.session_state.get("_takeaways", -1) + 1
    slot, st.session_state[HEADLINE] = st.session_state.get(HEADLINE), None
    return slot, n


def takeaway_slot() -> tuple[Any, int]:
    """A place for the page's next takeaway that a fragment fills (and its reruns refill):
    presenting, the first is the slide's headline under the question; else an empty here."""
    slot, n = _next_takeaway()
    return (slot or st.empty()), n


def takeaway(text: str, *, slot: tuple[Any, int] | None = None) -> None:
    """The page's lesson, in `slot` (a `takeaway_slot()`) or next: presenting, the first goes to
    the slot under the page's question, the slide's headline."""
    where, n = slot or _next_takeaway()
    with (where or st).container(key=f"takeaway-{n}"):
        st.success(f"**Takeaway.** {text}", icon="💡")


_BLOCKS = {"markdown": st.markdown, "latex": st.latex, "caption": st.caption, "info": st.info}


def how_computed(blocks: Iterable[tuple[str, str]], *, expander: bool = False) -> None:
    """The "How this is computed" section (a subheader, or a closed expander) from (kind, text)
    blocks: kind is markdown, latex, caption or info. KaTeX stays apart from changing numbers."""
    with st.expander("How this is computed", expanded=False) if expander else nullcontext():
        if not expander:
            st.subheader("How this is computed")
        how_lines(blocks)


def how_lines(blocks: Iterable[tuple[str, str]]) -> None:
    """The lines of a "How this is computed" section, e.g. a fragment's, into its slot."""
    for kind, text in blocks:
        _BLOCKS[kind](text)


def self_check(
    question: str,
    answer: float,
    *,
    key: str,
    rel_tol: float = 0.02,
    explanation: str = "",
    unit: str = "",
) -> None:
    """A numeric question; the learner's answer is checked within a relative tolerance."""
    guess = number(question + (f" ({unit})" if unit else ""), None, None, None, key=key)
    if guess is None:
        return
    if math.isclose(guess, answer, rel_tol=rel_tol, abs_tol=1e-12):
        st.success(f"Correct: {answer:,.6g}{' ' + unit if unit else ''}. {explanation}")
    else:
        st.error(
            f"Not quite: you said {guess:,.6g}; the answer is {answer:,.6g}"
            f"{' ' + unit if unit else ''}. {explanation}"
        )


def self_checks(questions: Iterable[dict], *, heading: bool = True) -> None:
    """The page's self-check section: each question holds `self_check`'s arguments."""
    if heading:
        st.subheader("Self-check")
    for q in questions:
        self_check(**q)
