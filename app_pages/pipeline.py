"""Pipeline parallelism: where the pipeline idles, and what micro-batches and schedules buy."""

import json
from dataclasses import asdict, dataclass

import streamlit as st

from app_pages import common
from core import pipeline as pl
from figures import pipeline as fp
from figures.pipeline import text as text

# Short labels: the select writes them into the URL (sched=Interleaved).
CHOICES = {k: info.short_label for k, info in pl.SCHEDULES.items()}


@dataclass(frozen=True, kw_only=True)
class Run:
    """One simulation's inputs, named and defaulted as `pl.simulate` takes them: a cache key."""

    schedule: str
    num_stages: int
    num_microbatches: int
    num_chunks: int = 1
    forward_s: float = 1.0
    backward_input_s: float = 1.0
    backward_weight_s: float = 1.0
    p2p_s: float = 0.0


@st.cache_data(max_entries=64)
def _result(run: Run) -> pl.PipelineResult:
    return pl.simulate(**asdict(run))


@st.cache_data(max_entries=64)
def _gantt(run: Run) -> tuple[dict, dict]:
    """Gantt figure dict and the numbers shown beside it."""
    r, cf = _result(run), {k: v for k, v in asdict(run).items() if k != "p2p_s"}
    return fp.gantt_figure(r), dict(  # the closed forms assume zero p2p latency
        share=r.bubble_fraction,
        ratio=r.bubble_ratio,
        span=r.span_bubble,
        idle=max(r.idle_s),
        peak=max(r.peak_activations),
        peak_stages=max(r.peak_activation_stages),
        cf_idle=pl.closed_form_idle_s(**cf),
        cf_share=pl.closed_form_bubble_share(**cf),
    )


@st.cache_data(max_entries=64)
def _sweep(s: str, p: int, v: int, f: float, i: float, w: float) -> pl.BubbleSweep:
    # Powers of two; interleaved (M a multiple of P) also gets P·2^k so it has points at any P.
    ms = {2**k for k in range(8)}
    ms |= {p * 2**k for k in range(8) if p * 2**k <= 128} if s == "interleaved_1f1b" else set()
    return pl.bubble_sweep(s, p, tuple(sorted(ms)), v, f, i, w)


@st.cache_data(max_entries=64)
def _m_and_memory(p: int, f: float, i: float, w: float, v: int, chosen: str, here, runs) -> dict:
    """Bubble vs M for every schedule beside peak activations per rank, as one figure."""
    sweeps = [_sweep(s, p, pl.effective_v(s, v)[0], f, i, w) for s in CHOICES]
    return fp.side_by_side(
        fp.bubble_vs_m_figure(sweeps, CHOICES, highlight=chosen, here=here),
        fp.peak_activations_figure([_result(r) for r in runs]),
    )


def timeline(idx: int, run: Run, base: dict | None = None) -> dict | None:
    """Metric row, exports and Gantt for one schedule; the broken rule instead if it fails."""
    if not (out := common.attempt(_gantt, run)):
        return None
    fig, n = out
    common.metrics(text.timeline_metrics(n, base))
    common.chart(fig, key=f"gantt{idx}")
    # Deferred: a file is built only when its button is clicked (megabytes at P=32, M=128).
    row = st.container(horizontal=True)
    name = f"{run.schedule}_{run.num_stages}_{run.num_microbatches}"
    common.download(
        "Chrome trace (JSON)",
        lambda: json.dumps(pl.to_chrome_trace(_result(run))),
        f"{name}.json",
        "application/json",
        key=f"trace{idx}",
        help="Opens in ui.perfetto.dev or chrome://tracing.",
        where=row,
    )
    common.download(
        "Timeline (CSV)",
        lambda: pl.to_csv(_result(run)),
        f"{name}.csv",
        key=f"csv{idx}",
        help="One row per op.",
        where=row,
    )
    return n


common.start_page(
    "Pipeline parallelism",
    "Where does a pipeline sit idle, and what do more micro-batches and smarter schedules buy — "
    "at what memory cost?",
)
c1, c2, c3, c4 = st.columns(4)
p = common.slider("P (pipeline ranks)", 2, 32, 4, key="p", where=c1)
m = common.slider("M (micro-batches per step)", 1, 128, 8, key="m", where=c2)
sched = common.select("Schedule", CHOICES, "1f1b", key="sched", where=c3)
v_help = "Interleaved and Looped BFS split each rank's layers into v chunks."
v_slider = common.slider("v (model chunks per rank)", 1, 4, 2, key="v", where=c4, help=v_help)
d1, d2, d3, d4, d5 = st.columns([1, 1, 1, 1, 1.3])
cmp = common.toggle("Compare schedules", False, key="cmp", where=d5)
sched2 = common.select("Second schedule", CHOICES, "zb_h1", key="sched2", where=d5) if cmp else None
scheds = [s for s in (sched, sched2) if s]
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
n = timeline(0, runs[0])
n2 = timeline(1, runs[1], n) if cmp else None

st.subheader("What more micro-batches buy, and what they cost in memory")
# Memory beside the bubble: GPipe holds M on every rank, 1F1B P − r (the reason 1F1B exists).
shown = [Run(schedule=s, num_chunks=1, p2p_s=lat, **shape) for s in ("gpipe", "1f1b")]
shown += [r for r, res in zip(runs, (n, n2)) if res and r.schedule not in {"gpipe", "1f1b"}]
here, shown = n and (m, n["share"]), tuple(dict.fromkeys(shown))
common.chart(_m_and_memory(p, f, i, w, v_slider, sched, here, shown), key="m_and_memory")

common.takeaway(text.TAKEAWAY)
common.how_computed(text.how_computed(sched, n, lat))
results = {mm: _result(Run(schedule="1f1b", num_stages=8, num_microbatches=mm)) for mm in (8, 64)}
common.self_checks(text.self_checks(results))
common.show_url_notices()
