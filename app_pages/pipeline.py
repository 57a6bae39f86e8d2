"""Pipeline parallelism: where the pipeline idles, and what micro-batches and schedules buy."""

import streamlit as st

from app_pages import common
from app_pages.common.pipeline_view import CHOICES, Run, m_and_memory, simulated, span_s, timeline
from app_pages.common.widgets import nudges
from core import pipeline as pl
from figures.pipeline import text as text
from figures.pipeline.drawing import pp_drawing

common.start_page(
    "Pipeline parallelism",
    "Where does a pipeline sit idle, and what do more micro-batches and smarter schedules buy — "
    "at what memory cost?",
)
common.walk("pipeline")
c1, c2, c3, c4 = st.columns(4)
p = common.slider("P (pipeline ranks)", 2, 32, 4, key="p", where=c1)
m = common.slider("M (micro-batches per step)", 1, 128, 8, key="m", where=c2)
# Keys (click the page first): ↓ / ↑ step P by one, ← / → halve or double M.
nudges("p", [("P − 1 ↓", "Down", lambda v: v - 1), ("P + 1 ↑", "Up", lambda v: v + 1)], where=c1)
nudges("m", [("M ÷ 2 ←", "Left", text.half_m), ("M × 2 →", "Right", text.double_m)], where=c2)
sched = common.select("Schedule", CHOICES, "1f1b", key="sched", where=c3)
d1, d2, d3, d4, d5 = st.columns([1, 1, 1, 1, 1.3])
cmp = common.toggle("Compare schedules", False, key="cmp", where=d5)
sched2 = common.select("Second schedule", CHOICES, "zb_h1", key="sched2", where=d5) if cmp else None
scheds = [s for s in (sched, sched2) if s]
uses_v = [s for s in scheds if pl.effective_v(s, 1)[0] != pl.effective_v(s, 3)[0]]
v_help = text.v_help(uses_v)
v_slider = common.slider(
    "v (model chunks per rank)", 1, 4, 2, key="v", where=c4, help=v_help, disabled=not uses_v
)
f = common.slider("t_F forward (s)", 0.25, 4.0, 1.0, step=0.25, key="f", where=d1)
if any(pl.SCHEDULES[s].splits_backward for s in scheds):  # unsplit schedules run B = I + W
    i = common.slider("t_I input grad (s)", 0.25, 4.0, 1.0, step=0.25, key="i", where=d2)
    w = common.slider("t_W weight grad (s)", 0.25, 4.0, 1.0, step=0.25, key="w", where=d3)
else:
    i = w = common.slider("t_B backward (s)", 0.5, 8.0, 2.0, step=0.5, key="b", where=d2) / 2
    d3, d4 = d4, d3  # p2p latency takes the free third column
lat_help = "Added to every send between ranks; the closed forms assume 0."
lat = common.slider("p2p latency (s)", 0.0, 2.0, 0.0, step=0.05, key="lat", where=d4, help=lat_help)
shape = dict(num_stages=p, num_microbatches=m, forward_s=f, backward_input_s=i, backward_weight_s=w)
runs = [
    Run(schedule=s, num_chunks=pl.effective_v(s, v_slider)[0], p2p_s=lat, **shape) for s in scheds
]
if notes := " ".join(dict.fromkeys(pl.effective_v(s, v_slider)[1] for s in scheds)).strip():
    c4.caption(notes)

st.subheader("Timeline: who waits, and when")
st.caption(text.TIMELINE_CAPTION)
x_max = span_s(runs) if cmp else None  # compared Gantts share one time axis
n = timeline(0, runs[0], None, x_max)
n2 = timeline(1, runs[1], n, x_max) if cmp else None
st.subheader("The pipe, drawn: micro-batches flowing through the stages")
if n and (flow := common.attempt(pp_drawing, simulated(runs[0]), level="warning")):
    common.chart(flow, key="pp_draw")

st.subheader("What more micro-batches buy, and what they cost in memory")
# Memory beside the bubble: GPipe holds M on every rank, 1F1B P − r (the reason 1F1B exists).
shown = [Run(schedule=s, num_chunks=1, p2p_s=lat, **shape) for s in ("gpipe", "1f1b")]
shown += [r for r, res in zip(runs, (n, n2)) if res and r.schedule not in {"gpipe", "1f1b"}]
here, shown = n and (m, n["share"]), tuple(dict.fromkeys(shown))
common.chart(m_and_memory(p, f, i, w, v_slider, sched, here, shown), key="m_and_memory")

common.takeaway(text.TAKEAWAY)
common.how_computed(text.how_computed(sched, n, lat))
results = {mm: simulated(Run(schedule="1f1b", num_stages=8, num_microbatches=mm)) for mm in (8, 64)}
common.self_checks(text.self_checks(results))
common.show_url_notices()
