"""Tensor parallelism: how one layer's math splits across GPUs, and why TP stays inside a node.

The TP degree and the layer's settings feed sections 1–3, one `st.fragment` (issue 18): a move
reruns those sections alone; the sweep (section 4, another) reruns too when a setting it reads
changes
(app_pages/common/sections.py)."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common import sections
from app_pages.common import tp_data as data
from core.hardware import GPU_PRESETS, SCALE_OUT_LINKS
from core.model import MODEL_PRESETS
from figures.tensor_parallel import text as text
from figures.tensor_parallel.drawing import tp_drawing
from figures.tensor_parallel.text import TOY

MODELS = {name: name.split(" (")[0] for name in MODEL_PRESETS}
NICS = common.same(SCALE_OUT_LINKS)
GPN, MFU = data.GPN, data.MFU
DEFAULT_LAYER = ("GPT-3 175B", 1, 2048, "H100 SXM", "InfiniBand NDR")


@st.fragment(key="tp_split")
def split_section(how) -> None:
    common.sections.follow_page()  # args from a page run that finished
    top = sections.chart_slot(common.settings().presenter)  # presenting: the drawing first
    c = st.columns([1, 2], vertical_alignment="bottom")
    tp = common.slider("TP degree", 1, 8, 2, key="tp", where=c[0])
    with c[1].expander("Model, batch, sequence, GPU, NIC, sequence parallel"):
        e, both = st.columns(3), dict(on_change=sections.rerun("tp_split", "tp_sweep"))
        model = common.select("Model", MODELS, "GPT-3 175B", key="model", where=e[0], **both)
        mb = common.slider("Micro-batch b (sequences)", 1, 16, 1, key="mb", where=e[1], **both)
        seq = common.slider(
            "Sequence length s", 256, 32768, 2048, step=256, key="seq", where=e[2], **both
        )
        e = st.columns(3)
        gpu = common.select(
            "GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=e[0], **both
        )
        nic = common.select("NIC", NICS, "InfiniBand NDR", key="nic", where=e[1], **both)
        sp_help = "Korthikanti et al. 2022: each all-reduce becomes reduce-scatter + all-gather."
        sp = common.toggle("Sequence parallel", False, key="sp", where=e[2], help=sp_help)
    c[1].caption(text.settings_summary(model, mb, seq, gpu, nic, sp))
    layer = (model, mb, seq, gpu, nic)  # section 4 reads them
    sections.share("layer", layer)
    units = common.settings().memory_units.value
    st.subheader("1 · The split, proved with arrays")
    draw = dict(tp=tp, tokens=TOY["tokens"], hidden=TOY["hidden"], ffn=TOY["ffn"])
    if pr := common.attempt(data.proof, tp, sp):
        with top or st.container():
            common.chart(tp_drawing(**draw), key="tp_draw")
        st.caption(text.TOY_CAPTION)
        common.metrics(text.proof_metrics(pr["fwd"], pr["bwd"], tp))
        common.chart(pr["own"], key="own")
    st.subheader("2 · Where the communication goes")
    st.markdown(text.OPERATORS)
    if cm := common.attempt(data.comm, model, tp, mb, seq, gpu, nic, sp, units):
        common.metrics(text.comm_metrics(cm["plan"], sp, units))
        st.table(cm["rows"])
        common.csv_button(cm["rows"], f"tp_comm_{model.split()[0]}_tp{tp}.csv")
        st.subheader(
            "3 · Comm time per layer on each link (one port or NIC per GPU), beside compute"
        )
        common.chart(cm["fig"], key="links")
    proof = pr and (pr["fwd"], pr["bwd"])
    blocks = text.how_computed(proof, cm and cm["plan"], cm and cm["times"], MFU, units)
    with how.container():
        common.how_lines(blocks)


@st.fragment(key="tp_sweep")
def sweep_section() -> None:
    common.sections.follow_page()  # args from a page run that finished
    model, mb, seq, gpu, nic = sections.shared("layer", DEFAULT_LAYER)
    st.subheader("4 · TP degree sweep: the node boundary, DGX-class and thin")
    if sw := common.attempt(data.sweep, model, mb, seq, gpu, nic):
        for nics in (GPN, 1):
            common.chart(sw[nics]["fig"], key=f"sweep{nics}")
            st.markdown(text.sweep_note(GPN, nics, nic, sw[nics]["note"]))
        st.markdown(sw["lessons"])


common.start_page(
    "Tensor parallelism",
    "How does one layer's math split across GPUs exactly, and why does TP stay inside a node?",
)
common.walk("tensor_parallel")
s1, s4, tail = st.container(), st.container(), st.container()
with tail:
    common.takeaway(text.takeaway(common.settings().presenter))
    st.subheader("How this is computed")
    how = st.empty()
    common.self_checks(text.self_checks(common.settings().memory_units.value))
with s1:
    split_section(how)
with s4:
    sweep_section()
    st.subheader("5 · The proof at every TP degree: only float rounding")
    common.chart(data.proof_sweep(), key="proof")
common.show_url_notices()
