"""Memory: will this model train on these GPUs, and what does each parallelism choice save?"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages import common
from core.hardware import GPU_PRESETS
from core.training import RECIPES
from figures import memory as fm
from figures.memory import text as mt
from figures.memory.run import NAMES, Run, Split, compare, compute

_compute = st.cache_data(max_entries=64)(compute)  # plain values in, plain data out
_compare = st.cache_data(max_entries=64)(compare)
_seeds = st.cache_data(max_entries=4)(fm.sizing_questions)

common.start_page("Memory per GPU", mt.QUESTION)
common.walk("memory")
c = st.columns(4)
dp = common.slider("DP (data-parallel ranks)", 1, 1024, 8, key="dp", where=c[0])
tp = common.slider("TP (tensor-parallel ranks)", 1, 64, 1, key="tp", where=c[1])
pp = common.slider("PP (pipeline stages)", 1, 64, 1, key="pp", where=c[2])
zero = common.select(
    "ZeRO stage",
    mt.ZERO,
    "3",
    key="zero",
    radio=True,
    horizontal=True,
    where=c[3],
    help=mt.HELP["zero"],
)
st.caption(mt.ZERO_CAPTION)
c = [*st.columns(4), *st.columns(4)]
model = common.select("Model", fm.MODEL_LABELS, "Llama-2 13B", key="model", where=c[0])
recipe = common.select(
    "Bytes per parameter (recipe)",
    {k: r.label for k, r in RECIPES.items()},
    "mixed_adam",
    key="recipe",
    where=c[1],
    help=fm.RECIPE_HELP,
)
gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=c[2])
reserve = common.slider(
    "Reserve (% of HBM)", 0, 50, mt.RESERVE_PCT, key="reserve", where=c[3], help=mt.HELP["reserve"]
)
mb = common.slider("Micro-batch (sequences)", 1, 64, 1, key="mb", where=c[4])
seq = common.slider("Sequence length (tokens)", 256, 131072, 4096, step=256, key="seq", where=c[5])
rc = common.select(
    "Activation recompute", mt.RC, "none", key="rc", radio=True, horizontal=True, where=c[6]
)
sp = common.toggle("Sequence parallel", False, key="sp", where=c[7])
flash = common.toggle("Flash attention", True, key="flash", where=c[7], help=mt.HELP["flash"])
billions, shape = None, ()
if model == "custom":
    shape = tuple(
        common.number(lbl, 1, 10**7, d, key=k, step=1, where=col)
        for (lbl, k, d), col in zip(mt.SHAPE, st.columns(len(mt.SHAPE)))
    )
elif model == "params":
    where = st.columns(4)[0]
    billions = common.number("Parameters (billions)", 0.001, 1e5, 70.0, key="n", where=where)

units = common.memory_units().value
run = Run(
    model=model,
    billions=billions,
    shape=shape,
    seq=seq,
    recipe=recipe,
    flash=flash,
    gpu=gpu,
    reserve_pct=reserve,
    units=units,
)
lay_a = Split(dp=dp, tp=tp, pp=pp, zero=zero, mb=mb, rc=rc, sp=sp)
with common.explain_errors():
    out = _compute(run, lay_a)
common.metrics(out["metrics"], [1.25, 0.75, 1, 1, 1])
st.caption(out["caption"])
common.chart(out["bars"], key="bars", height=520)

if common.toggle("Compare with layout B", False, key="cmp", help=mt.HELP["cmp"]):
    st.subheader("Layout A vs layout B")
    c = [*st.columns(4), *st.columns(4)]  # two rows: the layout, then the micro-batch and savers
    lay_b = Split(
        dp=common.slider("B: DP", 1, 1024, 8, key="b_dp", where=c[0]),
        tp=common.slider("B: TP", 1, 64, 1, key="b_tp", where=c[1]),
        pp=common.slider("B: PP", 1, 64, 1, key="b_pp", where=c[2]),
        zero=common.select(
            "B: ZeRO stage", mt.ZERO, "1", key="b_zero", radio=True, horizontal=True, where=c[3]
        ),
        mb=common.slider("B: micro-batch", 1, 64, 1, key="b_mb", where=c[4]),
        rc=common.select(
            "B: recompute", mt.RC, "none", key="b_rc", radio=True, horizontal=True, where=c[5]
        ),
        sp=common.toggle("B: sequence parallel", False, key="b_sp", where=c[6]),
    )
    st.caption(mt.compare_caption(st.query_params.to_dict()))
    if cmp := common.attempt(_compare, run, lay_a, lay_b, prefix="Layout B: "):
        common.metrics(cmp["metrics"], 4, border=True)
        st.markdown(cmp["sentence"])
        common.chart(cmp["fig"], key="cmp_bars", height=480)

st.subheader("Per pipeline stage")
st.caption(mt.STAGES_CAPTION)
if pp > 1:
    st.markdown(mt.pipeline_activations(out["ch"], units))
    common.chart(out["stages"], key="stages", height=440)
else:
    st.info(mt.single_stage(NAMES[zero]))

st.subheader("What fits")
fits = pd.DataFrame(out["fits"])
st.table(fits.set_index("ZeRO stage"))
common.download("what_fits.csv", lambda: fits.to_csv(index=False), "what_fits.csv")
if out["trade"]:
    st.subheader("Activation checkpointing: a trade")
    common.chart(out["trade"], key="trade", height=420)

st.subheader("Sizing questions")
for line in mt.sizing_lines(_seeds(units), common.settings().query()):
    st.markdown(line)

common.takeaway(mt.takeaway(out, units))
with st.expander("How this is computed", expanded=False):
    for block in out["how"]:  # separate elements: a block whose text is unchanged is not redrawn
        st.markdown(block)

st.subheader("Self-check")
common.self_check(**mt.self_check(units))
common.show_url_notices()
