"""Training step: where every byte of one step lives, what moves over which link, who waits.

Every control feeds the drawing, the notes, the takeaway and the self-checks' answers, so the
page's body is one `st.fragment` (issue 18): a move reruns it, not the title or the sidebar
(app_pages/common/sections.py)."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common import step_view as view
from app_pages.common.fold import cells
from app_pages.common.layout_inputs import custom_layout
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.planner import Training
from core.stepplan import StepPlan
from core.training import RECOMPUTE_MODES
from core.units import format_seconds
from figures.planner import text as pt
from figures.planner.run import Run
from figures.step import inputs_text as itx
from figures.step import text as tx
from figures.step.run import MODELS

# The planner's keys and defaults, so a planner URL opens the same step here.
SIZES, SEQ = common.same((1, 2, 4, 8, 16, 32, 72)), common.same(2**k for k in range(10, 16))


@st.fragment(key="step_main")
def main_section() -> None:
    common.sections.follow_page()  # args from a page run that finished
    top = st.columns([3, 3, 1, 1], vertical_alignment="bottom")
    model = common.select("Model", MODELS, "Llama-2 70B", key="model", where=top[0])
    pick = common.select(
        "Layout drawn", pt.PICK, "fastest", key="pick", help=tx.LAYOUT_HELP, where=top[1]
    )
    cp = common.number("CP", 1, 64, 1, key="cp", help=itx.CP_HELP, where=top[2])
    ep = common.number("EP", 1, 256, 1, key="ep", help=itx.EP_HELP, where=top[3])
    left, right = st.columns([2, 3])  # compact: the cluster and batch, summarised under the chart
    with left.expander(itx.INPUTS):
        c = cells(4) + cells(4)
        nodes = common.slider("Nodes", 1, 128, 8, key="nodes", where=c[0])
        gpn = common.select("GPUs per node", SIZES, "8", key="gpn", where=c[1])
        gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=c[2])
        links, at = common.same(LINK_PRESETS), dict(key="inter", where=c[3])
        inter = common.select("Link between nodes", links, "InfiniBand NDR", **at)
        seq = int(common.select("Sequence length", SEQ, "4096", key="seq", where=c[4]))
        gb = common.number("Global batch (sequences)", 1, 65536, 1152, key="gb", where=c[5])
        modes = common.same(RECOMPUTE_MODES)
        rc = common.select("Recompute", modes, "selective", key="rc", where=c[6])
    with right:  # cp and ep are this page's own keys (above): custom_layout skips them
        custom, box = custom_layout(expanded=False, cp_ep=False)
    sp = common.toggle("Sequence parallel", False, key="sp", where=box)

    units = common.memory_units()
    with common.explain_errors():
        cluster = make_cluster(
            num_nodes=nodes, gpus_per_node=int(gpn), gpu_name=gpu, inter_link_name=inter
        )
        training = Training(global_batch=gb, seq_len=seq, recompute=rc)
        run = Run(model=model, cluster=cluster, training=training, sequence_parallel=sp)
        custom |= dict(sp=sp, cp=cp, ep=ep)  # DP × TP × PP × CP = GPUs; a pick brings its own
        result = view.search(run) if pick != "custom" else None  # a custom layout needs no search
        lay = pt.drawn_layout(result, pick, nodes * int(gpn), model, custom)
        plan: StepPlan = view.plan(run, lay)

    ev = plan.evaluation
    view.drawing(run, lay, units)
    step = format_seconds(ev.step_time_s)
    st.caption(itx.drawn_caption(plan, nodes, int(gpn), gpu, gb, seq, step))
    for w in ev.warnings:  # under the drawing: the picture stays on the first screen (issue 15)
        st.warning(w, icon="⚠️")
    for note in (tx.drawn_note(plan, plan.drawn), itx.cp_ep_note(plan, pick, cp, ep, units)):
        if note:
            st.info(note, icon="🔎")
    common.takeaway(tx.takeaway(plan, common.settings().presenter))
    with st.expander("How this is computed"):
        st.markdown(tx.HOW)
    common.self_checks(tx.self_checks(plan))


common.start_page("Training step: one step, drawn", tx.QUESTION)
main_section()
common.show_url_notices()
