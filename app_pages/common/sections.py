"""Helpers for pages whose sections are `st.fragment`s (issue 18: a slider reruns only the section
it feeds). A fragment rerun runs only that fragment's function, with the arguments of the whole
run that last drew it, so:
- a value one section's widgets set and another section reads is `share`d through the session by
  the writer and read with `shared` by the reader, a keyed fragment; the writer's widget gets
  `on_change=rerun(writer, *readers)`, so a change reruns those fragments, by key, never the whole
  page (Streamlit 1.67 takes `st.rerun(scope=[keys])` only in a widget callback);
- outside slots (the "How this is computed" lines at the page's end) are written from inside the
  fragment: Streamlit 1.67 keeps a fragment's writes to an outside `st.empty` in place
  (streamlit/streamlit lib/streamlit/runtime/fragment.py, "outside wrappers"), replaced on each
  rerun, never stacked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

_SHARED = "_section_shared_"  # + name: the value the writer section last published


def rerun(*keys: str) -> Callable[[], None]:
    """A widget callback that reruns the fragments with these keys (not the whole page)."""

    def callback() -> None:
        st.rerun(scope=list(keys))

    return callback


def share(name: str, value: Any) -> None:
    """Inside the writer fragment, after its widgets: publish `value` for the reader sections."""
    st.session_state[_SHARED + name] = value


def shared(name: str, default: Any) -> Any:
    """Inside a reader fragment: the value the writer published (its `default` before any)."""
    return st.session_state.get(_SHARED + name, default)


def chart_slot(presenting: bool) -> Any:
    """Where a section's main chart goes: presenting, a slot above the section's controls (the
    slide reads chart, then controls: tests/e2e/test_presenter_browser.py); else None (the
    caller draws in order, after the controls)."""
    return st.container() if presenting else None
