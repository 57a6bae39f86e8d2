"""URL-bound widgets; a malformed or out-of-range URL value falls back with a notice."""

from __future__ import annotations

import math
import time
from typing import Any

import streamlit as st

from app_pages.common.nudge import settle

NOTICES = "_url_notices"
_BIND = "query-params"
CODE_SET = "_code_set_keys"  # widget keys code wrote for this run (a walk step: common/walk.py)


def _raw(key: str) -> str | None:
    """The URL's value for a key before the widget reads it (None if absent)."""
    if key in st.session_state.get(CODE_SET, ()):
        return None  # code set this widget for this run: the URL's old value is not the user's
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
    disabled: bool = False,
    on_change: Any = None,
) -> Any:
    """A URL-bound slider; an out-of-range or malformed URL value falls back with a notice.
    disabled: greyed out (say why in `help`) when it does nothing for the current choices.

    Key presses queued by `nudges` move it from the value it last showed (not from the browser's
    possibly stale copy). A notice only when the URL seeded the slider (its first run): after a
    press the server's copy of the URL is stale, and that is not a bad URL value."""
    settle(key, lo, hi, default)
    raw = _raw(key) if key not in st.session_state else None
    kw = dict(step=step, key=key, help=help, bind=_BIND, disabled=disabled, on_change=on_change)
    value = where.slider(label, lo, hi, default, **kw)
    st.session_state[f"_{key}_at"] = value
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
    on_change: Any = None,
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
        on_change=on_change,
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
    on_change: Any = None,
) -> str:
    """A URL-bound choice among {key: label}, returning the key; the URL holds the label."""
    labels = list(choices.values())
    raw = _raw(key)
    index = list(choices).index(default)
    kw = dict(index=index, key=key, help=help, bind=_BIND, on_change=on_change)
    if radio:
        shown = where.radio(label, labels, horizontal=horizontal, **kw)
    else:
        shown = where.selectbox(label, labels, **kw)
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


def _press(key: str, delta: int | None) -> None:
    """Back / Next / Reset: queue the press; `stepper` applies it to its own count of the step.

    Not to the slider's value: a press arriving while the previous rerun still runs carries the
    browser's stale slider value (Streamlit sends every widget's client value with a trigger), so
    "slider + 1" lost every press made faster than a rerun (issue 14).
    """
    st.session_state.setdefault(f"_{key}_presses", []).append(delta)


def _dragged(key: str) -> None:
    st.session_state[f"_{key}_dragged"] = True


def _play(key: str) -> None:
    st.session_state[f"_{key}_playing"] = not st.session_state.get(f"_{key}_playing", False)


def playing(key: str) -> bool:
    """Whether the stepper `key` is playing (its ▶ Play button toggles it; not kept in the URL)."""
    return bool(st.session_state.get(f"_{key}_playing", False))


def advance(key: str, last: int) -> None:
    """One Play tick: queue a Next press, and stop playing at the last step."""
    if st.session_state.get(f"_{key}_at", 0) >= last:
        st.session_state[f"_{key}_playing"] = False
    else:
        _press(key, 1)


def _target(key: str, last: int) -> int | None:
    """The step this run must show, or None to let the slider keep (or seed) its value.

    The step lives in `_<key>_at` (what the stepper last showed). Presses move it; a drag of the
    slider (its on_change, with no press in the same rerun) replaces it; a smaller range clamps it.
    """
    presses = st.session_state.pop(f"_{key}_presses", [])
    dragged = st.session_state.pop(f"_{key}_dragged", False)
    at = st.session_state.get(f"_{key}_at")
    if at is None:  # the first run: the slider seeds itself from the URL
        asked = url_int(key)
        if asked is not None and asked > last:
            _note(key, _raw(key) or "", f"must be a number from 0 to {last}", last)
            return last
        return None
    if presses:
        for delta in presses:
            at = 0 if delta is None else min(max(at + delta, 0), last)
        return at
    now = st.session_state.get(key, at) if dragged else at
    return last if now > last else None


def stepper(label: str, last: int, *, key: str, play: bool = False, stacked: bool = False) -> int:
    """A URL-bound step slider 0 … last with ◀ Back / Next ▶ / Reset buttons (keys ← → Home),
    and with play=True a ▶ Play / ❚❚ Pause button (the page calls `advance` on each tick).

    One count of the step: presses queue in callbacks and are applied here in order, so fast
    presses all land; the URL is written by the bound slider, and a URL notice appears only for a
    URL value that could not be used when the page opened (not for the stale URL the server still
    holds after a press).
    """
    step_now = _target(key, last)
    if step_now is not None:
        st.session_state[key] = step_now
    # One horizontal row (one message, not st.columns' six: issue 18): the slider stretches, the
    # buttons take their labels' width. Stacked (a narrow column, the ring's slide): slider above.
    s1 = st.container() if stacked else None
    row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")
    s1, cols = s1 or row, [row] * (4 if play else 3)
    fresh = key not in st.session_state
    raw = _raw(key) if fresh else None
    step = s1.slider(label, 0, last, 0, key=key, on_change=_dragged, args=(key,), bind=_BIND)
    if raw is not None and not _same_number(raw, step):
        _note(key, raw, f"must be a number from 0 to {last}", step)
    st.session_state[f"_{key}_at"] = step
    buttons = [("◀ Back", "Left", -1), ("Next ▶", "Right", 1), ("Reset", "Home", None)]
    fill = "content"
    for col, (text, shortcut, delta) in zip(cols, buttons):
        col.button(text, shortcut=shortcut, on_click=_press, args=(key, delta), width=fill)
    if play:
        label_play = "❚❚ Pause" if playing(key) else "▶ Play"
        cols[3].button(label_play, on_click=_play, args=(key,), width=fill, key=f"{key}_play")
    return step


def play_tick(key: str, last: int, every_s: float) -> None:
    """Call at the top of a fragment that runs every `every_s` while the stepper `key` plays (and
    holds the stepper): queues one Next press per period, and stops playing at `last`. Guarded
    by the time of the last tick, so a rerun for any other reason does not step twice."""
    if not playing(key):
        return
    now, stamp = time.monotonic(), f"_{key}_ticked"
    if now - st.session_state.get(stamp, 0.0) < 0.8 * every_s:
        return
    st.session_state[stamp] = now
    advance(key, last)
