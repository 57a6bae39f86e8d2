"""Pipeline parallelism: where the pipeline idles, and what micro-batches and schedules buy.

P, M, the schedules and the op times feed every chart, so the controls and charts are one
`st.fragment` (issue 18): a move reruns them and writes the "How this is computed" lines into a
slot in the page's tail; the title, takeaway and self-checks stay put
(app_pages/common/sections.py)."""

import streamlit as st

from app_pages import common
from app_pages.common import pipeline_view as pv
from app_pages.common.fold import cells, folded
from app_pages.common.nudge import nudges
from app_pages.common.pipeline_view import CHOICES, Run, simulated
from core import pipeline as pl
from figures.pipeline import text as text


@st.fragment(key="pipe_main")
def main_section(how) -> None:
    """P, M, the schedules and the op times feed the Gantt, the metrics and the M-vs-memory chart:
    one fragment, with the cursor's own fragment inside (app_pages/common/pipeline_view.py)."""
    common.sections.follow_page()  # args from a page run that finished
    c1, c2, c3, row = cells(4)
    p = common.slider("P (pipeline ranks)", 2, 32, 4, key="p", where=c1)
    m = common.slider("M (micro-batches per step)", 1, 128, 8, key="m", where=c2)
    sched = common.select("Schedule", CHOICES, "1f1b", key="sched", where=c3)
    c4 = row.container()  # the v slider and, under it, what the schedule does with v
    # The answer above the fold (issue 15): the key buttons and the folded op times share one row.
    k1, k2 = cells(2, align="center")
    keys = k1.container(horizontal=True, gap="small")
    # Keys (click the page first): ↓ / ↑ step P by one, ← / → halve or double M.
    p_keys = [("P − 1 ↓", "Down", lambda v: v - 1), ("P + 1 ↑", "Up", lambda v: v + 1)]
    nudges("p", p_keys, where=keys)
    nudges("m", [("M ÷ 2 ←", "Left", text.half_m), ("M × 2 →", "Right", text.double_m)], where=keys)
    box = folded(pv.times_label(CHOICES), what="Op times and compare", where=k2)  # values first
    d1, d2, d3 = cells(3, where=box)
    cmp = common.toggle("Compare schedules", False, key="cmp", where=d1)
    second = dict(key="sched2", where=d2)
    sched2 = common.select("Second schedule", CHOICES, "zb_h1", **second) if cmp else None
    scheds = [s for s in (sched, sched2) if s]
    uses_v = [s for s in scheds if pl.effective_v(s, 1)[0] != pl.effective_v(s, 3)[0]]
    v_help = text.v_help(uses_v)
    v_slider = common.slider(
        "v (model chunks per rank)", 1, 4, 2, key="v", where=c4, help=v_help, disabled=not uses_v
    )
    f = common.slider("t_F forward (s)", 0.25, 4.0, 1.0, step=0.25, key="f", where=d3)
    split = any(pl.SCHEDULES[s].splits_backward for s in scheds)
    e1, e2, e3 = cells(3, where=box)
    if split:  # unsplit schedules run B = I + W
        i = common.slider("t_I input grad (s)", 0.25, 4.0, 1.0, step=0.25, key="i", where=e1)
        w = common.slider("t_W weight grad (s)", 0.25, 4.0, 1.0, step=0.25, key="w", where=e2)
    else:
        i = w = common.slider("t_B backward (s)", 0.5, 8.0, 2.0, step=0.5, key="b", where=e1) / 2
    lat_help = "Added to every send between ranks; the closed forms assume 0."
    lat = common.slider(
        "p2p latency (s)", 0.0, 2.0, 0.0, step=0.05, key="lat", where=e3, help=lat_help
    )
    shape = dict(
        num_stages=p, num_microbatches=m, forward_s=f, backward_input_s=i, backward_weight_s=w
    )
    runs = [
        Run(schedule=s, num_chunks=pl.effective_v(s, v_slider)[0], p2p_s=lat, **shape)
        for s in scheds
    ]
    said = [pl.effective_v(s, v_slider)[1] for s in scheds]  # "v unused": the greyed v's help
    if notes := " ".join(dict.fromkeys(n for n in said if "unused" not in n)).strip():
        c4.caption(notes)

    x_max = pv.span_s(runs) if cmp else None  # compared Gantts share one time axis
    n, *rest = pv.timeline_section(runs, x_max)
    n2 = rest[0] if rest else None

    st.subheader("What more micro-batches buy, and what they cost in memory")
    # Memory beside the bubble: GPipe holds M on every rank, 1F1B P − r (the reason 1F1B exists).
    shown = [Run(schedule=s, num_chunks=1, p2p_s=lat, **shape) for s in ("gpipe", "1f1b")]
    shown += [r for r, res in zip(runs, (n, n2)) if res and r.schedule not in {"gpipe", "1f1b"}]
    here, shown = n and (m, n["share"]), tuple(dict.fromkeys(shown))
    common.chart(pv.m_and_memory(p, f, i, w, v_slider, sched, here, shown), key="m_and_memory")
    st.caption(text.SCHEDULES_NOTE)
    with how.container():
        common.how_lines(text.how_computed(sched, n, lat))


common.start_page(
    "Pipeline parallelism",
    "Where does a pipeline sit idle, and what do more micro-batches and smarter schedules buy — "
    "at what memory cost?",
)
common.walk("pipeline")
body, tail = st.container(), st.container()
with tail:
    common.takeaway(text.TAKEAWAY)
    st.subheader("How this is computed")
    how = st.empty()
    runs = {m: Run(schedule="1f1b", num_stages=8, num_microbatches=m) for m in (8, 64)}
    results = {m: simulated(r) for m, r in runs.items()}
    st.fragment(common.self_checks)(text.self_checks(results))  # an answer reruns only the checks
with body:
    main_section(how)
common.show_url_notices()
