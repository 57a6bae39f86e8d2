"""Training step: where every byte of one step lives, what moves over which link, who waits."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.layout_inputs import custom_layout
from app_pages.common.widgets import play_tick, playing
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.parallel import Layout
from core.planner import Training
from core.stepplan import StepPlan
from core.training import RECOMPUTE_MODES
from core.units import ByteSystem, format_seconds
from figures.planner import text as pt
from figures.planner.run import Run
from figures.step import FRAME_MS, open_at, step_figure
from figures.step import inputs_text as itx
from figures.step import text as tx
from figures.step.run import MODELS, plan_run, step_search

# The planner's keys and defaults, so a planner URL opens the same step here.
SIZES, SEQ = common.same((1, 2, 4, 8, 16, 32, 72)), common.same(2**k for k in range(10, 16))
PLAY_EVERY_S = FRAME_MS / 1000
_search = st.cache_resource(max_entries=16)(step_search)
_plan = st.cache_resource(max_entries=64)(plan_run)


@st.cache_resource(max_entries=32)  # shared, never mutated: open_at copies what it changes
def _figure(run: Run, lay: Layout, cp: int, ep: int, units: str, present: bool) -> dict:
    return step_figure(_plan(run, lay, cp, ep), 0, ByteSystem(units), present)


def drawing(run: Run, lay: Layout, cp: int, ep: int, units: ByteSystem) -> None:
    """The phase stepper (URL-bound, with Play), the drawing and its words, as a fragment: a
    phase step (press, drag or Play tick) reruns only this section, not the page's inputs."""
    every = PLAY_EVERY_S if playing("phase") else None

    @st.fragment(run_every=every)
    def section() -> None:
        if playing("phase") != (every is not None):  # ▶ / ❚❚ pressed: re-arm the timer
            st.rerun(scope="app")
        plan: StepPlan = _plan(run, lay, cp, ep)
        last = len(plan.phases) - 1
        play_tick("phase", last, PLAY_EVERY_S)
        phase = common.stepper("Phase", last, key="phase", play=True)
        fig = _figure(run, lay, cp, ep, units.value, common.settings().presenter)
        common.chart(open_at(fig, phase), key="step")
        st.markdown("\n".join(tx.phase_lines(plan, phase, units)))
        with st.expander("What one GPU of each stage holds in this phase"):
            st.markdown("\n".join(f"- {line}" for line in tx.holding_lines(plan, phase, units)))

    section()


common.start_page("Training step: one step, drawn", tx.QUESTION)
top = st.columns([3, 3, 1, 1], vertical_alignment="bottom")
model = common.select("Model", MODELS, "Llama-2 70B", key="model", where=top[0])
pick = common.select(
    "Layout drawn", pt.PICK, "fastest", key="pick", help=tx.LAYOUT_HELP, where=top[1]
)
cp = common.number("CP", 1, 64, 1, key="cp", help=itx.CP_HELP, where=top[2])
ep = common.number("EP", 1, 256, 1, key="ep", help=itx.EP_HELP, where=top[3])
left, right = st.columns(2)  # compact: the cluster and batch, summarised in the caption below
with left.expander(itx.INPUTS):
    c = [*st.columns(4), *st.columns(4)]
    nodes = common.slider("Nodes", 1, 128, 8, key="nodes", where=c[0])
    gpn = common.select("GPUs per node", SIZES, "8", key="gpn", where=c[1])
    gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=c[2])
    links = common.same(LINK_PRESETS)
    inter = common.select("Link between nodes", links, "InfiniBand NDR", key="inter", where=c[3])
    seq = int(common.select("Sequence length", SEQ, "4096", key="seq", where=c[4]))
    gb = common.number("Global batch (sequences)", 1, 65536, 1152, key="gb", where=c[5])
    rc = common.select("Recompute", common.same(RECOMPUTE_MODES), "selective", key="rc", where=c[6])
with right:
    custom, box = custom_layout(expanded=False)
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
    plan: StepPlan = _plan(run, lay, cp, ep)

ev = plan.evaluation
st.caption(itx.drawn_caption(plan, nodes, int(gpn), gpu, gb, seq, format_seconds(plan.step_time_s)))
drawing(run, lay, cp, ep, units)
for w in ev.warnings:  # under the drawing: the picture stays on the first screen (issue 15)
    st.warning(w, icon="⚠️")
for note in (tx.drawn_note(plan, plan.drawn), itx.fold_note(plan)):
    if note:
        st.info(note, icon="🔎")
common.takeaway(tx.takeaway(plan))
with st.expander("How this is computed"):
    st.markdown(tx.HOW)
common.self_checks(tx.self_checks(plan))
common.show_url_notices()
