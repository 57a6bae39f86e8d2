"""Issue 15's folded controls: an expander whose label summarises, in one line, the values of the
widgets inside it. The label is written before those widgets run, so it reads their values from
the session (after a change) or the URL (a deep link), else the default."""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from app_pages.common.widgets import _raw


def peek(key: str, default: Any) -> Any:
    """A URL-bound widget's value for this run before it is drawn (a select holds its label)."""
    if key in st.session_state:
        return st.session_state[key]
    raw = _raw(key)
    return default if raw is None or raw == "" else raw


def folded(summary: str, *, what: str = "More controls", where: Any = st) -> Any:
    """A closed expander labelled 'what · summary' (the values inside, one line) that stays as the
    visitor left it when those values change.

    Streamlit 1.67 derives an expander's identity from its label (even with a key:
    streamlit/streamlit lib/streamlit/elements/layouts.py `expander`, key_as_main_identity=False),
    so a new summary drew a new, closed expander: moving a slider inside snapped it shut (issue
    14). Keyed and tracking its state (on_change="rerun": opening it reruns the page), it is drawn
    as the visitor left it: `expanded` is the state it had.
    """
    key = "fold_" + re.sub(r"\W+", "_", what.lower()).strip("_")
    was_open = bool(st.session_state.get(key, False))
    return where.expander(f"{what} · {summary}", expanded=was_open, key=key, on_change="rerun")


def cells(n: int, *, where: Any = st, align: str = "bottom") -> list[Any]:
    """n slots of one row, for a row whose columns would each hold one element, filled left to
    right: one horizontal container (one message) instead of st.columns' n + 1. Each message of
    a rerun costs the browser ~1.2 ms before the charts redraw (issue 18, docs/notes/plotly.md §2).
    The elements share the width equally (width="stretch", the widgets' default)."""
    row = where.container(horizontal=True, gap="small", vertical_alignment=align)
    return [row] * n
