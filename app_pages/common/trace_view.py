"""The plan-vs-trace page's cached builders (created once per process, not on every rerun), its
folded plan controls (issue 15: the first chart above the fold at 1440×900) and the plan section:
an `st.fragment` (issue 18), so a plan control reruns the plan, its chart and its numbers, never
the trace's chart and tables (app_pages/common/sections.py).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import streamlit as st

from app_pages import common
from app_pages.common import sections
from app_pages.common.fold import cells, folded, peek
from core import traces as tx
from figures import trace as ft
from figures import trace_plan as fp
from figures import trace_text as tt

DEMO_DIR = Path(__file__).resolve().parents[2] / "data" / "traces"


@st.cache_data(max_entries=16, show_spinner=False)
def demo_files(pattern: str) -> tuple[tuple[str, bytes], ...]:
    return tuple((p.name, p.read_bytes()) for p in sorted(DEMO_DIR.glob(pattern)))


@st.cache_data(max_entries=16, show_spinner=False)
def analyse(files: tuple[tuple[str, bytes], ...], upload: bool) -> tx.TraceAnalysis:
    """One trace per rank (else by position); uploads read in a capped child process."""
    if upload:
        return tx.load_isolated(files, analysed=True)
    return tx.analyze([tx.load_trace(d, name=n, default_rank=i) for i, (n, d) in enumerate(files)])


plan = st.cache_data(max_entries=64, show_spinner=False)(fp.dp_run)
layout_plan = st.cache_data(max_entries=64, show_spinner=False)(fp.layout_run)


def _summary(which: str, fit: bool, demo_params: float, demo_bucket: str) -> str:
    """The folded controls' one-line label, from this run's values (session, URL or default)."""
    if which == "layout":
        keys = (("lm", fp.MODELS[0]), ("ldp", 2), ("ltp", 1), ("lpp", 1), ("lgb", 16))
        m, dp, tp, pp, gb = (peek(k, d) for k, d in keys)
        return f"{m} · DP {dp} × TP {tp} × PP {pp} · global batch {gb}"
    n, params, batch = peek("n", 2), peek("params", demo_params), peek("batch", 64)
    bucket = peek("bucket", tt.BUCKETS[demo_bucket])
    rates = "" if fit else f" · {peek('gf', 40)} GFLOP/s · {peek('mbs', 300)} MB/s"
    try:  # a number input's session value is a float: 64.0 read as "64" (as the URL has it)
        params, batch = f"{float(params):,.0f}", f"{float(batch):,.0f}"
    except (TypeError, ValueError):
        pass
    return f"{n} ranks · {params} parameters · {batch} samples per rank · {bucket}{rates}"


def plan_controls(which: str, fit: bool, demo_params: float, demo_bucket: str) -> dict:
    """The plan's inputs in one closed expander labelled with their values."""
    H = tt.HELP
    with folded(_summary(which, fit, demo_params, demo_bucket), what="Plan inputs"):
        c = cells(4)
        v = dict(n=common.slider("Plan ranks", 1, 16, 2, key="n", where=c[0], help=H["n"]))
        v["params"] = common.number(  # a float shown whole: an int input cannot read "inf"
            "Model parameters",
            1.0,
            1e11,
            float(demo_params),
            key="params",
            step=1.0,
            fmt="%.0f",
            where=c[1],
            help=H["params"],
        )
        v["batch"] = common.number(
            "Samples per rank per step",
            1.0,
            1e9,
            64.0,
            key="batch",
            step=1.0,
            fmt="%.0f",
            where=c[2],
        )
        v["bucket"] = common.select("DDP bucket", tt.BUCKETS, demo_bucket, key="bucket", where=c[3])
        if not fit:
            c = cells(2)
            v["gf"] = common.slider("Compute (GFLOP/s per rank)", 1, 1000, 40, key="gf", where=c[0])
            v["mbs"] = common.slider(
                "All-reduce bus bandwidth (MB/s)", 10, 10_000, 300, key="mbs", where=c[1]
            )
        if which == "layout":
            c = cells(7)
            v["run"] = fp.LayoutRun(
                model=common.select(
                    "Model", common.same(fp.MODELS), fp.MODELS[0], key="lm", where=c[0]
                ),
                gpu=common.select("GPU", common.same(fp.GPUS), fp.GPUS[0], key="lg", where=c[1]),
                dp=common.number("DP", 1, 4096, 2, key="ldp", where=c[2]),
                tp=common.number("TP", 1, 8, 1, key="ltp", where=c[3]),
                pp=common.number("PP", 1, 64, 1, key="lpp", where=c[4]),
                global_batch=common.number("Global batch", 1, 65536, 16, key="lgb", where=c[5]),
                seq_len=common.number("Sequence", 128, 131072, 2048, key="lseq", where=c[6]),
                steps=1,
            )
    return v


