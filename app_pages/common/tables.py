"""Tables on pages: full-width dataframes, CSV downloads that do not rerun, and clickable rows
whose click is written into URL-bound widgets (re-exported by app_pages.common)."""

from __future__ import annotations

from typing import Any

import streamlit as st


def download(
    label: str,
    data: Any,
    file_name: str,
    mime: str = "text/csv",
    *,
    key: str | None = None,
    help: str | None = None,
    where: Any = st,
) -> None:
    """A download button (data: bytes, text, or a callable building them only when clicked)
    whose click does not rerun the page.
    """
    where.download_button(
        label, data, file_name, mime, key=key, help=help, on_click="ignore", icon="⬇️"
    )


def csv_button(rows: Any, file_name: str, *, where: Any = st) -> None:
    """A CSV download of a table (a DataFrame or a list of row dicts), built only when clicked."""
    import pandas as pd

    download(
        f"{file_name} (CSV)", lambda: pd.DataFrame(rows).to_csv(index=False), file_name, where=where
    )


def table(data: Any, *, where: Any = st) -> None:
    """st.table of rows (a list of dicts), columns (a dict of lists) or a pyarrow Table, index
    hidden, handed over as a pyarrow Table. Given a list or dict, st.table builds two pandas
    frames of Arrow strings (one only to decide whether to hide the index): ~25% of the script
    thread's samples on an N move on /collectives (py-spy against benchmarks.load, 2026-12-07);
    a pyarrow Table goes straight to Arrow bytes."""
    import pyarrow as pa

    if isinstance(data, list):
        data = pa.Table.from_pylist(data)
    elif isinstance(data, dict):
        data = pa.Table.from_pydict(data)
    where.table(data, hide_index=True)


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
