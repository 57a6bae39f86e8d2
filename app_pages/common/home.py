"""The landing page (app.py's Home): a still of a real ring all-reduce, a 30-minute path through
the pages, the map of the four splits, and where the unit switch is.
"""

from __future__ import annotations

import streamlit as st

from app_pages.common import (
    BANDWIDTH_UNITS,
    MEMORY_UNITS,
    Settings,
    chart,
    settings,
    show_url_notices,
)
from core.collectives import example_inputs, ring_all_reduce
from figures.home import ring_still_caption, ring_still_figure

# The suggested first visit: page title -> (minutes, what to do there). Sums to 30 minutes; pages
# not listed (reliability, traces, scenarios, later ones) are offered after it.
PATH = {
    "Collectives": (
        6,
        "step the ring with ← / →, then raise N: each GPU still sends ≈ 2× its data",
    ),
    "Data parallel": (4, "see shard gradients average to the full-batch one, and the bill for it"),
    "Tensor parallel": (4, "split one MLP by columns then rows; see why TP stays in a node"),
    "Pipeline": (5, "raise the micro-batches M and watch the idle bubble shrink"),
    "Memory": (5, "does the model fit? add ZeRO stages until it does"),
    "Planner": (4, "let the search pick the fastest layout that fits"),
    "Self-check": (2, "derive a few numbers yourself; the answers explain themselves"),
}
RING_GPUS = 4  # small enough to print every number in its cell


def pitch() -> None:
    st.title("SplitLab")
    st.session_state["_notice_slot"] = st.empty()
    st.markdown(
        "#### How a training run is cut across a cluster — and what every cut costs in memory, "
        "communication and idle time. Every chart is computed live; every link reproduces its "
        "view."
    )


def ring_still() -> None:
    trace = ring_all_reduce(example_inputs(RING_GPUS, RING_GPUS))
    chart(ring_still_figure(trace), key="home_ring")
    st.caption(ring_still_caption(trace))


def _other_memory_unit() -> str:
    """The memory unit that is not the default: the one a link would have to carry."""
    default = Settings().memory_units.value
    return next(label for value, label in MEMORY_UNITS.items() if value != default)


def units_note() -> None:
    shown = settings()
    st.info(
        "**Units and display are in the sidebar** (› at the top left): memory in GiB (what "
        "nvidia-smi reports) or GB (datasheets), bandwidth in GB/s or GiB/s, and presenter mode "
        f"for a projector. Now: **{MEMORY_UNITS[shown.memory_units.value]}** and "
        f"**{BANDWIDTH_UNITS[shown.bandwidth_units.value]}**. Every page follows them and "
        f"every link carries them (`?mem={_other_memory_unit()}`, `?present=true`).",
        icon="🎛️",
    )


def _card(where, path: str, title: str, icon: str, question: str, step: str = "") -> None:
    with where.container(border=True):
        st.page_link(path, label=f"**{title}**", icon=icon)
        if step:
            st.markdown(step)
        st.caption(question)


def path_cards(pages: list[tuple[str, str, str, str]]) -> None:
    """The 30-minute path as numbered cards, then every other page."""
    total = sum(minutes for minutes, _ in PATH.values())
    st.subheader(f"A {total}-minute path")
    on_path = [p for p in pages if p[1] in PATH]
    cols = st.columns(min(4, max(1, len(on_path))))
    for i, (path, title, icon, question) in enumerate(on_path):
        minutes, todo = PATH[title]
        _card(
            cols[i % len(cols)],
            path,
            title,
            icon,
            question,
            f"**{i + 1} · {minutes} min** — {todo}",
        )
    rest = [p for p in pages if p[1] not in PATH]
    if rest:
        st.subheader("Then")
        cols = st.columns(min(4, len(rest)))
        for i, (path, title, icon, question) in enumerate(rest):
            _card(cols[i % len(cols)], path, title, icon, question)


SPLITS = (
    ("Split the data", "data parallel", "all-reduce the gradients"),
    ("Split a layer", "tensor parallel", "all-reduce inside every block"),
    ("Split the layers", "pipeline parallel", "idle while the pipe fills and drains"),
    ("Shard the state", "ZeRO / FSDP", "gather weights, reduce-scatter gradients"),
)


def split_map() -> None:
    st.subheader("The map")
    st.markdown(
        "One GPU cannot hold a large model (≈ 16 bytes per parameter to train), so the run is "
        "split four ways, all glued by collectives (all-reduce = reduce-scatter + all-gather). "
        "The planner combines them on a real topology: TP inside a node, PP across nodes, DP "
        "outermost."
    )
    for col, (verb, name, cost) in zip(st.columns(len(SPLITS)), SPLITS):
        col.markdown(f"**{verb}** → {name}  \n*costs:* {cost}")


def landing(pages: list[tuple[str, str, str, str]]) -> None:
    """The whole Home page, from app.py's registered pages (file, title, icon, question)."""
    pitch()
    ring_still()
    units_note()
    path_cards(pages)
    split_map()
    show_url_notices()
