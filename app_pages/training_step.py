"""Training step: where every byte of one step lives, what moves over which link, who waits."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.layout_inputs import custom_layout
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.model import MODEL_PRESETS
from core.parallel import Layout
from core.planner import Training
from core.stepplan import StepPlan, drawn_ranks
from core.training import RECOMPUTE_MODES
from core.units import ByteSystem, format_seconds
from figures.planner import text as pt
from figures.planner.run import Run, search_run
from figures.step import open_at, step_figure
from figures.step import text as tx
from figures.step.run import plan_run

# The planner's keys and defaults, so a planner URL opens the same step here.
SIZES, SEQ = common.same((1, 2, 4, 8, 16, 32, 72)), common.same(2**k for k in range(10, 16))
_search = st.cache_resource(max_entries=16)(search_run)
_plan = st.cache_resource(max_entries=64)(plan_run)


@st.cache_resource(max_entries=32)  # shared, never mutated: open_at copies what it changes
def _figure(run: Run, lay: Layout, units: str) -> dict:
    return step_figure(_plan(run, lay), 0, ByteSystem(units))


common.start_page("Training step: one step, drawn", tx.QUESTION)
c = [*st.columns(4), *st.columns(4)]
nodes = common.slider("Nodes", 1, 128, 8, key="nodes", where=c[0])
gpn = common.select("GPUs per node", SIZES, "8", key="gpn", where=c[1])
gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=c[2])
inter = common.select(
    "Link between nodes", common.same(LINK_PRESETS), "InfiniBand NDR", key="inter", where=c[3]
)
model = common.select("Model", common.same(MODEL_PRESETS), "Llama-2 70B", key="model", where=c[4])
seq = int(common.select("Sequence length", SEQ, "4096", key="seq", where=c[5]))
gb = common.number("Global batch (sequences)", 1, 65536, 1152, key="gb", where=c[6])
rc = common.select("Recompute", common.same(RECOMPUTE_MODES), "selective", key="rc", where=c[7])
pick = common.select("Layout drawn", pt.PICK, "fastest", key="pick", help=tx.LAYOUT_HELP)
custom, box = custom_layout(expanded=pick == "custom")
sp = common.toggle("Sequence parallel", False, key="sp", where=box)

units = common.memory_units()
with common.explain_errors():
    cluster = make_cluster(
        num_nodes=nodes, gpus_per_node=int(gpn), gpu_name=gpu, inter_link_name=inter
    )
    training = Training(global_batch=gb, seq_len=seq, recompute=rc)
    run = Run(model=model, cluster=cluster, training=training, sequence_parallel=sp)
    custom |= dict(sp=sp)
    lay = pt.drawn_layout(_search(run), pick, nodes * int(gpn), model, custom)
    plan: StepPlan = _plan(run, lay)

phase = common.stepper("Phase", len(plan.phases) - 1, key="phase")
ev = plan.evaluation
st.caption(f"Drawn: **{lay.label}** · step {format_seconds(plan.step_time_s)} (the planner's).")
if note := tx.drawn_note(plan, drawn_ranks(plan.placement)):
    st.info(note, icon="🔎")
for w in ev.warnings:
    st.warning(w, icon="⚠️")
common.chart(open_at(_figure(run, lay, units.value), phase), key="step")
st.markdown("\n".join(tx.phase_lines(plan, phase, units)))
with st.expander("What one GPU of each stage holds in this phase"):
    st.markdown("\n".join(f"- {line}" for line in tx.holding_lines(plan, phase, units)))
common.takeaway(tx.takeaway(plan))
with st.expander("How this is computed"):
    st.markdown(tx.HOW)
common.self_checks(tx.self_checks(plan))
common.show_url_notices()
