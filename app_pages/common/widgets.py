"""URL-bound widgets; a malformed or out-of-range URL value falls back with a notice."""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

NOTICES = "_url_notices"
_BIND = "query-params"


def _raw(key: str) -> str | None:
    """The URL's value for a key before the widget reads it (None if absent)."""
    try:
        return st.query_params.get(key)
    except Exception:  # a malformed query string must never break a page
        return None


def url_int(key: str) -> int | None:
    """The URL's value for key as a whole number, or None if absent or not one."""
    raw = _raw(key)
    try:
        value = float(raw) if raw is not None else math.nan
    except ValueError:
        return None
    return int(value) if math.isfinite(value) and value == int(value) else None


def _inert(raw: str, limit: int = 40) -> str:
    """A URL value safe to quote in a markdown code span (no backticks, no control chars)."""
    return "".join(ch for ch in raw[:limit] if ch.isprintable() and ch != "`")


def _note(key: str, raw: str, rule: str, value: Any) -> None:
    st.session_state.setdefault(NOTICES, []).append(
        f"URL value `{key}={_inert(raw)}` was ignored ({rule}); "
        + ("the box is left empty." if value is None else f"using {value}.")
    )


def _float(v: float | None) -> float | None:
    return None if v is None else float(v)


def _same_number(raw: str, value: float) -> bool:
    try:
        parsed = float(raw)
    except ValueError:
        return False
    return math.isfinite(parsed) and math.isclose(parsed, value, rel_tol=1e-9, abs_tol=1e-12)


def slider(
    label: str,
    lo: int | float,
    hi: int | float,
    default: int | float,
    *,
    key: str,
    step: int | float | None = None,
    help: str | None = None,
    where: Any = st,
) -> Any:
    """A URL-bound slider; an out-of-range or malformed URL value falls back with a notice."""
    raw = _raw(key)
    value = where.slider(label, lo, hi, default, step=step, key=key, help=help, bind=_BIND)
    if raw is not None and not _same_number(raw, value):
        _note(key, raw, f"must be a number from {lo} to {hi}", value)
    return value


def number(
    label: str,
    lo: float | None,
    hi: float | None,
    default: float | None,
    *,
    key: str,
    step: float | None = None,
    fmt: str | None = None,
    help: str | None = None,
    where: Any = st,
) -> Any:
    """A URL-bound number input with the same fallback rule as `slider`."""
    raw = _raw(key)
    # Streamlit 1.67 crashes seeding an *integer* number_input from a URL value like "inf" or
    # "1e309" (OverflowError in int()); a float input shown as a whole number is seeded safely.
    whole = default is not None and all(
        isinstance(v, int) and not isinstance(v, bool)
        for v in (lo, hi, default, step)
        if v is not None
    )

    value = where.number_input(
        label,
        min_value=_float(lo),
        max_value=_float(hi),
        value=_float(default),
        step=_float(step) if step is not None else (1.0 if whole else None),
        format=fmt or ("%.0f" if whole else None),  # "%d" on a float logs a stack per rerun
        key=key,
        help=help,
        bind=_BIND,
    )
    if whole and value is not None:
        value = int(round(value))
    if raw is not None and raw != "" and (value is None or not _same_number(raw, value)):
        bounds = {(True, True): "", (True, False): f" ≤ {hi}", (False, True): f" ≥ {lo}"}
        rule = bounds.get((lo is None, hi is None), f" from {lo} to {hi}")  # never "None"
        _note(key, raw, f"must be a number{rule}", value)
    return value


def select(
    label: str,
    choices: dict[str, str],
    default: str,
    *,
    key: str,
    help: str | None = None,
    horizontal: bool = False,
    radio: bool = False,
    where: Any = st,
) -> str:
    """A URL-bound choice among {key: label}, returning the key; the URL holds the label."""
    labels = list(choices.values())
    raw = _raw(key)
    index = list(choices).index(default)
    if radio:
        shown = where.radio(
            label, labels, index=index, key=key, help=help, horizontal=horizontal, bind=_BIND
        )
    else:
        shown = where.selectbox(label, labels, index=index, key=key, help=help, bind=_BIND)
    if raw is not None and raw != shown:
        _note(key, raw, f"must be one of {', '.join(labels)}", shown)
    return next(k for k, v in choices.items() if v == shown)


def toggle(
    label: str, default: bool, *, key: str, help: str | None = None, where: Any = st
) -> bool:
    """A URL-bound on/off switch; anything but true/false in the URL falls back with a notice."""
    raw = _raw(key)
    value = where.toggle(label, value=default, key=key, help=help, bind=_BIND)
    if raw is not None and raw.lower() != str(value).lower():
        _note(key, raw, "must be true or false", value)
    return value


def _move(key: str, delta: int | None, last: int) -> None:
    """Back / Next / Reset: set the bound step slider before it renders, kept in 0 … last."""
    st.session_state[key] = (
        0 if delta is None else min(max(st.session_state.get(key, 0) + delta, 0), last)
    )


def stepper(label: str, last: int, *, key: str) -> int:
    """A URL-bound step slider 0 … last with ◀ Back / Next ▶ / Reset buttons (keys ← → Home)."""
    asked = st.session_state.get(key, url_int(key))
    if asked is not None and asked > last:  # a smaller range than the step URL or session asked
        st.session_state[key] = last
    s1, *cols = st.columns([5, 1, 1, 1], vertical_alignment="bottom")
    step = slider(label, 0, last, 0, key=key, where=s1)
    buttons = (("◀ Back", "Left", -1), ("Next ▶", "Right", 1), ("Reset", "Home", None))
    for col, (text, shortcut, delta) in zip(cols, buttons):
        col.button(
            text, shortcut=shortcut, on_click=_move, args=(key, delta, last), width="stretch"
        )
    return step
