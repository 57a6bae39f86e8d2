"""Shared page helpers: the sidebar's global settings, errors, charts, metric rows, the "How this
is computed" block and self-checks. URL-bound widgets live in app_pages/common/widgets.py and are
re-exported here, so pages use `common.slider`, `common.select`… as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import streamlit as st

from app_pages.common import sections
from app_pages.common.lesson import (  # noqa: F401  (re-exported: pages call common.<name>)
    HEADLINE,
    how_computed,
    how_lines,
    self_check,
    self_checks,
    takeaway,
    takeaway_slot,
)
from app_pages.common.plot import drawn_json, plot
from app_pages.common.tables import (  # noqa: F401  (re-exported: pages call common.<name>)
    apply_row_click,
    clickable_rows,
    clickable_table,
    column_config,
    csv_button,
    dataframe,
    download,
    show_row_click_note,
    table,
)
from app_pages.common.widgets import NOTICES, number, select, slider, stepper, toggle, url_int  # noqa: F401
from core.units import ByteSystem
from figures.legend_room import with_legend_room
from figures.theme import presenter, ready, revised

IMAGE_FORMATS = {"png": "PNG", "svg": "SVG"}  # the toolbar's camera button takes one format
MEMORY_UNITS = {"binary": "GiB", "decimal": "GB"}  # ByteSystem value → the label in the URL
BANDWIDTH_UNITS = {"decimal": "GB/s", "binary": "GiB/s"}
SETTINGS_KEY = "_settings"  # the one session-state key holding the sidebar's Settings


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The sidebar's global display conventions, which every page obeys."""

    # GB = 10^9 B by default, the course's unit (1 GB ring → 1.75 GB sent; 70B × 16 B ≈ 1.1 TB);
    # GiB = 2^30 B (what nvidia-smi and PyTorch report) one click away. Every page formats
    # memory through this one setting (common.memory_units()).
    memory_units: ByteSystem = ByteSystem.DECIMAL
    bandwidth_units: ByteSystem = ByteSystem.DECIMAL  # GB/s, the nccl-tests convention
    presenter: bool = False
    image_format: str = "png"  # what a chart's camera button saves: a key of IMAGE_FORMATS

    def query(self) -> dict[str, str]:
        """The URL parameters of the settings that differ from the defaults, for links that
        must open another page with the same conventions (the sidebar widgets' keys and labels).
        """
        default = Settings()
        chosen = {
            "mem": (self.memory_units, default.memory_units, MEMORY_UNITS),
            "bw": (self.bandwidth_units, default.bandwidth_units, BANDWIDTH_UNITS),
            "img": (self.image_format, default.image_format, IMAGE_FORMATS),
        }
        out = {key: labels[value] for key, (value, base, labels) in chosen.items() if value != base}
        return out | ({"present": "true"} if self.presenter else {})


def settings() -> Settings:
    """This run's sidebar settings (the defaults when a page runs without app.py)."""
    return st.session_state.get(SETTINGS_KEY) or Settings()


def sidebar_settings() -> Settings:
    """The global settings as URL-bound sidebar widgets (app.py calls this before every page)."""
    with st.sidebar:
        st.markdown("**Units**")
        mem = select(
            "Memory",
            MEMORY_UNITS,
            Settings().memory_units.value,
            key="mem",
            radio=True,
            horizontal=True,
            help="GB = 10^9 bytes (the default: the course's numbers and datasheets); "
            "GiB = 2^30 bytes (what nvidia-smi and PyTorch report).",
        )
        bw = select(
            "Bandwidth",
            BANDWIDTH_UNITS,
            "decimal",
            key="bw",
            radio=True,
            horizontal=True,
            help="GB/s = 10^9 bytes/s, the nccl-tests and datasheet convention.",
        )
        st.markdown("**Display**")
        present = toggle(
            "Presenter mode",
            False,
            key="present",
            help="Large type, thick lines and a colour-blind-safe palette for "
            "projectors; the sidebar starts collapsed. Kept in the URL.",
        )
        img = select(
            "Chart download (toolbar 📷)",
            IMAGE_FORMATS,
            "png",
            key="img",
            radio=True,
            horizontal=True,
            help="What every chart's camera button saves: PNG (2× pixels, for slides) "
            "or SVG (vector, scales without blur, editable).",
        )
    units = {"memory_units": ByteSystem(mem), "bandwidth_units": ByteSystem(bw)}
    st.session_state[SETTINGS_KEY] = Settings(**units, presenter=present, image_format=img)
    return st.session_state[SETTINGS_KEY]


def begin_run() -> None:
    """Reset the notices of the previous run (app.py calls this before any widget)."""
    st.session_state[NOTICES] = []
    st.session_state["_notice_slot"] = None
    st.session_state["_takeaways"], st.session_state[HEADLINE] = -1, None  # see takeaway


