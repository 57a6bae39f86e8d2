"""Shared page helpers: URL-bound widgets with invalid-value notices, errors, charts,
self-checks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from core.units import ByteSystem
from figures.theme import presenter, ready

_NOTICES = "_url_notices"
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
    """A URL value made safe to quote inside a markdown code span (no backticks, no control
    chars).
    """
    return "".join(ch for ch in raw[:limit] if ch.isprintable() and ch != "`")


def _note(key: str, raw: str, rule: str, value: Any) -> None:
    st.session_state.setdefault(_NOTICES, []).append(
        f"URL value `{key}={_inert(raw)}` was ignored ({rule}); using {value}."
    )


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

    def as_float(v):
        return None if v is None else float(v)

    value = where.number_input(
        label,
        min_value=as_float(lo),
        max_value=as_float(hi),
        value=as_float(default),
        step=as_float(step) if step is not None else (1.0 if whole else None),
        format=fmt or ("%d" if whole else None),
        key=key,
        help=help,
        bind=_BIND,
    )
    if whole and value is not None:
        value = int(round(value))
    if raw is not None and raw != "" and (value is None or not _same_number(raw, value)):
        _note(key, raw, f"must be a number from {lo} to {hi}", value)
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
    """A URL-bound choice among {internal key: short label}; returns the internal key.

    Streamlit writes the displayed label into the URL, so labels are kept short and stable.
    """
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


def begin_run() -> None:
    """Reset the notices of the previous run (app.py calls this before any widget)."""
    st.session_state[_NOTICES] = []
    st.session_state["_notice_slot"] = None


def start_page(title: str, question: str) -> None:
    """Title, the page's one question, and a slot for URL notices (filled by `show_url_notices`)."""
    st.title(title)
    st.markdown(f"**Question:** {question}")
    st.session_state["_notice_slot"] = st.empty()


def show_url_notices() -> None:
    """Show every ignored URL value collected so far, in the slot under the title."""
    notes = st.session_state.get(_NOTICES) or []
    slot = st.session_state.get("_notice_slot")
    if notes and slot is not None:
        slot.warning("\n\n".join(notes), icon="⚠️")


@contextmanager
def explain_errors() -> Iterator[None]:
    """Show a core ValueError (which states the rule and the fix) as a page error, then stop."""
    try:
        yield
    except ValueError as err:
        show_url_notices()
        st.error(str(err), icon="🚫")
        st.stop()


def memory_units() -> ByteSystem:
    """The global memory-unit choice (GiB by default), set in the sidebar by app.py."""
    return ByteSystem(st.session_state.get("mem_units_value", ByteSystem.BINARY.value))


def bandwidth_units() -> ByteSystem:
    """The global bandwidth-unit choice (GB/s by default), set in the sidebar by app.py."""
    return ByteSystem(st.session_state.get("bw_units_value", ByteSystem.DECIMAL.value))


IMAGE_FORMATS = {"png": "PNG", "svg": "SVG"}  # the toolbar's camera button takes one format


def chart_config(image_format: str, name: str) -> dict:
    """Plotly config: no logo, responsive, camera button saving `name`.png (2× scale) or .svg."""
    fmt = image_format if image_format in IMAGE_FORMATS else "png"
    return {
        "displaylogo": False,
        "responsive": True,
        "modeBarButtonsToAdd": ["toImage"],
        "toImageButtonOptions": {
            "format": fmt,
            "filename": f"splitlab-{name}",
            **({"scale": 2} if fmt == "png" else {}),
        },
    }


def chart(fig: Any, *, key: str | None = None, height: int | None = None) -> None:
    """Draw a Plotly figure (dict or go.Figure) full width; its toolbar saves PNG or SVG
    (sidebar).
    """
    if st.session_state.get("present_value"):
        fig = presenter(fig)
        own = fig.get("layout", {}).get("height")  # e.g. a cluster map sized to its aspect ratio
        height = int((height or own or 450) * 1.25)
    if height is not None:  # never mutate the caller's (possibly cached) figure
        if isinstance(fig, dict):
            fig = {**fig, "layout": {**fig.get("layout", {}), "height": height}}
        else:
            fig = fig.to_dict()
            fig["layout"]["height"] = height
    if isinstance(fig, dict):
        fig = ready(fig)  # builders' specs are validated by the figure tests, not per rerun
    # theme=None: the figures carry their own colours; Streamlit's theme layer only added browser
    # work on every redraw (measured ~20 ms per chart per slider move).
    config = chart_config(st.session_state.get("img_format_value", "png"), key or "chart")
    st.plotly_chart(fig, width="stretch", key=key, config=config, theme=None)


def csv_button(rows: Any, file_name: str, *, where: Any = st) -> None:
    """A CSV download of a table (a DataFrame or a list of row dicts), built only when clicked."""
    import pandas as pd

    where.download_button(
        f"{file_name} (CSV)",
        lambda: pd.DataFrame(rows).to_csv(index=False),
        file_name,
        "text/csv",
        on_click="ignore",
        icon="⬇️",
    )


