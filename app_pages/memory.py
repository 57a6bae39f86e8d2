"""Memory: will this model train on these GPUs, and what does each parallelism choice save?

The run and layout controls feed every chart and table, so they and the sections down to the
activation trade are one `st.fragment` (issue 18), which writes the takeaway and the "How this is
computed" lines into slots in the page's tail; the sizing questions and the self-check stay put
(app_pages/common/sections.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages import common
from app_pages.common import memory_view as mv
from figures import memory as fm
from figures.memory import text as mt
from figures.memory.run import NAMES, Run, Split


@st.fragment(key="mem_main")
def main_section(slots: common.sections.Slots) -> None:
    common.sections.follow_page()  # args from a page run that finished
    r = mv.run_controls()  # folded: the layout row and the chart stay above the fold
    moe = fm.is_moe(r["model"])
    lay = mv.layout_row(moe)
    billions, shape = None, ()
    if r["model"] == "custom":
        shape = tuple(
            common.number(lbl, 1, 10**7, d, key=k, step=1, where=col)
            for (lbl, k, d), col in zip(mt.SHAPE, st.columns(len(mt.SHAPE)))
        )
    elif r["model"] == "params":
        where = st.columns(4)[0]
        billions = common.number("Parameters (billions)", 0.001, 1e5, 70.0, key="n", where=where)

    units = common.memory_units().value
    run = Run(
        model=r["model"],
        billions=billions,
        shape=shape,
        seq=r["seq"],
        recipe=r["recipe"],
        flash=r["flash"],
        gpu=r["gpu"],
        reserve_pct=r["reserve"],
        units=units,
    )
    lay_a = Split(mb=r["mb"], rc=r["rc"], sp=r["sp"], **lay)
    with common.explain_errors():
        out = mv.cached_compute(run, lay_a)
    left, right = st.columns([3.2, 1])  # the chart beside its numbers: both above the fold
    with left:
        # presenting: 1.25 × 300 px, the bars whole under the slide's headline at 1280×720
        height = 300 if common.settings().presenter else 520
        common.chart(out["bars"], key="bars", height=height, share=3.2 / 4.2)  # its column's share
    for m in out["metrics"]:
        right.metric(**m)
    st.caption(out["caption"])
    if r["model"] not in ("custom", "params"):
        mv.step_link(run, lay_a)

    mv.compare_section(run, lay_a)

    st.subheader("Per pipeline stage")
    st.caption(mt.STAGES_CAPTION)
    if lay["pp"] > 1:
        st.markdown(mt.pipeline_activations(out["ch"], units))
        common.chart(out["stages"], key="stages", height=440)
    else:
        st.info(mt.single_stage(NAMES[lay["zero"]]))

    st.subheader("What fits")
    fits = pd.DataFrame(out["fits"])
    st.table(fits.set_index("ZeRO stage"))
    common.download("what_fits.csv", lambda: fits.to_csv(index=False), "what_fits.csv")
    if out["trade"]:
        st.subheader("Activation checkpointing: a trade")
        common.chart(out["trade"], key="trade", height=420)

    common.takeaway(mt.takeaway(out, units, common.settings().presenter), slot=slots.takeaway)
    with slots.how.container():
        for block in out["how"]:  # separate elements: an unchanged block is not redrawn
            st.markdown(block)


common.start_page("Memory per GPU", mt.QUESTION)
common.walk("memory")
body, tail = st.container(), st.container()
with tail:
    st.subheader("Sizing questions")
    units = common.memory_units().value
    for line in mt.sizing_lines(mv.cached_seeds(units), common.settings().query()):
        st.markdown(line)
    lesson = common.takeaway_slot()
    with st.expander("How this is computed", expanded=False):
        how = st.empty()
    st.subheader("Self-check")
    common.self_check(**mt.self_check(units))
with body:
    main_section(common.sections.Slots(takeaway=lesson, how=how))
common.show_url_notices()
