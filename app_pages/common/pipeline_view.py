"""The pipeline page's simulations, cached, and its timeline section (Gantt, the "fill and drain"
time cursor, metrics, exports and the flow drawing) as one `st.fragment`: stepping the cursor
reruns only that section. Kept apart from app_pages/pipeline.py (its line budget; and the cached
builders are made once per process here, not once per page run).
"""

import json
import time
from dataclasses import asdict, dataclass

import streamlit as st

from app_pages import common
from app_pages.common.widgets import NOTICES, url_int
from core import pipeline as pl
from figures import pipeline as fp
from figures.pipeline import text as text
from figures.pipeline.drawing import pp_drawing

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


# Cached as resources (one shared object per key, never mutated: common.chart and
# figures.theme.presenter copy before changing a figure): a cache_data hit unpickles a copy of the
# value, and the timeline fragment makes several hits per cursor step (perf's board finding 2).
@st.cache_resource(max_entries=64, show_spinner=False)
def simulated(run: Run) -> pl.PipelineResult:
    return pl.simulate(**asdict(run))


@st.cache_resource(max_entries=64, show_spinner=False)
def _gantt(run: Run, x_max: float | None = None) -> tuple[dict, dict]:
    """Gantt figure dict and the numbers shown beside it."""
    r, cf = simulated(run), {k: v for k, v in asdict(run).items() if k != "p2p_s"}
    return fp.gantt_figure(r, time_range_s=x_max), dict(  # the closed forms assume zero p2p latency
        share=r.bubble_fraction,
        ratio=r.bubble_ratio,
        span=r.span_bubble,
        idle=max(r.idle_s),
        peak=max(r.peak_activations),
        peak_stages=max(r.peak_activation_stages),
        cf_idle=pl.closed_form_idle_s(**cf),
        cf_share=pl.closed_form_bubble_share(**cf),
    )


@st.cache_resource(max_entries=64, show_spinner=False)
def _sweep(s: str, p: int, v: int, f: float, i: float, w: float) -> pl.BubbleSweep:
    # Powers of two; interleaved (M a multiple of P) also gets P·2^k so it has points at any P.
    ms = {2**k for k in range(8)}
    ms |= {p * 2**k for k in range(8) if p * 2**k <= 128} if s == "interleaved_1f1b" else set()
    return pl.bubble_sweep(s, p, tuple(sorted(ms)), v, f, i, w)


@st.cache_resource(max_entries=64, show_spinner=False)
def m_and_memory(p: int, f: float, i: float, w: float, v: int, chosen: str, here, runs) -> dict:
    """Bubble vs M for every schedule beside peak activations per rank, as one figure."""
    sweeps = [_sweep(s, p, pl.effective_v(s, v)[0], f, i, w) for s in CHOICES]
    return fp.side_by_side(
        fp.bubble_vs_m_figure(sweeps, CHOICES, highlight=chosen, here=here),
        fp.peak_activations_figure([simulated(r) for r in runs]),
    )


@st.cache_resource(max_entries=64, show_spinner=False)
def _moments(runs: tuple[Run, ...]) -> list[float]:
    return fp.moments(*(simulated(r) for r in runs))


@st.cache_resource(max_entries=64, show_spinner=False)
def _flow(run: Run, t_s: float) -> dict:
    """The flow drawing at time t (a ValueError names its size limit)."""
    return pp_drawing(simulated(run), still_at_s=t_s)


@st.cache_resource(max_entries=64, show_spinner=False)
def _full(run: Run) -> float | None:
    return fp.full_at(simulated(run))


def _peek(key: str, default):
    """A widget's value before it is drawn: its state, else the URL's (if a valid number, or
    true/false for the toggle), else the default; the widget itself still rules on the value."""
    if key in st.session_state:
        return st.session_state[key]
    raw = st.query_params.get(key)
    if isinstance(default, bool):
        return raw.lower() == "true" if raw in ("true", "false", "True", "False") else default
    try:
        return float(raw) if raw is not None else default
    except ValueError:
        return default


def times_label(choices: dict[str, str]) -> str:
    """The folded controls' expander label, their values on one line (issue 15)."""
    f, lat, cmp = _peek("f", 1.0), _peek("lat", 0.0), _peek("cmp", False)
    vs = _peek("sched2", choices["zb_h1"]) if cmp else None
    firsts = [_peek("sched", choices["1f1b"])] + ([vs] if vs else [])
    split = any(pl.SCHEDULES[k].splits_backward for k, v in choices.items() if v in firsts)
    i, w = (_peek("i", 1.0), _peek("w", 1.0)) if split else (_peek("b", 2.0) / 2,) * 2
    return text.times_summary(f, i, w, lat, split, vs)


def span_s(runs) -> float | None:
    """The longest makespan among the runs that simulate: compared Gantts share this time axis."""
    spans = []
    for run in runs:
        try:
            spans.append(simulated(run).makespan_s)
        except ValueError:  # that side shows its error in `timeline`
            continue
    return max(spans, default=None)


# The time cursor: one URL-bound slider over the moments an op starts or ends (last = the whole
# step, the default), with J / L / K / End keys. The stepper of app_pages/common/widgets.py is not
# reused: its ← / → keys are this page's M ÷ 2 / M × 2, and its step opens at 0, not at the end.
T, PLAY_EVERY_S = "t", 0.7
_KEYS = [("◀ Back", "J", -1), ("Next ▶", "L", 1), ("Whole step", "End", None)]


def _press(delta: int | None) -> None:
    st.session_state.setdefault("_t_presses", []).append(delta)  # applied in order: none lost


