"""Pipeline parallelism: where the pipeline idles, and what micro-batches and schedules buy."""

import json

import streamlit as st

from app_pages import common
from core import pipeline as pl
from figures import pipeline as fp

LABELS = {
    "gpipe": "GPipe",
    "1f1b": "1F1B",
    "interleaved_1f1b": "Interleaved",
    "zb_h1": "ZB-H1",
    "zb_v": "ZB-V",
    "dualpipe_v": "DualPipeV",
    "looped_bfs": "Looped BFS",
}


def effective_v(s: str, v: int) -> tuple[int, str]:
    """The v a schedule runs with (the slider's, clamped to what it allows) and a note why."""
    lo, hi = pl.SCHEDULES[s].allowed_v[0], pl.SCHEDULES[s].allowed_v[-1]
    if lo == hi:
        note = "one stage per rank, v unused" if hi == 1 else f"V placement, v forced to {hi}"
    else:
        note = f"needs v ≥ {lo}, runs v = {lo}" if v < lo else ""
    return min(max(v, lo), hi), note and f"{LABELS[s]}: {note}."


@st.cache_data(max_entries=64)
def _result(*key) -> pl.PipelineResult:
    return pl.simulate(*key)


@st.cache_data(max_entries=64)
def _gantt(*key) -> tuple[dict, dict]:
    """Gantt figure dict and the numbers shown beside it, for (schedule, P, M, v, F, I, W, p2p)."""
    r, cf = _result(*key), key[:-1]  # closed forms assume zero p2p latency
    return fp.gantt_figure(r), dict(
        share=r.bubble_fraction,
        ratio=r.bubble_ratio,
        span=r.span_bubble,
        idle=max(r.idle_s),
        peak=max(r.peak_activations),
        peak_stages=max(r.peak_activation_stages),
        cf_idle=pl.closed_form_idle_s(*cf),
        cf_share=pl.closed_form_bubble_share(*cf),
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
    sweeps = [_sweep(s, p, effective_v(s, v)[0], f, i, w) for s in LABELS]
    return fp.side_by_side(
        fp.bubble_vs_m_figure(sweeps, LABELS, highlight=chosen, here=here),
        fp.peak_activations_figure([_result(*k) for k in runs]),
    )


def timeline(idx: int, key: tuple, base: dict | None = None) -> dict | None:
    """Metric row, exports and Gantt for one schedule; the broken rule instead if it fails."""
    try:
        fig, n = _gantt(*key)
    except ValueError as err:
        st.error(str(err), icon="🚫")
        return None
    cols, name = st.columns(4), "_".join(map(str, key[:3]))
    diff = base and round((n["share"] - base["share"]) * 100, 1) + 0.0  # + 0.0: no "-0.0"
    for col, k in zip(cols, ("share", "ratio", "span")):
        meta, vs = pl.BUBBLE_METRICS[k], base and k == "share"
        col.metric(
            meta.label.split(" (")[0],
            f"{n[k]:.1%}",
            delta_color="inverse",
            delta=f"{diff:+.1f} pts vs first" if vs else None,
            delta_arrow="auto" if diff else "off",
            border=k == "share",
            help=f"{meta.label}: {meta.formula} ({meta.used_by}).",
        )
    cols[3].metric(
        "Peak activations",
        f"{n['peak_stages']:g} mb",
        help=f"Largest rank: {n['peak']} (chunk, micro-batch) activations held at once; "
        "mb = one micro-batch's activations for a full stage (a chunk holds 1/v).",
    )
    common.chart(fig, key=f"gantt{idx}")
    # Deferred: a file is built only when its button is clicked (megabytes at P=32, M=128).
    row = st.container(horizontal=True)
    row.download_button(
        "Chrome trace (JSON)",
        lambda: json.dumps(pl.to_chrome_trace(_result(*key))),
        f"{name}.json",
        "application/json",
        key=f"trace{idx}",
        on_click="ignore",
        icon="⬇️",
        help="Opens in ui.perfetto.dev or chrome://tracing.",
    )
    row.download_button(
        "Timeline (CSV)",
        lambda: pl.to_csv(_result(*key)),
        f"{name}.csv",
        "text/csv",
        key=f"csv{idx}",
        on_click="ignore",
        icon="⬇️",
        help="One row per op.",
    )
    return n


common.start_page(
    "Pipeline parallelism",
    "Where does a pipeline sit idle, and what do more "
    "micro-batches and smarter schedules buy — at what memory cost?",
)
c1, c2, c3, c4 = st.columns(4)
p = common.slider("P (pipeline ranks)", 2, 32, 4, key="p", where=c1)
m = common.slider("M (micro-batches per step)", 1, 128, 8, key="m", where=c2)
sched = common.select("Schedule", LABELS, "1f1b", key="sched", where=c3)
v_slider = common.slider(
    "v (model chunks per rank)",
    1,
    4,
    2,
    key="v",
    where=c4,
    help="Interleaved and Looped BFS split each rank's layers into v chunks.",
)
d1, d2, d3, d4, d5 = st.columns([1, 1, 1, 1, 1.3])
cmp = common.toggle("Compare schedules", False, key="cmp", where=d5)
sched2 = common.select("Second schedule", LABELS, "zb_h1", key="sched2", where=d5) if cmp else None
scheds = [s for s in (sched, sched2) if s]
f = common.slider("t_F forward (s)", 0.25, 4.0, 1.0, step=0.25, key="f", where=d1)
if any(pl.SCHEDULES[s].splits_backward for s in scheds):  # unsplit schedules run B = I + W
    i = common.slider("t_I input grad (s)", 0.25, 4.0, 1.0, step=0.25, key="i", where=d2)
    w = common.slider("t_W weight grad (s)", 0.25, 4.0, 1.0, step=0.25, key="w", where=d3)
else:
    i = w = common.slider("t_B backward (s)", 0.5, 8.0, 2.0, step=0.5, key="b", where=d2) / 2
    d3, d4 = d4, d3  # p2p latency takes the free third column
lat = common.slider(
    "p2p latency (s)",
    0.0,
    2.0,
    0.0,
    step=0.05,
    key="lat",
    where=d4,
    help="Added to every send between ranks; the closed forms assume 0.",
)
runs = [(s, p, m, effective_v(s, v_slider)[0], f, i, w, lat) for s in scheds]
if notes := " ".join(dict.fromkeys(effective_v(s, v_slider)[1] for s in scheds)).strip():
    c4.caption(notes)

st.subheader("Timeline: who waits, and when")
st.caption(
    "Grey = idle. F blue, B orange, I teal, W green; later chunks lighter; an overlapped "
    "F&B pair shares one slot. Hover a box for details. Metric A (boxed) is plotted below."
)
n = timeline(0, runs[0])
n2 = timeline(1, runs[1], n) if cmp else None

st.subheader("What more micro-batches buy, and what they cost in memory")
# Memory beside the bubble: GPipe holds M on every rank, 1F1B P − r (the reason 1F1B exists).
shown = [("gpipe", p, m, 1, f, i, w, lat), ("1f1b", p, m, 1, f, i, w, lat)]
shown += [k for k, res in zip(runs, (n, n2)) if res and k[0] not in {s[0] for s in shown}]
common.chart(
    _m_and_memory(p, f, i, w, v_slider, sched, n and (m, n["share"]), tuple(dict.fromkeys(shown))),
    key="m_and_memory",
)

common.takeaway(
    "The bubble is the pipe filling and draining: ~(P−1) stage-times per rank whatever M is, so "
    "more micro-batches shrink its share. 1F1B keeps GPipe's bubble but holds P−r activations, not "
    "M; interleaving divides it by v for v× the sends; zero-bubble schedules fill it with deferred "
    "weight-gradient work, the V shapes at up to 2× activations."
)

st.subheader("How this is computed")
st.markdown(
    "Each rank runs its schedule's op list in order (no idle slots in the lists); an event "
    "simulator starts each op at max(rank free, dependencies done). **F(s, mb)** needs "
    "F(s−1, mb); **B or I(s, mb)** needs its own F(s, mb) and B/I(s+1, mb); **W(s, mb)** needs "
    "I(s, mb). A send between ranks adds the p2p latency. Idle per rank = makespan T − busy time; "
    "an activation is held from the start of its F to the end of its B (or W when split)."
)
st.latex(
    r"\begin{gathered} A = \frac{\sum_r \text{idle}_r}{P\,T} \approx \frac{\text{idle}}"
    r"{M\,(t_F + t_B) + \text{idle}} \\[6pt] \text{GPipe, 1F1B: idle} = (P-1)(t_F+t_B) "
    r"\;\Rightarrow\; A = \frac{P-1}{M+P-1} \end{gathered}"
)
cf = pl.CLOSED_FORMS[sched]
st.markdown(
    f"**{LABELS[sched]}** closed form: idle per rank = {cf.idle}; assumes {cf.assumes} "
    f"and zero p2p latency ({cf.source})."
)
if n and n["cf_share"] is None:
    st.info(
        "The closed form's assumptions do not hold at these settings: only the simulation "
        f"applies (simulated A = {n['share']:.2%})."
    )
elif n:
    gap = "The gap is the p2p latency, which the formula ignores." if lat else ""
    st.markdown(
        f"| | idle per rank | A |\n|---|---|---|\n| closed form | {n['cf_idle']:.4g} s "
        f"| {n['cf_share']:.3%} |\n| simulated (largest rank) | {n['idle']:.4g} s "
        f"| {n['share']:.3%} |\n\n{gap}"
    )

st.subheader("Self-check")
for mm in (8, 64):
    answer = _result("1f1b", 8, mm, 1, 1.0, 1.0, 1.0, 0.0).bubble_fraction
    common.self_check(
        f"1F1B with P = 8 and M = {mm}: bubble fraction A",
        100 * answer,
        key=f"q{mm}",
        rel_tol=0.01,
        unit="%",
        explanation=f"(P−1)/(M+P−1) = {8 - 1}/{mm + 8 - 1}.",
    )
common.show_url_notices()
