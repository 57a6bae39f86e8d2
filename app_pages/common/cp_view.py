"""The context-parallel page's cached builders (created once per process) and its two fragments:
the ring step (slider + ring drawing) and the long context (its controls folded into one expander
labelled with their values, section 3, the takeaway and how it is computed). Kept apart from
app_pages/context_parallel.py so the page stays short and the sections can be counted by the
fragment guard tests.
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.fold import cells, folded, peek
from core.hardware import GPU_PRESETS
from core.model import MODEL_PRESETS
from figures import context_parallel as fc
from figures.context_parallel import text
from figures.context_parallel import walk as cw

MODELS = {name: name.split(" (")[0] for name in MODEL_PRESETS}
SEQS = {str(s): f"{s // 1024}K" for s in fc.SEQ_SWEEP}
LONG_CP = common.same(fc.CP_SWEEP)


@st.cache_data(max_entries=64, show_spinner=False)
def toy(c: int, layout: str, causal: bool) -> dict:
    return fc.toy(c, layout, causal)


@st.cache_data(max_entries=64, show_spinner=False)
def long(run: fc.CpRun) -> dict:
    return fc.long_context(run)


@st.cache_data(max_entries=4, show_spinner=False)
def walk_steps(units: str) -> tuple:
    """The walk's steps: computed by the core once per memory unit, not on every rerun."""
    return cw.walk(units)


@st.cache_data(max_entries=64, show_spinner=False)
def ring_step(c: int, layout: str, causal: bool, t: int) -> dict:
    return fc.ring_step_figure(toy(c, layout, causal)["ring"], t)


@st.fragment
def ring_section(c: int, layout: str, causal: bool) -> None:
    """Section 1: the step slider, the ring at that step, the check and what it runs."""
    common.sections.follow_page()  # args from a page run that finished
    data = toy(c, layout, causal)
    if c > 1:
        if st.session_state.get("t", 0) > c - 1:  # C shrank (a URL value: the slider checks it)
            st.session_state["t"] = c - 1
        label = "Ring step t (which K/V block each rank holds)"
        top = common.sections.chart_slot(common.settings().presenter)  # slide: charts, slider
        t = common.slider(label, 0, c - 1, 0, key="t", where=st.columns(2)[0])
        with top or st.container():
            common.charts((ring_step(c, layout, causal, t), "ring"), (data["grid"], "grid"))
    else:
        common.chart(data["grid"], key="grid")
    common.metrics(text.ring_metrics(data))
    st.caption(text.TOY_CAPTION)


def _summary() -> str:
    keys = (("model", "Llama-3.1 70B"), ("gpu", "H100 SXM"), ("seq", "128K"), ("tp", 8))
    model, gpu, seq, tp = (peek(k, d) for k, d in keys)
    return f"{model} · {gpu} · S = {seq} · TP {tp} · PP {peek('pp', 4)} · CP {peek('lcp', 8)}"


@st.fragment
def long_section(c: int, layout: str, causal: bool, units: str) -> None:
    """Section 3 with its controls and how it is computed: a control here reruns only this
    fragment."""
    common.sections.follow_page()  # args from a page run that finished
    head = st.empty()  # the heading names the model and S, known once the controls ran
    with folded(_summary(), what="Long-context inputs"):
        cols = cells(6)
        model = common.select("Model", MODELS, "Llama-3.1 70B", key="model", where=cols[0])
        gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=cols[1])
        seq = int(common.select("Sequence length S", SEQS, "131072", key="seq", where=cols[2]))
        tp = common.slider("TP", 1, 8, 8, key="tp", where=cols[3])
        pp = common.slider("PP", 1, 16, 4, key="pp", where=cols[4])
        lcp = int(common.select("Long-context CP", LONG_CP, "8", key="lcp", where=cols[5]))
    spec = dict(model=model, gpu=gpu, seq_len=seq, tp=tp, pp=pp, units=units)
    cp = fc.CpRun(degree=lcp, layout=layout, causal=causal, **spec)
    run = common.attempt(long, cp, prefix="Long-context sections: ")
    pad = (
        f" (padded to {run['seq_len']:,} = a multiple of 2·C)"
        if run and run["seq_len"] != seq
        else ""
    )
    head.subheader(f"3 · A long context: {model} at S = {seq:,}{pad} on {gpu}")
    if run:
        common.metrics(text.long_metrics(run, units))
        common.chart(run["traffic_fig"], key="traffic")
        common.chart(run["overlap_fig"], key="overlap")
        common.chart(run["memory_fig"], key="memory")
    common.how_computed(text.how_computed(toy(c, layout, causal), run), expander=True)