@st.fragment(key="trace_plan")
def plan_section(
    an: tx.TraceAnalysis, which: str, fit: bool, demo: tuple, slots: sections.Slots
) -> None:
    """The plan's controls, the trace and plan timelines, the breakdown, the plan's numbers."""
    sections.follow_page()  # args from a page run that finished
    demo_params, demo_bucket = demo
    v = plan_controls(which, fit, demo_params, demo_bucket)
    params, batch = int(v["params"]), int(v["batch"])
    steps = max(1, min(r.steps for r in an.ranks))
    fit_rates = partial(tx.fit_rates, an, num_params=params, samples_per_rank=batch)
    rates = common.attempt(fit_rates, suffix=tt.NO_FIT, level="warning") if fit else None
    hand = (v["gf"] * 1e9, v["mbs"] * 1e6) if not fit else (40e9, 300e6)  # fit failed: defaults
    flops, bus = (rates.flops_per_s, rates.bus_bytes_per_s) if rates else hand
    if which == "layout":
        out = common.attempt(layout_plan, fp.LayoutRun(**{**v["run"].__dict__, "steps": steps}))
        if out is None:
            return
        tl, words = out
        st.caption(words)
    else:
        inputs = dict(ranks=v["n"], params=params, batch=batch, bucket=v["bucket"], steps=steps)
        if (tl := common.attempt(plan, fp.PlanInputs(**inputs, flops=flops, bus=bus))) is None:
            return
    warning = st.empty()  # always here: an element that comes and goes remounts the charts below
    if mismatch := fp.rank_note(tl.num_ranks, an):
        warning.warning(mismatch, icon="⚠️")
    measured, hidden_t, hidden_p = tt.summary(an, tl)
    common.metrics(tt.metrics(tl.step_s, measured, hidden_t, hidden_p))
    x_ms = ft.time_range_ms(an, tl)  # the trace's span unless the plan runs longer
    common.chart(ft.trace_figure(an, x_ms), key="trace")  # unchanged by a plan control: kept
    common.chart(ft.plan_figure(tl, x_ms), key="timeline")
    common.chart(ft.breakdown_figure(an, tl), key="breakdown")
    if an.notes:  # windows, outliers, files that do not belong together: one box, one line each
        st.warning("\n\n".join(an.notes), icon="⚠️")  # below the charts: they answer first
    common.download(
        "Simulated plan (Chrome trace JSON)",
        lambda: json.dumps(tx.timeline_trace(tl)),  # built only when clicked
        f"plan_{tl.num_ranks}_ranks.json",
        "application/json",
        key="json",
        where=slots.download,
    )
    fitted, presenting = rates is not None, common.settings().presenter  # one line on a slide
    common.takeaway(
        tt.takeaway(tl.step_s, measured, hidden_t, hidden_p, fitted, presenting),
        slot=slots.takeaway,
    )
    slots.how.markdown(tt.plan_markdown(flops, bus, rates, steps))
