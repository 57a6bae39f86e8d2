"""Expert parallelism: how an MoE layer's tokens reach their experts, and what it costs."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core.expert_parallel import MOE_PRESETS
from core.hardware import GPU_PRESETS
from figures import expert_parallel as fe
from figures.expert_parallel import text
from figures.expert_parallel import walk as ew

EXPERTS = common.same((8, 16, 32, 64, 128))
RANKS = common.same((1, 2, 4, 8, 16, 32, 64))
GAMMAS = common.same((0.003, 0.01, 0.03))


@st.cache_data(max_entries=64)
def _layer(tokens: int, experts: int, k: int, ranks: int, cf: float | None, skew: float):
    return fe.layer(tokens, experts, k, ranks, cf, skew)


@st.cache_data(max_entries=16)
def _balancing(experts: int, k: int) -> dict:
    return fe.balancing(experts, k)


@st.cache_data(max_entries=16)
def _placement(limit: int) -> dict:
    return fe.placement(limit)


@st.cache_data(max_entries=64)
def _model(name: str, ranks: int, etp: int, pp: int, dp: int, units: str, gpu: str) -> dict:
    return fe.model_memory(name, ranks, pp, dp, units, gpu, etp=etp)


@st.cache_data(max_entries=4)
def _walk(units: str) -> tuple:
    """The walk's steps: computed by the core once per memory unit, not on every rerun."""
    return ew.walk(units)


common.start_page("Expert parallelism", text.QUESTION)
common.walk(_walk(common.settings().memory_units.value))
cols = st.columns(5)
skew = common.slider("Router skew", 0.0, 2.0, 0.5, step=0.1, key="skew", where=cols[0])
k = common.slider("Experts per token (top-k)", 1, 8, 2, key="k", where=cols[1])
experts = int(common.select("Experts E", EXPERTS, "64", key="e", where=cols[2]))
ranks = int(common.select("EP degree", RANKS, "8", key="ep", where=cols[3]))
cf_key = common.select("Capacity factor", text.CAPACITY, "none", key="cf", where=cols[4])
cf = None if cf_key == "none" else float(cf_key)
units = common.settings().memory_units.value

lay = common.attempt(_layer, fe.LAYER_TOKENS, experts, k, ranks, cf, skew, prefix="The MoE layer: ")
bal = _balancing(experts, k)
cols = st.columns(7)
limit = common.slider("Node limit M (DeepSeek-V3: 4)", 1, 8, 4, key="m", where=cols[0])
pl = _placement(limit)
model = common.select(
    "MoE model", common.same(MOE_PRESETS), "Mixtral 8x7B", key="moe", where=cols[1]
)
gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=cols[2])
mep = int(common.select("Model EP", RANKS, "8", key="mep", where=cols[3]))
etp = int(common.select("ETP", common.same((1, 2, 4, 8)), "1", key="etp", where=cols[4]))
mpp = common.slider("PP", 1, 16, 2, key="mpp", where=cols[5])
mdp = int(common.select("DP", RANKS, "8", key="mdp", where=cols[6]))
mm = common.attempt(_model, model, mep, etp, mpp, mdp, units, gpu, prefix="Compute and memory: ")

st.subheader("1 · One MoE layer on real numbers")
st.caption(text.LAYER_CAPTION)
if lay:
    common.metrics(text.layer_metrics(lay))
    common.charts((lay["matrix"], "matrix"), (lay["load"], "load"))

st.subheader("2 · Balancing without an auxiliary loss")
common.chart(bal["fig"], key="balance")

st.subheader("3 · Placement: inside a node or across nodes (DeepSeek-V3's routed layer)")
common.metrics(text.placement_metrics(pl, units))
common.chart(pl["fig"], key="placement")

st.subheader(f"4 · Compute and memory: {model}")
if mm:
    common.metrics(text.model_metrics(mm, units))
    common.chart(mm["fig"], key="fit")

common.takeaway(text.TAKEAWAY)
if lay:
    common.how_computed(text.how_computed(lay), expander=True)
common.self_checks(text.self_checks())
common.show_url_notices()
