"""Expert parallelism: how an MoE layer's tokens reach their experts, and what it costs.

The router's skew, top-k, E, the EP degree and the capacity factor feed sections 1 and 2 only, so
those controls and sections are one `st.fragment` (issue 18) that writes its "How this is
computed" lines into a slot in the page's tail; sections 3 and 4 are fragments of their own
(app_pages/common/ep_view.py, app_pages/common/sections.py)."""

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


@st.fragment(key="ep_layer")
def layer_section(how) -> None:
    common.sections.follow_page()  # args from a page run that finished
    cols = cells(5)
    skew = common.slider("Router skew", 0.0, 2.0, 0.5, step=0.1, key="skew", where=cols[0])
    k = common.slider("Experts per token (top-k)", 1, 8, 2, key="k", where=cols[1])
    experts = int(common.select("Experts E", EXPERTS, "64", key="e", where=cols[2]))
    ranks = int(common.select("EP degree", RANKS, "8", key="ep", where=cols[3]))
    cf_key = common.select("Capacity factor", text.CAPACITY, "none", key="cf", where=cols[4])
    cf = None if cf_key == "none" else float(cf_key)

    args = (fe.LAYER_TOKENS, experts, k, ranks, cf, skew)
    lay = common.attempt(layer, *args, prefix="The MoE layer: ")
    st.subheader("1 · One MoE layer on real numbers")
    if lay:
        common.charts((lay["matrix"], "matrix"), (lay["load"], "load"))
        common.metrics(text.layer_metrics(lay))
    st.caption(text.LAYER_CAPTION)

    st.subheader("2 · Balancing without an auxiliary loss")
    common.chart(balancing(experts, k)["fig"], key="balance")
    with how.container():
        if lay:
            common.how_computed(text.how_computed(lay), expander=True)


common.start_page("Expert parallelism", text.QUESTION)
common.walk(walk_steps(common.settings().memory_units.value))
top, tail = st.container(), st.container()
with tail:
    units = common.settings().memory_units.value
    placement_section(units)
    model_section(units)
    common.takeaway(text.takeaway(common.settings().presenter))
    how = st.empty()
    common.self_checks(text.self_checks())
with top:
    layer_section(how)
common.show_url_notices()
