"""Planner: which DP × TP × PP × CP × EP × ZeRO layout trains fastest here, why, does it fit?

Every input feeds the search, the drawn layout and the table, so they are one `st.fragment`
(issue 18): a move reruns them, and they write the takeaway and the "How this is computed" lines
into slots in the page's tail; the exercise, calibration and self-checks stay put
(app_pages/common/sections.py). A table row click reruns the fragment too, and its first line
writes the clicked row into the layout widgets below it."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common import planner_view as pv
from app_pages.common.fold import cells
from app_pages.common.layout_inputs import custom_layout
from app_pages.common.links import run_step_link
from core.expert_parallel.spec import ALL_PRESETS
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.planner import Efficiency, Training
from core.training import RECOMPUTE_MODES
from figures import planner as fp
from figures.planner import text as pt
from figures.planner.run import Run, caveat_words

SIZES, SEQ = common.same((1, 2, 4, 8, 16, 32, 72)), common.same(2**k for k in range(10, 18))
ROWS, OWN, H, LINKS = 60, "GPU's own", pt.HELP, common.same(LINK_PRESETS)
MODELS, GPUS = common.same(ALL_PRESETS), common.same(GPU_PRESETS)  # dense and MoE


@st.fragment(key="planner_main")
def main_section(slots: common.sections.Slots) -> None:
    common.sections.follow_page()  # args from a page run that finished
    common.apply_row_click("table", pt.row_controls)  # before the layout widgets it writes into
    top = st.columns([1, 3], vertical_alignment="bottom")
    nodes = common.slider("Nodes", 1, 128, 8, key="nodes", where=top[0])
    with st.expander(pt.INPUTS):  # compact: one summary line above, every input in here
        c = cells(4) + cells(4) + cells(5)  # filled in order, left to right (one message a row)
        model = common.select("Model", MODELS, "Llama-2 70B", key="model", where=c[0])
        gpn = common.select("GPUs per node", SIZES, "8", key="gpn", where=c[1])
        nics = common.select("NICs per node", SIZES, "8", key="nics", where=c[2], help=H["nics"])
        gpu = common.select("GPU", GPUS, "H100 SXM", key="gpu", where=c[3])
        intra = common.select(
            "Link inside a node", {OWN: OWN} | LINKS, OWN, key="intra", where=c[4]
        )
        inter = common.select(
            "Link between nodes", LINKS, "InfiniBand NDR", key="inter", where=c[5]
        )
        gb = common.number(
            "Global batch (sequences)", 1, 65536, 1152, key="gb", where=c[6], help=H["gb"]
        )
        seq = int(common.select("Sequence length", SEQ, "4096", key="seq", where=c[7]))
        rc = common.select(
            "Recompute", common.same(RECOMPUTE_MODES), "selective", key="rc", where=c[8]
        )
        recipe = common.select(
            "Precision recipe", pt.RECIPES, "mixed_adam", key="recipe", where=c[9]
        )
        sp = common.toggle("Sequence parallel", False, key="sp", where=c[10])
        eff = common.slider("Matmul efficiency", 0.3, 1.0, 0.7, key="eff", where=c[11], **pt.EFF)
        pick = common.select("Layout drawn", pt.PICK, "fastest", key="pick", where=c[12], **pt.PK)
    custom, _ = custom_layout(expanded=pick == "custom")

    units, gpus, ev = common.memory_units().value, nodes * int(gpn), None
    top[1].markdown(pt.input_summary(nodes, int(gpn), gpu, model, gb, seq, rc, pt.RECIPES[recipe]))
    with common.explain_errors():
        cluster = make_cluster(
            num_nodes=nodes,
            gpus_per_node=int(gpn),
            gpu_name=gpu,
            inter_link_name=inter,
            intra_link_name=None if intra == OWN else intra,
            nics_per_node=min(int(nics), int(gpn)),
        )
        training = Training(
            global_batch=gb,
            seq_len=seq,
            recipe=recipe,
            recompute=rc,
            efficiency=Efficiency(matmul=eff),
        )
        run = Run(model=model, cluster=cluster, training=training, sequence_parallel=sp)
        res = pv.search(run)
    custom |= dict(sp=sp)
    if lay := common.attempt(pt.drawn_layout, res, pick, gpus, model, custom):
        ev = common.attempt(pv.evaluate, run, lay)
    common.show_row_click_note("table")
    if ev:  # the answer first: layout, step, MFU (and what it was fitted on), memory, why
        common.metrics(
            pt.metric_kwargs(fp.headline_metrics(ev, units), ev.fits), [1.3, 1, 1, 1, 1.3]
        )
        st.caption(f"{run_step_link(run, ev.layout)}  \n{caveat_words(ev)}")  # link, then caveat
    if pick == "fastest" or res.fastest is None:  # why this layout, or the closest one's fixes
        st.markdown(pv.why(run, units))
    for w in ev.warnings if ev else ():
        st.warning(w, icon="⚠️")
    if ev is None:
        common.chart(fp.bare_cluster_figure(cluster, pt.NO_LAYOUT), key="cluster")
    else:
        pv.drawn_section(run, ev, res, units)

    st.subheader(pt.table_title(gpus))
    rule = common.select("Show", pt.RULES, "all", key="rule", where=st.container(width=320))
    rows = pv.table(run, rule, ROWS, units)
    columns, shown = pt.table_columns(units), fp.table_columns(rule)
    common.clickable_table("table", rows, (run, rule), columns, shown, height=320)
    st.caption(pt.table_caption(ROWS))
    common.takeaway(fp.takeaway_text(res), slot=slots.takeaway)
    with slots.how.container():
        if ev:
            with st.expander("How this is computed"):
                st.markdown(fp.how_computed_markdown(ev, units))


common.start_page("Planner: map a training run onto a cluster", pt.QUESTION)
main, tail = st.container(), st.container()
with tail:
    st.subheader(pt.EXERCISE_TITLE)
    st.markdown(pv.exercise_markdown())
    slots = common.sections.Slots(takeaway=common.takeaway_slot(), how=st.empty())
    with st.expander("How well does this model predict?"):
        st.markdown(pt.CALIBRATION)
        common.dataframe(pv.calibration_rows(), pt.CALIBRATION_COLUMNS)
        st.markdown(pt.VALIDATION)
        common.dataframe(pv.validation_rows())

    st.subheader("Self-check")
    for question in pt.self_checks():  # keys q1, q2; whole numbers, so no tolerance
        common.self_check(**question)
with main:
    main_section(slots)
common.show_url_notices()
