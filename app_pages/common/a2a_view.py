"""The collectives page's all-to-all section (issue 17): the blocks of a real pairwise all-to-all
before and after a URL-bound step (its own fragment: a step reruns only the drawing), then its
cost beside all-gather's and all-reduce's, one-link and two-tier. Kept apart from
app_pages/collectives.py so the page stays within its line budget.
"""

from __future__ import annotations

import functools
from dataclasses import asdict

import pyarrow as pa
import streamlit as st

from app_pages import common
from app_pages.common.ring_view import TwoTier
from core import collectives as coll
from core.hardware import make_cluster
from figures.collectives import all_to_all as a2a


@functools.lru_cache(maxsize=32)  # lru_cache, not Streamlit's: common/ring_view.py says why
def simulated(n: int) -> coll.AllToAllResult:
    """One all-to-all of N × N labelled blocks, moved by the core's pairwise schedule."""
    return coll.all_to_all(a2a.example_blocks(n))


@functools.lru_cache(maxsize=64)
def drawing(n: int, step: int, height: int) -> dict:
    return a2a.transpose_figure(simulated(n), step, height=height)


@functools.lru_cache(maxsize=32)
def cost_rows(n, size, bw, alpha, tiers: TwoTier | None, mem: str) -> pa.Table:
    """The cost table as the Arrow table st.table sends (built once per inputs: common.table)."""
    cluster = make_cluster(**asdict(tiers)) if tiers else None
    return pa.Table.from_pylist(a2a.cost_table(a2a.costs(n, size, bw, alpha, cluster), mem))


@st.fragment  # decorated once, at import (ring_view.py `_section` says why)
def blocks(n: int) -> None:
    """The step control and the before/after blocks, as a fragment of their own."""
    common.sections.follow_page()  # args from a page run that finished
    if (st.session_state.get("a2a", common.url_int("a2a")) or 0) > n - 1:  # N shrank
        st.session_state["a2a"] = n - 1
    help_ = "Pairwise exchange: at step i GPU r sends its block for GPU r + i (mod N)."
    step = common.slider("All-to-all step", 0, max(n - 1, 1), 0, key="a2a", help=help_)
    step = min(step, n - 1)
    height = 340 if common.settings().presenter else 380
    common.chart(drawing(n, step, height), key="a2a_blocks")


def section(n, size, bw, alpha, tiers: TwoTier | None, mem: str) -> None:
    """Heading, blocks, the cost table and the takeaway (inside the page's algorithms fragment)."""
    st.subheader("All-to-all: every GPU sends a different block to every other GPU")
    st.caption(
        "What an MoE layer's token dispatch and Ulysses' head split run (pages Expert and Context "
        "parallelism). Each block holds the number 100·from + to; the right panel is decoded from "
        "the arrays the simulator delivered."
    )
    blocks(n)
    common.table(cost_rows(n, size, bw, alpha, tiers, mem))
    st.caption(
        "Same per-GPU buffer S on this page's link; busbw = algbw × factor (nccl-tests). Two-tier "
        "(toggle above): all-to-all runs its NVLink and NIC legs at once; all-reduce is the "
        "two-level algorithm."
    )
    st.info(a2a.takeaway(n, tiers.gpus_per_node if tiers else 8), icon="🔀")
