"""The pipeline page's simulations, cached, and its timeline section (metrics, Gantt, exports),
kept apart from app_pages/pipeline.py so the page stays within its line budget.
"""

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
def simulated(run: Run) -> pl.PipelineResult:
    return pl.simulate(**asdict(run))


@st.cache_data(max_entries=64)
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


@st.cache_data(max_entries=64)
def _sweep(s: str, p: int, v: int, f: float, i: float, w: float) -> pl.BubbleSweep:
    # Powers of two; interleaved (M a multiple of P) also gets P·2^k so it has points at any P.
    ms = {2**k for k in range(8)}
    ms |= {p * 2**k for k in range(8) if p * 2**k <= 128} if s == "interleaved_1f1b" else set()
    return pl.bubble_sweep(s, p, tuple(sorted(ms)), v, f, i, w)


@st.cache_data(max_entries=64)
def m_and_memory(p: int, f: float, i: float, w: float, v: int, chosen: str, here, runs) -> dict:
    """Bubble vs M for every schedule beside peak activations per rank, as one figure."""
    sweeps = [_sweep(s, p, pl.effective_v(s, v)[0], f, i, w) for s in CHOICES]
    return fp.side_by_side(
        fp.bubble_vs_m_figure(sweeps, CHOICES, highlight=chosen, here=here),
        fp.peak_activations_figure([simulated(r) for r in runs]),
    )


def span_s(runs) -> float | None:
    """The longest makespan among the runs that simulate: compared Gantts share this time axis."""
    spans = []
    for run in runs:
        try:
            spans.append(simulated(run).makespan_s)
        except ValueError:  # that side shows its error in `timeline`
            continue
    return max(spans, default=None)


def timeline(idx: int, run: Run, base: dict | None = None, x_max: float | None = None):
    """Metric row, exports and Gantt for one schedule; the broken rule instead if it fails.
    x_max: the shared time axis of compared Gantts (the faster schedule looks shorter)."""
    if not (out := common.attempt(_gantt, run, x_max)):
        return None
    fig, n = out
    common.metrics(text.timeline_metrics(n, base))
    common.chart(fig, key=f"gantt{idx}")
    # Deferred: a file is built only when its button is clicked (megabytes at P=32, M=128).
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
    return n
