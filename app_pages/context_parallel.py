"""Context parallelism: how C GPUs share one long sequence's attention, and what it costs."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core.hardware import GPU_PRESETS
from core.model import MODEL_PRESETS
from figures import context_parallel as fc
from figures.context_parallel import text
from figures.context_parallel import walk as cw

MODELS = {name: name.split(" (")[0] for name in MODEL_PRESETS}
SEQS = {str(s): f"{s // 1024}K" for s in fc.SEQ_SWEEP}
LONG_CP = common.same(fc.CP_SWEEP)


@st.cache_data(max_entries=64)
def _toy(c: int, layout: str, causal: bool) -> dict:
    return fc.toy(c, layout, causal)


@st.cache_data(max_entries=64)
def _long(run: fc.CpRun) -> dict:
    return fc.long_context(run)


@st.cache_data(max_entries=4)
def _walk(units: str) -> tuple:
    """The walk's steps: computed by the core once per memory unit, not on every rerun."""
    return cw.walk(units)


common.start_page("Context parallelism", text.QUESTION)
common.walk(_walk(common.settings().memory_units.value))
cols = st.columns(3)
c = common.slider("CP degree C (ranks sharing the sequence)", 1, 16, 4, key="c", where=cols[0])
layout = common.select("Chunks", text.LAYOUTS, "contiguous", key="lay", where=cols[1])
causal = common.toggle("Causal mask", True, key="causal", where=cols[2])
st.caption(text.TOY_CONTROLS)
cols = st.columns(6)
model = common.select("Model", MODELS, "Llama-3.1 70B", key="model", where=cols[0])
gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=cols[1])
seq = int(common.select("Sequence length S", SEQS, "131072", key="seq", where=cols[2]))
tp = common.slider("TP", 1, 8, 8, key="tp", where=cols[3])
pp = common.slider("PP", 1, 16, 4, key="pp", where=cols[4])
lcp = int(common.select("Long-context CP", LONG_CP, "8", key="lcp", where=cols[5]))
units = common.settings().memory_units.value

toy = _toy(c, layout, causal)
run = common.attempt(
    _long,
    fc.CpRun(
        degree=lcp,
        layout=layout,
        causal=causal,
        model=model,
        gpu=gpu,
        seq_len=seq,
        tp=tp,
        pp=pp,
        units=units,
    ),
    prefix="Long-context sections: ",
)

st.subheader("1 · Ring attention on real numbers")
st.caption(text.TOY_CAPTION)
common.metrics(text.ring_metrics(toy))
if c > 1:
    if (st.session_state.get("t", common.url_int("t")) or 0) > c - 1:  # C shrank
        st.session_state["t"] = c - 1
    ring_t = common.slider("Ring step t (which K/V block each rank holds)", 0, c - 1, 0, key="t")
    common.charts((fc.ring_step_figure(toy["ring"], ring_t), "ring"), (toy["grid"], "grid"))
else:
    common.chart(toy["grid"], key="grid")

st.subheader("2 · The causal mask and load balance: contiguous vs zig-zag")
common.chart(toy["gantt"], key="gantt")

pad = (
    f" (padded to {run['seq_len']:,} = a multiple of 2·C)" if run and run["seq_len"] != seq else ""
)
st.subheader(f"3 · A long context: {model} at S = {seq:,}{pad} on {gpu}")
if run:
    common.metrics(text.long_metrics(run, units))
    common.chart(run["traffic_fig"], key="traffic")
    common.chart(run["overlap_fig"], key="overlap")
    common.chart(run["memory_fig"], key="memory")

common.takeaway(text.TAKEAWAY)
common.how_computed(text.how_computed(toy, run), expander=True)
common.self_checks(text.self_checks(units))
common.show_url_notices()
