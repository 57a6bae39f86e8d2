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
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

_SHARED = "_section_shared_"  # + name: the value the writer section last published
_PAGE_DONE = "_page_run_done"  # False from a page's first line until its last (common.start_page)


def page_started() -> None:
    """The page's first line (common.start_page): a whole-page run is under way."""
    st.session_state[_PAGE_DONE] = False


def page_finished() -> None:
    """The page's last line (common.show_url_notices): every fragment now holds this run's
    arguments."""
    st.session_state[_PAGE_DONE] = True


def follow_page() -> None:
    """First line of a fragment that reads page-level values (its arguments or its closure): if
    this is a fragment-only run and the last whole-page run did not finish, rerun the whole page.

    Streamlit 1.67 turns a whole-page run that a fragment's widget interrupts into a fragment-only
    run (streamlit/streamlit lib/streamlit/runtime/scriptrunner_utils/script_requests.py
    `_request_rerun_locked`: the new request replaces the running one). That fragment then runs
    with the arguments of the last page run that reached it, older than the sliders already
    drawn: issue 14, where M × 2, M × 2, P + 1 left the Gantt at M=16 under an M=32 slider.
    """
    ctx = get_script_run_ctx()
    fragment_only = bool(ctx and ctx.fragment_ids_this_run)
    if fragment_only and not st.session_state.get(_PAGE_DONE, True):
        st.rerun(scope="app")


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


@dataclass(frozen=True, kw_only=True)
class Slots:
    """Where a section writes outside itself, refilled on each of its reruns (None: not used)."""

    takeaway: Any = None  # common.takeaway_slot(): the page's lesson (the slide's headline)
    how: Any = None  # an st.empty for the section's "How this is computed" lines
    download: Any = None  # e.g. the trace plan's Chrome-trace download, beside the page's CSV
