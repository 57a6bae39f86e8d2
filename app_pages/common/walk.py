""" "Walk me through it": a few steps that each set the page's controls and say one thing.

A walk is data (a sequence of `figures.walks.WalkStep`: `say`, the sentence, and `set`, the
control values as {widget key: value}; a `select` takes its LABEL, as in the URL). The step is
kept in the URL under `walk` (1 … n; absent = not walking), so a lecturer can link to step 3.

How the values reach the widgets: every page control is bound to the URL
(app_pages/common/widgets.py, `bind="query-params"`), and Streamlit 1.67 resolves a bound
widget from `st.session_state[key]` when code wrote it before the widget rendered, except on a
session's first load, where the URL wins (streamlit/streamlit
lib/streamlit/runtime/state/session_state.py, `_handle_query_param_binding`). So:
- Start / Back / Next write the step's values into `st.session_state` in the button's callback
  (before the page's widgets render) and `walk` into the URL; Streamlit then writes the changed
  controls into the URL itself.
- A link that opens at `?walk=3` applies step 3's values for the keys the link does not carry; a
  link copied mid-walk carries the values the user chose, and those win.
- A step is applied once: moving a slider afterwards keeps the user's value, and leaving the walk
  keeps whatever the controls show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from app_pages.common.widgets import CODE_SET, url_int
from figures import walks

APPLIED = "_walk_applied"  # session key: (walk key, step, walk identity) last applied
PENDING = "_walk_pending"  # session key: the keys a button's step set, for the run it starts


def _identity(steps: Sequence[Any]) -> int:
    """Which walk this is (two pages may both sit at walk=2)."""
    return hash(tuple(s.say for s in steps))


def _apply(step: Any, *, only_absent: bool) -> None:
    for name, value in step.set.items():
        if only_absent and st.query_params.get(name) is not None:
            continue  # the link's own value wins, as Streamlit's first load does
        st.session_state[name] = value


def _go(key: str, to: int, steps: Sequence[Any]) -> None:
    """Button callback: go to step `to` (0 leaves the walk and keeps the current values)."""
    if to == 0:
        st.query_params.pop(key, None)
        st.session_state.pop(APPLIED, None)
        return
    _apply(steps[to - 1], only_absent=False)
    st.session_state[PENDING] = tuple(steps[to - 1].set)
    st.query_params[key] = str(to)
    st.session_state[APPLIED] = (key, to, _identity(steps))


def current_step(key: str, last: int) -> int:
    """The walk step in the URL, 1 … last, or 0 when not walking (or the value is not a step)."""
    step = url_int(key)
    return step if step is not None and 1 <= step <= last else 0


def walk(steps: Sequence[Any] | str, *, key: str = "walk", where: Any = st) -> int:
    """Render the walk control and the current step's sentence; returns the step (0 = off).
    Call it after `start_page` and before the page's controls. `steps` is a walk, or a page's
    file stem ("pipeline") for its walk in figures.walks, in the sidebar's units."""
    if isinstance(steps, str):
        from app_pages.common import settings  # here: app_pages.common imports this module

        shown = settings()
        units = dict(memory_units=shown.memory_units.value)
        steps = walks.for_page(steps, bandwidth_units=shown.bandwidth_units.value, **units)
    # The URL still holds the previous step's values until the widgets render: tell the URL
    # notices (widgets._raw) to ignore them for the keys this run's step set.
    st.session_state[CODE_SET] = st.session_state.pop(PENDING, ())
    steps = tuple(steps)
    if not steps:
        return 0
    last = len(steps)
    step = current_step(key, last)
    if step == 0:
        if st.query_params.get(key) is not None:  # e.g. walk=9 on a 5-step walk
            st.query_params.pop(key, None)
        st.session_state.pop(APPLIED, None)
    elif st.session_state.get(APPLIED) != (key, step, _identity(steps)):
        _apply(steps[step - 1], only_absent=True)  # arrived by a link at this step
        st.session_state[APPLIED] = (key, step, _identity(steps))

    row = where.container(horizontal=True, vertical_alignment="center")
    if step == 0:
        row.button("🚶 Walk me through it", key=f"{key}_start", on_click=_go, args=(key, 1, steps))
        return 0
    back = dict(key=f"{key}_back", disabled=step == 1, on_click=_go, args=(key, step - 1, steps))
    row.button("◀ Back", **back)
    row.markdown(f"**Walk: step {step} of {last}**", width="content")
    nxt = dict(key=f"{key}_next", disabled=step == last, on_click=_go, args=(key, step + 1, steps))
    row.button("Next ▶", **nxt)
    row.button("✕ Leave the walk", key=f"{key}_leave", on_click=_go, args=(key, 0, steps))
    where.info(steps[step - 1].say, icon="🚶" if step < last else "💡")
    return step