def takeaway(text: str) -> None:
    """The page's one-line lesson."""
    st.success(f"**Takeaway.** {text}", icon="💡")


def self_check(
    question: str,
    answer: float,
    *,
    key: str,
    rel_tol: float = 0.02,
    explanation: str = "",
    unit: str = "",
) -> None:
    """A numeric question; the learner's answer is checked within a relative tolerance."""
    guess = number(question + (f" ({unit})" if unit else ""), None, None, None, key=key)
    if guess is None:
        return
    if math.isclose(guess, answer, rel_tol=rel_tol, abs_tol=1e-12):
        st.success(f"Correct: {answer:,.6g}{' ' + unit if unit else ''}. {explanation}")
    else:
        st.error(
            f"Not quite: you said {guess:,.6g}; the answer is {answer:,.6g}"
            f"{' ' + unit if unit else ''}. {explanation}"
        )


# --- pages2 additions ---
def same(names: Any) -> dict[str, str]:
    """{name: name}: choices whose URL label is their own name."""
    return {str(n): str(n) for n in names}


@contextmanager
def explain_errors_and_continue(prefix: str = "") -> Iterator[None]:
    """Show a core ValueError (prefixed, e.g. "Layout B: ") as a page error; the page goes on
    after the `with` block (the rest of the block is skipped).
    """
    try:
        yield
    except ValueError as err:
        st.error(f"{prefix}{err}", icon="🚫")


def download(
    label: str,
    data: Any,
    file_name: str,
    mime: str = "text/csv",
    *,
    key: str | None = None,
    where: Any = st,
) -> None:
    """A download button (data: bytes, text, or a callable building them only when clicked)
    whose click does not rerun the page.
    """
    where.download_button(label, data, file_name, mime, key=key, on_click="ignore", icon="⬇️")


def metrics(items: list[dict], widths: Any = None, **common_kw: Any) -> None:
    """One `st.metric` per dict of keyword arguments, side by side (widths as in st.columns)."""
    for col, kw in zip(st.columns(widths or len(items)), items):
        col.metric(**common_kw, **kw)


def column_config(columns: dict[str, tuple[str, str | None, str | None]]) -> dict:
    """st.dataframe column settings from {column: (header, number format or None, width)}."""
    return {
        k: st.column_config.NumberColumn(h, format=f, width=w)
        if f
        else st.column_config.Column(h, width=w)
        for k, (h, f, w) in columns.items()
    }


# Clickable tables: a clicked dataframe row (selections are not URL-bound) is written into the
# session state of URL-bound widgets, which puts it in the URL. The page calls `apply_row_click`
# before those widgets render (a bound widget takes its session state only then) and
# `clickable_rows` when it knows the rows the table shows.
def _selection(table: str) -> tuple:
    return tuple((st.session_state.get(table) or {}).get("selection", {}).get("rows", ()))


def apply_row_click(table: str, controls: Any) -> None:
    """If a new row of `table` was clicked, write `controls(row)` (a dict of widget values) into
    session state; a str from `controls` is a note instead (see `show_row_click_note`).
    """
    ss, sel = st.session_state, _selection(table)
    rows, sig = ss.get(f"_{table}_rows", ()), ss.get(f"_{table}_sig")
    if not sel or sel[0] >= len(rows) or (sig, sel) == ss.get(f"_{table}_applied"):
        return
    ss[f"_{table}_applied"] = (sig, sel)
    values = controls(rows[sel[0]])
    if isinstance(values, str):
        ss[f"_{table}_note"] = values
    else:
        ss.update(values)


def clickable_rows(table: str, signature: Any, rows: list[dict]) -> None:
    """Remember the rows `table` shows; a new table (new signature) makes a selection left over
    from the old one not a new click.
    """
    ss = st.session_state
    if ss.get(f"_{table}_sig") != signature:
        ss[f"_{table}_applied"] = (signature, _selection(table))
    ss[f"_{table}_sig"], ss[f"_{table}_rows"] = signature, rows


def show_row_click_note(table: str) -> None:
    """Show (once) the note a click on a row of `table` left instead of widget values."""
    if note := st.session_state.pop(f"_{table}_note", None):
        st.warning(note)


def dataframe(rows: Any, columns: dict | None = None, **kw: Any) -> None:
    """A full-width table without index of rows (a DataFrame or a list of row dicts); columns
    as in `column_config`.
    """
    import pandas as pd

    config = column_config(columns or {})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config=config, **kw)


def clickable_table(
    key: str, rows: list[dict], signature: Any, columns: dict, order: list[str], height: int
) -> None:
    """A full-width table of rows whose click reruns the page (see `apply_row_click`); columns
    as in `column_config`, shown in `order`.
    """
    clickable_rows(key, signature, rows)
    dataframe(
        rows,
        columns,
        key=key,
        on_select="rerun",
        selection_mode="single-row",
        column_order=order,
        height=height,
    )
