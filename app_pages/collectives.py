"""Collectives: a real ring all-reduce you can watch, and why the ring scales."""

from __future__ import annotations

from dataclasses import asdict

import streamlit as st

from app_pages import common
from app_pages.common import a2a_view
from app_pages.common.fold import folded, peek
from app_pages.common.ring_view import TwoTier, ring_section, run, shown
from core import collectives as coll
from core.hardware import LINK_PRESETS, SCALE_OUT_LINKS, make_cluster
from figures import collectives as figs
from figures.collectives import compare as versus
from figures.collectives import text as text
from figures.collectives.text import SIZES

LINKS = {name: name for name in LINK_PRESETS}
NETWORKS = common.same(SCALE_OUT_LINKS)
ALGS = {name: a.label for name, a in coll.ALGORITHMS.items()}


@st.cache_data(max_entries=16)
def bytes_scan(size, units):
    counts = tuple(2**k for k in range(1, 11))
    return figs.bytes_per_rank_figure(coll.scan_bytes_per_rank(counts, size), byte_system=units)


@st.cache_data(max_entries=32)
def comparison(n, size, bw, alpha, tiers: TwoTier | None, units, bw_units, link_name):
    cluster = make_cluster(**asdict(tiers)) if tiers else None
    kw = dict(bandwidth_bytes_per_s=bw, latency_s=alpha)
    both = dict(cluster=cluster, byte_system=units, bandwidth_system=bw_units, **kw)
    return (
        figs.time_vs_ranks_figure(message_bytes=size, **both),
        figs.time_vs_size_figure(num_ranks=n, **both),
        figs.bandwidth_figure(message_bytes=size, **kw),
        figs.nccl_pick_markdown(n, size, link_name, cluster, units, bw_units),
    )


common.start_page(
    "Collectives: the ring all-reduce", "How do N GPUs sum one tensor, and why does the ring scale?"
)
common.walk("collectives")
mem, bwu = common.settings().memory_units.value, common.settings().bandwidth_units.value
c1, c2, c3 = st.columns(3)
n = common.slider("GPUs in the ring (N)", 2, 32, 8, key="n", where=c1)
size = float(common.select("Tensor size per GPU (S)", SIZES, "1e9", key="size", where=c2))
link_name = common.select("Link", LINKS, "NVLink 4", key="link", where=c3)
link, bw = LINK_PRESETS[link_name], LINK_PRESETS[link_name].bandwidth_bytes_per_s
with folded(text.folded_summary(peek("elems", 8), peek("alpha", None), link.latency_s)):
    e1, e2 = st.columns(2)
    tip = "The simulator moves these real numbers; readouts scale them to the size S."
    label = "Elements per GPU (simulated)"
    elems = common.slider(label, 1, 256, 8, key="elems", help=tip, where=e1)
    alpha_label = "Latency α per step (µs; empty = the link's NCCL default)"
    alpha_us = common.number(alpha_label, 0.0, 1000.0, None, key="alpha", step=1.0, where=e2)
alpha = link.latency_s if alpha_us is None else alpha_us * 1e-6

if elems < n:  # a ring cuts each tensor into N chunks: at least one element each
    st.caption(
        f"Simulating {n} elements per GPU, one per chunk: a ring of {n} cuts each tensor "
        f"into {n} chunks."
    )
    elems = n
ring = ring_section(n, elems, bw, alpha, link_name, size, mem, bwu)
st.caption(text.ring_caption(n, 2 * (n - 1)))
trace = shown(n, elems)
if trace.states is not None and n * elems <= 128:
    with st.expander("Check a sum by eye: the inputs and what every GPU ends with"):
        st.dataframe(text.sum_by_eye(trace.states[0], trace.outputs[0]))
st.download_button(
    "Download the step trace (CSV)",
    lambda t=trace: t.to_frame().to_csv(index=False),
    file_name=f"ring_allreduce_N{n}.csv",
    mime="text/csv",
    on_click="ignore",
)

st.subheader("Bytes per GPU stay flat as N grows; a central server's do not")
common.chart(bytes_scan(size, mem), key="bytes")


@st.fragment
def algorithms() -> None:
    """Which algorithm, A vs B and all-to-all: their toggles rerun only this fragment."""
    st.subheader("Which algorithm, when: latency vs bandwidth")
    (k1, k2, k3, k4), tiers = st.columns(4), None
    if common.toggle("Two-tier cluster (nodes × GPUs)", False, key="tier", where=k1):
        gpn = common.slider("GPUs per node", 2, 8, 8, key="gpn", where=k2)
        nic = common.select("Network", NETWORKS, "InfiniBand NDR", key="nic", where=k3)
        nics = common.slider("NICs per node", 1, 8, 8, key="nics", where=k4)
        nodes = dict(num_nodes=max(2, n // gpn), gpus_per_node=gpn, intra_link_name=link_name)
        tiers = TwoTier(inter_link_name=nic, nics_per_node=min(nics, gpn), **nodes)
    with common.explain_errors():
        by_n, by_size, bus, pick = comparison(n, size, bw, alpha, tiers, mem, bwu, link_name)
    common.charts((by_n, "by_n"), (by_size, "by_size"))
    st.markdown(pick)
    common.chart(bus, key="busbw")

    st.subheader("A vs B: two all-reduce algorithms on the same tensor")
    cmp_help = "Run two simulators on this page's tensor side by side; both choices go in the URL."
    cmp = common.toggle("Compare two algorithms", False, key="cmp", help=cmp_help)
    sides, runs = st.columns(2), []
    for side, default, col in (("A", "ring", sides[0]), ("B", "tree", sides[1])) if cmp else ():
        key = f"alg_{side.lower()}"
        name = common.select(f"Algorithm {side}", ALGS, default, key=key, where=col)
        # e.g. Hierarchical with N not a multiple of GPUs per node: the error shows on this side
        runs.append(common.attempt(run, name, n, size, bw, alpha, tiers, where=col))
    if cmp:
        common.chart(versus.versus_figure(*runs, byte_system=mem), key="versus")
        if all(runs):
            table = versus.versus_table(*runs, byte_system=mem)
            st.table(table)
            names = f"{runs[0].algorithm}_vs_{runs[1].algorithm}"
            common.csv_button(table, f"allreduce_{names}_N{n}.csv")
            st.info(versus.versus_takeaway(*runs, byte_system=mem), icon="⚖️")
        st.caption(versus.timing_note(link_name, asdict(tiers) if tiers else None))
    with common.explain_errors():
        a2a_view.section(n, size, bw, alpha, tiers, mem)


algorithms()
common.takeaway(text.TAKEAWAY)
how = text.how_computed(ring, trace.num_steps, bw, alpha, link_name, mem, bwu)
common.how_computed(how, expander=True)
common.self_checks(text.self_checks())
common.show_url_notices()