def start_page(title: str, question: str) -> None:
    """Title, the page's one question, and a slot for URL notices (filled by `show_url_notices`)."""
    sections.page_started()  # fragments check the page ran to its end (sections.follow_page)
    presenting = settings().presenter  # a keyed head: presenter_css puts the first chart next
    with st.container(key="slide_head") if presenting else nullcontext():
        st.title(title)
        st.markdown(f"**Question:** {question}")
        st.session_state["_notice_slot"] = st.empty()
        st.session_state[HEADLINE] = st.empty() if presenting else None  # see takeaway


def show_url_notices() -> None:
    """Show every ignored URL value collected so far, in the slot under the title."""
    sections.page_finished()  # every page's last line: the whole-page run finished
    notes = st.session_state.get(NOTICES) or []
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


def attempt(
    fn: Callable[..., Any],
    *args: Any,
    where: Any = st,
    prefix: str = "",
    suffix: str = "",
    level: str = "error",
    **kwargs: Any,
) -> Any:
    """fn(*args, **kwargs), or None after showing the core's ValueError (between `prefix`, e.g.
    "Layout B: ", and `suffix`) in `where`: the rest of the page still draws (show and go on,
    beside `explain_errors`' show and stop). level="warning" when the page has a fallback."""
    try:
        return fn(*args, **kwargs)
    except ValueError as err:
        show = where.warning if level == "warning" else where.error
        show(f"{prefix}{err}{suffix}", icon="⚠️" if level == "warning" else "🚫")
        return None


def memory_units() -> ByteSystem:
    """The global memory-unit choice (GB by default, the course's unit)."""
    return settings().memory_units


def bandwidth_units() -> ByteSystem:
    """The global bandwidth-unit choice (GB/s by default)."""
    return settings().bandwidth_units


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


# Main column px at 1440 × 900 (and 1400 × 1000), presenting at 1280 × 720: legend margins only
PAGE_PX, PRESENT_PX, GAP_PX = 980, 1120, 16  # (figures/legend_room.py)


def chart(fig: Any, *, key: str, height: int | None = None, share: float = 1.0) -> None:
    """Draw a Plotly figure (dict or go.Figure) at `share` of the page's width; its toolbar
    saves PNG or SVG (sidebar). `key` is the chart's identity: the next rerun's figure under the
    same key is redrawn in place (common/plot.py)."""
    shown = settings()
    build = functools.partial(_as_drawn, presenting=shown.presenter, height=height, share=share)
    spec = drawn_json(fig, (key, shown.presenter, height, share), build)
    plot(spec, key=key, config=chart_config(shown.image_format, key))


def _as_drawn(fig: Any, *, presenting: bool, height: int | None, share: float) -> dict:
    """The spec `chart` sends: presenter size, height, legend room and datarevision."""
    if presenting:  # 1.25× the height, plus any room its legend needs (figures.theme)
        fig = presenter(fig, height_px=height)
        height = fig["layout"]["height"]
    if height is not None:  # never mutate the caller's (possibly cached) figure
        if isinstance(fig, dict):
            fig = {**fig, "layout": {**fig.get("layout", {}), "height": height}}
        else:
            fig = fig.to_dict()
            fig["layout"]["height"] = height
    if isinstance(fig, dict):
        page_px = PRESENT_PX if presenting else PAGE_PX
        width = page_px * share - GAP_PX * (share < 1)  # share: of the page's width
        fig = with_legend_room(fig, int(width))  # Plotly draws it once, not twice
        fig = ready(revised(fig))  # validated by the figure tests, not per rerun; revised: one draw
    # The figures carry their own colours (no Streamlit theme layer is involved).
    return fig if isinstance(fig, dict) else fig.to_dict()


def metrics(
    items: Iterable[dict], widths: Any = None, *, where: Any = st, **common_kw: Any
) -> None:
    """A row of metrics (widths as in st.columns, equal by default); each item holds st.metric's
    keyword arguments, `common_kw` those every metric shares (e.g. border=True). Equal widths: one
    horizontal container, as each column is a message costing the browser ~1.2 ms (plotly.md §2)."""
    items = list(items)
    if widths is None or isinstance(widths, int):
        row = where.container(horizontal=True, gap="small")
        for item in items[: widths or None]:
            row.metric(**common_kw, **item, width="stretch")
    else:
        for col, item in zip(where.columns(widths), items):
            col.metric(**common_kw, **item)


def charts(*figs: tuple[Any, str]) -> None:
    """Charts side by side, equal widths, from (figure, key) pairs (one row: one message)."""
    with st.container(horizontal=True, gap="small"):
        for fig, key in figs:
            chart(fig, key=key, share=1 / len(figs))


def same(names: Any) -> dict[str, str]:
    """{name: name}: choices whose URL label is their own name."""
    return {str(n): str(n) for n in names}


from app_pages.common.walk import walk  # noqa: E402,F401  (re-exported: common.walk)
