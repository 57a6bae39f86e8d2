"""Key buttons that nudge a URL-bound slider (issue 14: ← / → halve or double M on the pipeline
page), and the rule that applies their queued presses: every press lands, however fast."""

from __future__ import annotations

from typing import Any

import streamlit as st


def settle(key: str, lo: Any, hi: Any, default: Any) -> None:
    """Apply the queued key presses of `nudges` to the slider `key`, from the value the server
    last gave it; all in plain Python, before any Streamlit call, so a rerun that interrupts this
    one (a faster press) cannot split "presses consumed" from "value recorded".

    The browser sends its copy of every widget with a trigger, and a press made before the last
    run's slider reached the browser carries the value from before the press (issue 14: M × 2
    twice then P + 1 landed on M=16, one press lost). So while `_<key>_base` (the browser's value
    when presses were last applied) is what the browser still sends, the server's value stands;
    any other value (the browser caught up, or a drag) ends that.
    """
    ss, at_key, base_key = st.session_state, f"_{key}_at", f"_{key}_base"
    base = ss.get(base_key)
    if base is not None and key in ss and ss[key] == base and at_key in ss:
        ss[key] = ss[at_key]  # the browser's stale copy: keep what the presses made
    elif base is not None:
        del ss[base_key]
        base = None
    pending = ss.pop(f"_{key}_nudges", None)
    if not pending:
        return
    sent = ss[key] if key in ss else ss.get(at_key, default)
    at = sent
    for move in pending:
        at = min(max(move(at), lo), hi)
    ss[key] = ss[at_key] = at
    ss[base_key] = sent if base is None else base


def _nudge(key: str, move) -> None:
    st.session_state.setdefault(f"_{key}_nudges", []).append(move)


def nudges(key: str, buttons, *, where: Any = st) -> None:
    """Small buttons with keyboard shortcuts that move the slider `key` (drawn before them in the
    same run): buttons = [(label, shortcut, move)], move(value) -> new value, clamped to the
    slider's range. Presses queue and all land, however fast."""
    row = where.container(horizontal=True)
    for label, shortcut, move in buttons:
        row.button(
            label, key=f"{key}_{shortcut}", shortcut=shortcut, on_click=_nudge, args=(key, move)
        )
