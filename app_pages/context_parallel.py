"""Context parallelism: how C GPUs share one long sequence's attention, and what it costs.

C, the chunk layout and the mask feed all three sections, so the controls and sections are one
`st.fragment` (issue 18), with each section's own controls in a fragment inside it: a move reruns
them, not the title, takeaway or self-checks (app_pages/common/sections.py)."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.cp_view import long_section, ring_section, toy, walk_steps
from app_pages.common.fold import cells
from figures.context_parallel import text


@st.fragment(key="cp_main")
def main_section() -> None:
    common.sections.follow_page()  # args from a page run that finished
    cols = cells(3)
    c = common.slider("CP degree C (ranks sharing the sequence)", 1, 16, 4, key="c", where=cols[0])
    layout = common.select("Chunks", text.LAYOUTS, "contiguous", key="lay", where=cols[1])
    causal = common.toggle("Causal mask", True, key="causal", where=cols[2])

    st.subheader("1 · Ring attention on real numbers")
    ring_section(c, layout, causal)

    st.subheader("2 · The causal mask and load balance: contiguous vs zig-zag")
    common.chart(toy(c, layout, causal)["gantt"], key="gantt")

    long_section(c, layout, causal, common.settings().memory_units.value)


common.start_page("Context parallelism", text.QUESTION)
common.walk(walk_steps(common.settings().memory_units.value))
main_section()
common.takeaway(text.takeaway(common.settings().presenter))
common.self_checks(text.self_checks(common.settings().memory_units.value))
common.show_url_notices()
