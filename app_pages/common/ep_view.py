"""The expert-parallel page's cached builders (created once per process) and its two fragments:
placement (the node limit M) and compute and memory (the model's controls folded into one
expander labelled with their values). Kept apart from app_pages/expert_parallel.py so a control
of those sections reruns only its section, and the fragment guard tests can count them.
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.fold import cells, folded, peek
from core.expert_parallel import MOE_PRESETS
from core.hardware import GPU_PRESETS
from figures import expert_parallel as fe
from figures.expert_parallel import text
from figures.expert_parallel import walk as ew

EXPERTS = common.same((8, 16, 32, 64, 128))
RANKS = common.same((1, 2, 4, 8, 16, 32, 64))


@st.cache_data(max_entries=64, show_spinner=False)
def layer(tokens: int, experts: int, k: int, ranks: int, cf: float | None, skew: float):
    return fe.layer(tokens, experts, k, ranks, cf, skew)


@st.cache_data(max_entries=16, show_spinner=False)
def balancing(experts: int, k: int) -> dict:
    return fe.balancing(experts, k)


@st.cache_data(max_entries=16, show_spinner=False)
def placement(limit: int) -> dict:
    return fe.placement(limit)


@st.cache_data(max_entries=64, show_spinner=False)
def model_memory(name: str, ranks: int, etp: int, pp: int, dp: int, units: str, gpu: str) -> dict:
    return fe.model_memory(name, ranks, pp, dp, units, gpu, etp=etp)


@st.cache_data(max_entries=4, show_spinner=False)
def walk_steps(units: str) -> tuple:
    """The walk's steps: computed by the core once per memory unit, not on every rerun."""
    return ew.walk(units)


@st.fragment
def placement_section(units: str) -> None:
    """Section 3: the node limit M beside the heading's metrics, and the placement chart."""
    common.sections.follow_page()  # args from a page run that finished
    st.subheader("3 · Placement: inside a node or across nodes (DeepSeek-V3's routed layer)")
    limit = common.slider("Node limit M (DeepSeek-V3: 4)", 1, 8, 4, key="m")
    pl = placement(limit)
    common.metrics(text.placement_metrics(pl, units))
    common.chart(pl["fig"], key="placement")


def _summary() -> str:
    keys = (("moe", "Mixtral 8x7B"), ("gpu", "H100 SXM"), ("mep", 8), ("etp", 1), ("mpp", 2))
    model, gpu, ep, etp, pp = (peek(k, d) for k, d in keys)
    return f"{model} · {gpu} · EP {ep} · ETP {etp} · PP {pp} · DP {peek('mdp', 8)}"


@st.fragment
def model_section(units: str) -> None:
    """Section 4 with its controls folded: a control here reruns only this fragment."""
    common.sections.follow_page()  # args from a page run that finished
    head = st.empty()  # the heading names the model, known once the controls ran
    with folded(_summary(), what="Model and layout"):
        cols = cells(6)
        moe = common.same(MOE_PRESETS)
        model = common.select("MoE model", moe, "Mixtral 8x7B", key="moe", where=cols[0])
        gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=cols[1])
        mep = int(common.select("Model EP", RANKS, "8", key="mep", where=cols[2]))
        etp = int(common.select("ETP", common.same((1, 2, 4, 8)), "1", key="etp", where=cols[3]))
        mpp = common.slider("PP", 1, 16, 2, key="mpp", where=cols[4])
        mdp = int(common.select("DP", RANKS, "8", key="mdp", where=cols[5]))
    head.subheader(f"4 · Compute and memory: {model}")
    args = (model, mep, etp, mpp, mdp, units, gpu)
    mm = common.attempt(model_memory, *args, prefix="Compute and memory: ")
    if mm:
        common.metrics(text.model_metrics(mm, units))
        common.chart(mm["fig"], key="fit")
