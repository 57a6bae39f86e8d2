"""Collectives: a real ring all-reduce you can watch, and why the ring scales.

Three keyed `st.fragment`s (issue 18): the controls with the ring, bytes per GPU, and the
algorithms. A control reruns the fragments it feeds, by key (`ALG`, `ALL`), so an N move leaves
the bytes chart alone; the controls' fragment writes the "How this is computed" lines into a
slot in the page's tail, and the title, takeaway and self-checks stay put
(app_pages/common/sections.py)."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.coll_view import Inputs, algorithms, bytes_scan
from app_pages.common.fold import cells, folded, peek
from app_pages.common.ring_view import ring_section, shown
from core.hardware import LINK_PRESETS
from figures.collectives import text as text
from figures.collectives.text import SIZES

LINKS = {name: name for name in LINK_PRESETS}
# The controls' sections (app_pages/common/sections.py): S feeds all three; N, the link and α the
# ring's and the algorithms'; the simulated elements only the ring's (its own fragment's rerun).
ALG = common.sections.rerun("coll_main", "coll_alg")
ALL = common.sections.rerun("coll_main", "coll_bytes", "coll_alg")


@st.fragment(key="coll_main")
def main_section(how) -> None:
    common.sections.follow_page()  # args from a page run that finished
    mem, bwu = common.settings().memory_units.value, common.settings().bandwidth_units.value
    c1, c2, c3, c4 = cells(4)
    n = common.slider("GPUs in the ring (N)", 2, 32, 8, key="n", where=c1, on_change=ALG)
    sizes = dict(key="size", where=c2, on_change=ALL)
    size = float(common.select("Tensor size per GPU (S)", SIZES, "1e9", **sizes))
    link_name = common.select("Link", LINKS, "NVLink 4", key="link", where=c3, on_change=ALG)
    link, bw = LINK_PRESETS[link_name], LINK_PRESETS[link_name].bandwidth_bytes_per_s
    summary = text.folded_summary(peek("elems", 8), peek("alpha", None), link.latency_s)
    with c4, folded(summary, what="More"):
        tip = "The simulator moves these real numbers; readouts scale them to the size S."
        elems = common.slider("Elements per GPU (simulated)", 1, 256, 8, key="elems", help=tip)
        alpha_label = "Latency α per step (µs; empty = the link's NCCL default)"
        alpha_kw = dict(key="alpha", step=1.0, on_change=ALG)
        alpha_us = common.number(alpha_label, 0.0, 1000.0, None, **alpha_kw)
    alpha = link.latency_s if alpha_us is None else alpha_us * 1e-6
    common.sections.share("coll", Inputs(n=n, size=size, link_name=link_name, alpha_s=alpha))

    note = st.empty()  # always here: an element that comes and goes remounts every chart below
    if elems < n:  # a ring cuts each tensor into N chunks: at least one element each
        note.caption(
            f"Simulating {n} elements per GPU, one per chunk: a ring of {n} cuts each tensor "
            f"into {n} chunks."
        )
        elems = n
    ring = ring_section(n, elems, bw, alpha, link_name, size, mem, bwu)
    st.caption(text.ring_caption(n, 2 * (n - 1)))
    trace = shown(n, elems)
    if trace.states is not None:
        # lazy (on_change="rerun"): a closed expander costs no grid on a move (issue 18)
        label = "Check a sum by eye: the inputs and what every GPU ends with"
        sums = st.expander(label, key="sum_eye", on_change="rerun")
        if sums.open:
            table, cols = text.sum_by_eye(trace.states[0], trace.outputs[0])
            sums.dataframe(table)
            if cols < elems:
                sums.caption(f"Elements 0 … {cols - 1} of {elems} shown.")
    st.download_button(
        "Download the step trace (CSV)",
        lambda t=trace: t.to_frame().to_csv(index=False),
        file_name=f"ring_allreduce_N{n}.csv",
        mime="text/csv",
        on_click="ignore",
    )
    with how.container():
        common.how_lines(text.how_computed(ring, trace.num_steps, bw, alpha, link_name, mem, bwu))


@st.fragment(key="coll_bytes")
def bytes_section() -> None:
    """Bytes per GPU against N at this S: its own fragment, so an N move does not re-send it."""
    common.sections.follow_page()  # args from a page run that finished
    size = common.sections.shared("coll", Inputs()).size
    st.subheader("Bytes per GPU stay flat as N grows; a central server's do not")
    common.chart(bytes_scan(size, common.settings().memory_units.value), key="bytes")


common.start_page(
    "Collectives: the ring all-reduce", "How do N GPUs sum one tensor, and why does the ring scale?"
)
common.walk("collectives")
body, tail = st.container(), st.container()
with tail:
    common.takeaway(text.takeaway(common.settings().presenter))
    with st.expander("How this is computed", expanded=False):
        how = st.empty()
    common.self_checks(text.self_checks())
with body:
    main_section(how)
    bytes_section()
    algorithms()
common.show_url_notices()
