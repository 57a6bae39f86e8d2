"""The collectives page's sections below the ring: bytes per GPU, which algorithm when (with the
two-tier toggle), A vs B and all-to-all. Kept in a module so the cached builders are created once
per process (not on every page rerun) and the fragment's functions can be counted by the
fragment guard tests (tests/test_page_collectives.py).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

import streamlit as st

from app_pages import common
from app_pages.common import a2a_view
from app_pages.common.fold import cells
from app_pages.common.ring_view import TwoTier, run
from core import collectives as coll
from core.hardware import LINK_PRESETS, SCALE_OUT_LINKS, make_cluster
from figures import collectives as figs
from figures.collectives import compare as versus

NETWORKS = common.same(SCALE_OUT_LINKS)
ALGS = {name: a.label for name, a in coll.ALGORITHMS.items()}


@functools.lru_cache(maxsize=16)  # lru_cache, not Streamlit's: common/ring_view.py says why
def bytes_scan(size, units):
    counts = tuple(2**k for k in range(1, 11))
    return figs.bytes_per_rank_figure(coll.scan_bytes_per_rank(counts, size), byte_system=units)


@functools.lru_cache(maxsize=32)
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


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """What the page's controls (its first fragment) hand the sections below: shared through the
    session (common.sections.share), as a fragment rerun does not pass arguments along."""

    n: int = 8
    size: float = 1e9
    link_name: str = "NVLink 4"
    alpha_s: float = LINK_PRESETS["NVLink 4"].latency_s

    @property
    def bw(self) -> float:
        return LINK_PRESETS[self.link_name].bandwidth_bytes_per_s


@st.fragment(key="coll_alg")
def algorithms() -> None:
    """Which algorithm, A vs B and all-to-all: a fragment of its own beside the controls' (N, S,
    the link and α rerun both); its toggles and sliders rerun only it (the all-to-all step only
    its own fragment, inside it)."""
    common.sections.follow_page()  # values from a page run that finished
    got, shown = common.sections.shared("coll", Inputs()), common.settings()
    n, size, bw, alpha, link_name = got.n, got.size, got.bw, got.alpha_s, got.link_name
    mem, bwu = shown.memory_units.value, shown.bandwidth_units.value
    st.subheader("Which algorithm, when: latency vs bandwidth")
    (k1, k2, k3, k4), tiers = cells(4), None
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
    sides, runs = (st.columns(2) if cmp else ()), []
    for side, default, col in (("A", "ring", sides[0]), ("B", "tree", sides[1])) if cmp else ():
        key = f"alg_{side.lower()}"
        name = common.select(f"Algorithm {side}", ALGS, default, key=key, where=col)
        # e.g. Hierarchical with N not a multiple of GPUs per node: the error shows on this side
        runs.append(common.attempt(run, name, n, size, bw, alpha, tiers, where=col))
    if cmp:
        common.chart(versus.versus_figure(*runs, byte_system=mem), key="versus")
        if all(runs):
            table = versus.versus_table(*runs, byte_system=mem)
            common.table(table)
            names = f"{runs[0].algorithm}_vs_{runs[1].algorithm}"
            common.csv_button(table, f"allreduce_{names}_N{n}.csv")
            st.info(versus.versus_takeaway(*runs, byte_system=mem), icon="⚖️")
        st.caption(versus.timing_note(link_name, asdict(tiers) if tiers else None))
    with common.explain_errors():
        a2a_view.section(n, size, bw, alpha, tiers, mem)
