"""Expert parallelism: how an MoE layer's tokens reach their experts, and what it costs."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.ep_view import (
    EXPERTS,
    RANKS,
    balancing,
    layer,
    model_section,
    placement_section,
    walk_steps,
)
from app_pages.common.fold import cells
from figures import expert_parallel as fe
from figures.expert_parallel import text

common.start_page("Expert parallelism", text.QUESTION)
common.walk(walk_steps(common.settings().memory_units.value))
cols = cells(5)
skew = common.slider("Router skew", 0.0, 2.0, 0.5, step=0.1, key="skew", where=cols[0])
k = common.slider("Experts per token (top-k)", 1, 8, 2, key="k", where=cols[1])
experts = int(common.select("Experts E", EXPERTS, "64", key="e", where=cols[2]))
ranks = int(common.select("EP degree", RANKS, "8", key="ep", where=cols[3]))
cf_key = common.select("Capacity factor", text.CAPACITY, "none", key="cf", where=cols[4])
cf = None if cf_key == "none" else float(cf_key)
units = common.settings().memory_units.value

lay = common.attempt(layer, fe.LAYER_TOKENS, experts, k, ranks, cf, skew, prefix="The MoE layer: ")
st.subheader("1 · One MoE layer on real numbers")
if lay:
    common.charts((lay["matrix"], "matrix"), (lay["load"], "load"))
    common.metrics(text.layer_metrics(lay))
st.caption(text.LAYER_CAPTION)

st.subheader("2 · Balancing without an auxiliary loss")
common.chart(balancing(experts, k)["fig"], key="balance")

placement_section(units)
model_section(units)

common.takeaway(text.takeaway(common.settings().presenter))
if lay:
    common.how_computed(text.how_computed(lay), expander=True)
common.self_checks(text.self_checks())
common.show_url_notices()
