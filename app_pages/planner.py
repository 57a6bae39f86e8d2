"""Planner: which DP × TP × PP × ZeRO layout trains fastest on this cluster, why, and does it
fit?
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pandas as pd
import streamlit as st

from app_pages import common
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.memory import RECOMPUTE_MODES, SIZED_SCHEDULES
from core.model import MODEL_PRESETS, preset
from core.parallel import ORDERS, ZERO_STAGES, Layout, ParallelDims, place
from core.pipeline import SCHEDULES
from core.planner import Efficiency, Training, evaluate, search
from core.units import gib_or_gb
from figures import planner as fp
from figures.memory import RECIPE_LABELS
from figures.pipeline import gantt_figure

SIZES = {str(g): str(g) for g in (1, 2, 4, 8, 16, 32, 72)}
SEQ = {str(2**k): str(2**k) for k in range(10, 16)}
PICK = {k: k for k in ("fastest", "#2", "#3", "#4", "#5", "boring", "custom")}
VS = {k: k for k in ("TP flipped", "boring", "fastest", "#2")}
RULES = {
    k: k for k in ("all", "ranked", "memory", "model split", "batch", "TP crosses node", "schedule")
}
# The seeds' placement exercise on the default cluster (8 x 8 H100, NVLink 4 inside, NDR between).
EXERCISE = dict(
    model="GPT-3 175B",
    seq="2048",
    gb="64",
    rc="full",
    pick="custom",
    dp="1",
    tp="8",
    pp="8",
    cmp="true",
)
EX_CFG = (
    8,
    "8",
    "H100 SXM",
    "GPU's own",
    "InfiniBand NDR",
    "8",
    "GPT-3 175B",
    64,
    2048,
    "mixed_adam",
    "full",
    False,
    0.7,
)
ROWS, MAX_OPS = 60, 40_000


def _setup(cfg: tuple):
    """Model, cluster and training from the page's plain control values (hashable, for the
    caches).
    """
    nodes, gpn, gpu, intra, inter, nics, model, gb, seq, recipe, rc, sp, eff = cfg
    cluster = make_cluster(
        num_nodes=nodes,
        gpus_per_node=int(gpn),
        gpu_name=gpu,
        inter_link_name=inter,
        intra_link_name=None if intra == "GPU's own" else intra,
        nics_per_node=min(int(nics), int(gpn)),
    )
    return (
        preset(model),
        cluster,
        Training(
            global_batch=gb,
            seq_len=seq,
            recipe=recipe,
            recompute=rc,
            efficiency=Efficiency(matmul=eff),
        ),
    )


@st.cache_resource(
    max_entries=16
)  # shared and never mutated: no 1-2 MB copy per hit as with cache_data
def _search(cfg: tuple):
    return search(*_setup(cfg), sequence_parallel=cfg[11])


@st.cache_resource(max_entries=128)
def _eval(cfg: tuple, lay: Layout):
    model, cluster, training = _setup(cfg)
    return evaluate(model, cluster, lay, training)


@st.cache_data(max_entries=64)
def _figs(cfg: tuple, lay: Layout, colour: str, units: str, other: Layout | None, labels: tuple):
    """The cluster, where time and memory go, and (on request) the comparison with a second
    layout.
    """
    ev = _eval(cfg, lay)
    return (
        fp.cluster_figure(ev.placement, colour_by=colour),
        fp.layout_figure(ev, units),
        other and fp.compare_figure(ev, _eval(cfg, other), labels, units),
    )


@st.cache_data(max_entries=16)
def _gantt(cfg: tuple, lay: Layout) -> dict:
    return gantt_figure(_eval(cfg, lay).pipeline())


def _apply_row_click() -> None:
    """A clicked table row (dataframe selections are not URL-bound) is written into the layout
    widgets.
    """
    ss = st.session_state
    sel = tuple((ss.get("table") or {}).get("selection", {}).get("rows", ()))
    if (
        not sel
        or sel[0] >= len(ss.get("_trows", ()))
        or (ss.get("_tsig"), sel) == ss.get("_applied")
    ):
        return
    ss["_applied"], r = (ss["_tsig"], sel), ss["_trows"][sel[0]]
    if r["zero_stage"] is None or r["micro_batch"] is None:
        ss["_note"] = (
            f"That row stands for every DP {r['dp']} × TP {r['tp']} × PP {r['pp']} layout: "
            f"{r['reason']}"
        )
        return
    ss.update(
        pick="custom",
        dp=r["dp"],
        tp=r["tp"],
        pp=r["pp"],
        zero=ZERO_STAGES[r["zero_stage"]].label,
        mb=r["micro_batch"],
        sched=SCHEDULES[r["schedule"]].label,
        v=max(2, r["num_chunks"]),
        order=ORDERS[0],
    )


_apply_row_click()
common.start_page(
    "Planner: map a training run onto a cluster",
    "Given a model, a cluster and a batch, which "
    "parallel layout trains fastest, and why — how many GPUs, mapped how, and does it fit?",
)
c = st.columns(4)
nodes = common.slider("Nodes", 1, 128, 8, key="nodes", where=c[0])
gpn = common.select("GPUs per node", SIZES, "8", key="gpn", where=c[1])
nics = common.select(
    "NICs per node", SIZES, "8", key="nics", where=c[2], help="At most one per GPU."
)
gpu = common.select("GPU", {g: g for g in GPU_PRESETS}, "H100 SXM", key="gpu", where=c[3])
c = st.columns(4)
intra = common.select(
    "Link inside a node",
    {"GPU's own": "GPU's own"} | {k: k for k in LINK_PRESETS},
    "GPU's own",
    key="intra",
    where=c[0],
)
inter = common.select(
    "Link between nodes", {k: k for k in LINK_PRESETS}, "InfiniBand NDR", key="inter", where=c[1]
)
model = common.select(
    "Model", {m: m for m in MODEL_PRESETS}, "Llama-2 70B", key="model", where=c[2]
)
seq = int(common.select("Sequence length", SEQ, "4096", key="seq", where=c[3]))
c = st.columns(4)
gb = int(
    common.number(
        "Global batch (sequences)",
        1,
        65536,
        1152,
        key="gb",
        step=1,
        where=c[0],
        help="Sequences per optimizer step; 1,152 × 4,096 ≈ 4.7M tokens.",
    )
)
recipe = common.select("Precision recipe", RECIPE_LABELS, "mixed_adam", key="recipe", where=c[1])
rc = common.select("Recompute", {m: m for m in RECOMPUTE_MODES}, "selective", key="rc", where=c[2])
eff = common.slider(
    "Matmul efficiency",
    0.3,
    1.0,
    0.7,
    step=0.05,
    key="eff",
    where=c[3],
    help="Achievable share of dense peak in GEMMs; 0.7 reproduces Megatron 2021 (see calibration).",
)
sp = common.toggle("Sequence parallel", False, key="sp", where=c[2])
cfg = (nodes, gpn, gpu, intra, inter, nics, model, gb, seq, recipe, rc, sp, eff)
c = st.columns(4)
pick = common.select(
    "Layout drawn",
    PICK,
    "fastest",
    key="pick",
    where=c[0],
    help="The search's ranking, or custom: set it below or click a row of the table.",
)
colour = common.select("Colour GPUs by", fp.COLOUR_BY, "tp", key="colour", where=c[1])
vs = (
    common.select("Second layout", VS, "TP flipped", key="vs", where=c[3])
    if common.toggle("Compare two layouts", False, key="cmp", where=c[2])
    else None
)
with st.expander(
    "Custom layout (used when Layout drawn = custom; a table row click fills it in)",
    expanded=pick == "custom",
):
    c = st.columns(4) + st.columns(4)  # always rendered, so a row click can write them into the URL
    dp, tp, pp = (
        int(common.number(k.upper(), 1, 65536, d, key=k, step=1, where=c[i]))
        for i, (k, d) in enumerate((("dp", 1), ("tp", 8), ("pp", 8)))
    )
    zero = common.select(
        "ZeRO", {str(k): v.label for k, v in ZERO_STAGES.items()}, "0", key="zero", where=c[3]
    )
    order = common.select(
        "Order (innermost first)", {o: o for o in ORDERS}, ORDERS[0], key="order", where=c[4]
    )
    mb = int(common.number("Micro-batch", 1, 65536, 1, key="mb", step=1, where=c[5]))
    sched = common.select(
        "Schedule",
        {s: SCHEDULES[s].label for s in SIZED_SCHEDULES},
        "1f1b",
        key="sched",
        where=c[6],
    )
    v = common.slider("Chunks v (interleaved)", 2, 8, 2, key="v", where=c[7])

units, gpus, cmp = common.memory_units().value, nodes * int(gpn), vs is not None
with common.explain_errors():
    res = _search(cfg)
ev = None
try:
    lay = (
        Layout(
            dp=dp,
            tp=tp,
            pp=pp,
            zero_stage=int(zero),
            micro_batch=mb,
            schedule=sched,
            num_chunks=v if sched == "interleaved_1f1b" else 1,
            order=order,
            sequence_parallel=sp,
        )
        if pick == "custom"
        else fp.pick_layout(res, pick)
    )
    if lay is None:
        raise ValueError(fp.no_layout_message(res, gpus, model))
    ev = _eval(cfg, lay)
except ValueError as err:
    st.error(str(err), icon="🚫")
    common.chart(
        fp.bare_cluster_figure(
            _setup(cfg)[1],
            "no layout drawn: the rule is named above; the table "
            "below lists every layout and why it runs or not",
        ),
        key="cluster",
    )
if note := st.session_state.pop("_note", None):
    st.warning(note)
if ev:
    for col, (label, value, delta, tip) in zip(
        st.columns([1.3, 1, 1, 1, 1.3]), fp.headline_metrics(ev, units)
    ):
        col.metric(
            label,
            value,
            delta,
            help=tip,
            border=label == "Step time",
            delta_color="off" if label == "GPUs" else "normal" if ev.fits else "inverse",
        )
    st.caption(
        f"Drawn: **{ev.layout.label}** · {len(res.ranked):,} layouts run, {len(res.rejected):,} "
        "rejected."
    )
    for w in ev.warnings:
        st.warning(w, icon="⚠️")
    other = (fp.tp_flipped(ev) if vs == "TP flipped" else fp.pick_layout(res, vs)) if cmp else None
    flip = ("TP across nodes", "TP in node")[:: 1 if ev.spans["tp"].crosses_node else -1]
    cluster_fig, layout_fig, cmp_fig = _figs(
        cfg, ev.layout, colour, units, other, flip if vs == "TP flipped" else ("drawn", vs)
    )
    common.chart(cluster_fig, key="cluster")
    common.chart(layout_fig, key="layout", height=480)
    if cmp_fig:
        common.chart(cmp_fig, key="compare", height=520)
    elif cmp:
        st.info("Nothing to compare: with TP = 1 or one node TP has nowhere else to go.")
    ops = (
        2 * ev.layout.pp * ev.num_microbatches * ev.layout.num_chunks
    )  # F and B per stage, chunk, micro-batch
    if ev.layout.pp > 1 and common.toggle(
        "Show this layout's pipeline, simulated (Gantt)",
        False,
        key="gantt",
        help=f"{ops:,} F and B operations; drawn up to {MAX_OPS:,}.",
    ):
        common.chart(_gantt(cfg, ev.layout), key="gantt_chart") if ops <= MAX_OPS else st.info(
            f"{ops:,} operations: too many to draw; the step time above already uses the simulated "
            "makespan."
        )

st.subheader(f"Every layout of {gpus:,} GPUs, fastest first")
rule = common.select("Show", RULES, "all", key="rule", where=st.columns(4)[0])
rows = fp.filter_rows(fp.table_rows(res), rule, ROWS, units)
if st.session_state.get("_tsig") != (cfg, rule):  # a new table: an old selection is not a new click
    st.session_state["_applied"] = (
        (cfg, rule),
        tuple((st.session_state.get("table") or {}).get("selection", {}).get("rows", ())),
    )
st.session_state["_tsig"], st.session_state["_trows"] = (cfg, rule), rows
cols = {
    k: st.column_config.NumberColumn(h, format=f, width=w)
    if f
    else st.column_config.Column(h, width=w)
    for k, (h, f, w) in fp.TABLE_COLUMNS.items()
}
cols["memory"] = st.column_config.NumberColumn(
    f"memory ({gib_or_gb(units)[0]})", format="%.1f", width="small"
)
st.dataframe(
    pd.DataFrame(rows),
    key="table",
    on_select="rerun",
    selection_mode="single-row",
    hide_index=True,
    column_config=cols,
    column_order=fp.table_columns(rule),
    width="stretch",
    height=320,
)
st.caption(
    f"Click a row to draw it. First {ROWS} rows of the filter; status is ok or the rule a layout "
    "breaks; a "
    "rejected row with blank ZeRO and mb stands for every value of them."
)

st.subheader("The placement exercise: 8 nodes × 8 GPUs, TP = 8, PP = 8, DP = 1")
st.markdown(
    fp.exercise_markdown(
        _eval(EX_CFG, Layout(dp=1, tp=8, pp=8)),
        _eval(EX_CFG, Layout(dp=1, tp=8, pp=8, order="pp-tp-dp")),
        "planner?" + urlencode(EXERCISE, quote_via=quote),
    )
)
common.takeaway(fp.takeaway_text(res))
if ev:
    with st.expander("How this is computed"):
        st.markdown(fp.how_computed_markdown(ev, units))
with st.expander("How well does this model predict?"):
    st.markdown(
        "The same step-time model, one set of efficiencies, against Megatron-LM's published weak "
        "scaling "
        "(Narayanan et al. 2021 Table 1, Selene A100s; TFLOP/s per GPU in their Eq. 3 convention)."
    )
    st.dataframe(
        pd.DataFrame(st.cache_resource(fp.calibration_rows)()),
        hide_index=True,
        width="stretch",
        column_config={"error": st.column_config.NumberColumn("error", format="percent")},
    )

st.subheader("Self-check")
common.self_check(
    "A layout with DP = 4, TP = 8, PP = 2 uses how many GPUs?",
    ParallelDims(dp=4, tp=8, pp=2).world_size,
    key="q1",
    rel_tol=0,
    explanation="DP × TP × PP: every GPU holds one (dp, pp, tp) coordinate.",
)
span = place(ParallelDims(dp=1, tp=8, pp=8, order="pp-tp-dp"), make_cluster(num_nodes=8)).spans[
    "tp"
]
common.self_check(
    "8 nodes × 8 GPUs, TP = 8, PP = 8, order pp-tp-dp (PP innermost): how many of the 8 TP groups "
    "cross a node boundary?",
    span.crossing_groups,
    key="q2",
    rel_tol=0,
    explanation="PP stride 1 "
    f"puts 8 stages on a node, so each TP group takes one GPU on each of {span.nodes_per_group} "
    "nodes.",
)
common.show_url_notices()
