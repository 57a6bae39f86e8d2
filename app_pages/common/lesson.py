"""The page's takeaway: one green box, the slide's headline when presenting.

Apart from app_pages/common/__init__.py (its line budget); pages call `common.takeaway` and
`common.takeaway_slot`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

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
