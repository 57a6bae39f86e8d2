"""Helpers for pages whose sections are `st.fragment`s (issue 18: a slider reruns only the section
it feeds). A fragment rerun runs only the fragment's function: page-level code after it does not
run again. So a value that page-level code also reads (e.g. the DP bucket size, which the 8 → 64
scenario reuses) must ask for a whole-page rerun when it changes, and outside slots (the "How this
is computed" lines at the page's end) are written from inside the fragment: Streamlit 1.67 keeps
a fragment's writes to an outside `st.empty` in place (streamlit/runtime/fragment.py, "outside
wrappers"), so they are replaced on each fragment rerun, never stacked."""

from __future__ import annotations

from typing import Any

import streamlit as st

_SEEN = "_section_seen_"  # + name: the value the page-level reader last used


def forget(name: str) -> None:
    """At the page's top (whole runs only): the readers below will record what they use."""
    st.session_state.pop(_SEEN + name, None)


def page_reads(name: str, value: Any) -> None:
    """Page-level code (whole runs only) records the value it used for `name`."""
    st.session_state[_SEEN + name] = value


def rerun_page_if_changed(name: str, value: Any) -> None:
    """Inside a fragment: if page-level code used another value of `name`, rerun the whole page
    (a whole run `forget`s it first and records the new value through `page_reads`, so a whole
    run never reruns itself)."""
    seen = st.session_state.get(_SEEN + name, value)
    if seen != value:
        st.session_state[_SEEN + name] = value
        st.rerun(scope="app")


def chart_slot(presenting: bool) -> Any:
    """Where a section's main chart goes: presenting, a slot above the section's controls (the
    slide reads chart, then controls: tests/e2e/test_presenter_browser.py); else the page, in
    order, after the controls (the caller draws into the returned container)."""
    return st.container() if presenting else None