def _dragged() -> None:
    st.session_state["_t_dragged"] = True


def _toggle_play() -> None:
    ss = st.session_state
    if not _playing() and ss.get("_t_at") == ss.get("_t_last"):  # ▶ at the end: from the start
        _press(0)
    ss["_t_playing"] = not _playing()


def _playing() -> bool:
    return bool(st.session_state.get("_t_playing", False))


def moment(last: int) -> int:
    """The moment this run shows, 0 … last. First run: the URL's, else the end. Then presses move
    it, a drag replaces it, and at the end it stays at the end when P or M move the end."""
    ss = st.session_state
    at, before = ss.get("_t_at"), ss.get("_t_last")
    presses, dragged = ss.pop("_t_presses", []), ss.pop("_t_dragged", False)
    if _playing() and time.monotonic() - ss.get("_t_ticked", 0.0) >= 0.8 * PLAY_EVERY_S:
        presses.append(1)  # one ▶ tick (guarded: a rerun for another reason does not step)
        ss["_t_ticked"] = time.monotonic()
    if at is None:
        raw, asked = st.query_params.get(T), url_int(T)
        at = asked if asked is not None and 0 <= asked <= last else last
        if raw is not None and at != asked:
            rule = f"must be a moment from 0 to {last}"
            ss.setdefault(NOTICES, []).append(f"URL value `t={raw[:20]}` was ignored ({rule}).")
    elif dragged and not presses:
        at = ss.get(T, at)
    elif at == before:
        at = last
    for delta in presses:  # None: the whole step; 0: the start (▶ pressed at the end)
        at = last if delta is None else 0 if delta == 0 else min(max(at + delta, 0), last)
    at = min(at, last)
    if at == last and _playing():
        ss["_t_playing"] = False
    ss[T] = ss["_t_at"] = at
    ss["_t_last"] = last
    return at


def _cursor_row(last: int) -> None:
    """The slider (bound to ?t=) and its buttons, under the Gantt: one horizontal row, filled left
    to right (one message, not st.columns' six: issue 18)."""
    row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")
    row.slider(
        text.CURSOR_LABEL,
        0,
        last,
        last,
        key=T,
        on_change=_dragged,
        bind="query-params",
        help=text.CURSOR_HELP,
    )
    play_label = "❚❚ Pause" if _playing() else "▶ Play"
    fit = {"width": "content"}
    for n, (label, key, delta) in enumerate(_KEYS):
        if n == 1:  # ▶ between Back and Next
            row.button(play_label, shortcut="K", on_click=_toggle_play, key="t_play", **fit)
        row.button(label, shortcut=key, on_click=_press, args=(delta,), key=f"t_{key}", **fit)


def timeline_section(runs: list[Run], x_max: float | None) -> list[dict | None]:
    """Gantt(s), the time cursor under them, the metric rows and exports, the flow drawing: one
    fragment (a cursor step or ▶ tick reruns only this). Returns each run's numbers (None where
    the schedule's rule is broken); the page's later sections use them on a full run."""
    every = PLAY_EVERY_S if _playing() else None

    @st.fragment(run_every=every)
    def section() -> list[dict | None]:
        common.sections.follow_page()  # args from a page run that finished
        if _playing() != (every is not None):  # ▶ / ❚❚ pressed: re-arm the timer
            st.rerun(scope="app")
        outs = [common.attempt(_gantt, run, x_max) for run in runs]
        ok = [(run, out) for run, out in zip(runs, outs) if out]
        if not ok:
            return [None] * len(runs)
        ts = _moments(tuple(run for run, _ in ok))
        t_s = ts[moment(len(ts) - 1)]
        for idx, (fig, _) in enumerate(out for _, out in ok):
            common.chart(fp.at_time(fig, t_s), key=f"gantt{idx}")
        _cursor_row(len(ts) - 1)
        rows = [
            (
                fp.busy_ranks(simulated(run), t_s),
                run.num_stages,
                simulated(run).makespan_s,
                _full(run),
            )
            for run, _ in ok
        ]
        st.markdown(f"**{text.cursor_caption(t_s, rows)}**")
        base = None
        for idx, (run, (_, n)) in enumerate(ok):
            if len(runs) > 1:
                st.caption(f"**{CHOICES[run.schedule]}**")
            common.metrics(text.timeline_metrics(n, base))
            _exports(idx, run)
            base = base or n
        st.caption(text.TIMELINE_CAPTION)
        first = ok[0][0]
        st.subheader("The pipe, drawn: micro-batches flowing through the stages")
        full = _full(first)
        shown_at = t_s if t_s < ts[-1] or full is None else full
        if flow := common.attempt(_flow, first, shown_at, level="warning"):
            common.chart(flow, key="pp_draw")
        return [out and out[1] for out in outs]

    return section()


def _exports(idx: int, run: Run) -> None:
    """Chrome trace and CSV of one run, built only when clicked (megabytes at P=32, M=128)."""
    row = st.container(horizontal=True)
    name = f"{run.schedule}_{run.num_stages}_{run.num_microbatches}"
    common.download(
        "Chrome trace (JSON)",
        lambda: json.dumps(pl.to_chrome_trace(simulated(run))),
        f"{name}.json",
        "application/json",
        key=f"trace{idx}",
        help="Opens in ui.perfetto.dev or chrome://tracing.",
        where=row,
    )
    common.download(
        "Timeline (CSV)",
        lambda: pl.to_csv(simulated(run)),
        f"{name}.csv",
        key=f"csv{idx}",
        help="One row per op.",
        where=row,
    )
