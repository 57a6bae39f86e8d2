"""Issue 15's folded controls: an expander whose label summarises, in one line, the values of the
widgets inside it. The label is written before those widgets run, so it reads their values from
the session (after a change) or the URL (a deep link), else the default."""

from __future__ import annotations

from typing import Any

import streamlit as st

from app_pages.common.widgets import _raw


def peek(key: str, default: Any) -> Any:
    """A URL-bound widget's value for this run before it is drawn (a select holds its label)."""
    if key in st.session_state:
        return st.session_state[key]
    raw = _raw(key)
    return default if raw is None or raw == "" else raw


def folded(summary: str, *, what: str = "More controls") -> Any:
    """A closed expander labelled 'what · summary' (the values inside, one line)."""
    return st.expander(f"{what} · {summary}", expanded=False)
