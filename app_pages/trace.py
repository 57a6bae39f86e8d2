"""Plan vs trace: does the simulated plan match a real PyTorch profiler trace?"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import streamlit as st

from app_pages import common
from core import traces as tx
from figures import trace as ft
from figures import trace_plan as fp
from figures import trace_text as tt

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "traces"


@st.cache_data(max_entries=16)
def demo_files(pattern: str) -> tuple[tuple[str, bytes], ...]:
    return tuple((p.name, p.read_bytes()) for p in sorted(DEMO_DIR.glob(pattern)))


@st.cache_data(max_entries=16)
def analyse(files: tuple[tuple[str, bytes], ...], upload: bool) -> tx.TraceAnalysis:
    """One trace per rank (else by position); uploads read in a capped child process."""
    if upload:
        return tx.load_isolated(files, analysed=True)
    return tx.analyze([tx.load_trace(d, name=n, default_rank=i) for i, (n, d) in enumerate(files)])


plan = st.cache_data(max_entries=64)(fp.dp_run)
layout_plan = st.cache_data(max_entries=64)(fp.layout_run)


common.start_page("Plan vs trace", "Does the simulated plan match a real profiler trace?")
c, H = st.columns(4), tt.HELP
demo = common.toggle("Demo trace", True, key="demo", where=c[0], help=H["demo"])
src = common.select("Demo", tt.DEMO_LABELS, "a100", key="src", where=c[1], help=H["src"])
which = common.select("Plan", fp.PLANS, "dp", key="plan", where=c[2], help=H["plan"])
fit = common.toggle("Fit rates", True, key="fit", where=c[3], help=H["fit"])
glob, demo_params, demo_bucket = tt.DEMOS[src]
n = common.slider("Plan ranks", 1, 16, 2, key="n", where=(c := st.columns(4))[0], help=H["n"])
params = common.number(  # a float shown whole: an int number_input cannot read "inf" in a URL
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
batch = common.number(
    "Samples per rank per step", 1.0, 1e9, 64.0, key="batch", step=1.0, fmt="%.0f", where=c[2]
)
params, batch = int(params), int(batch)
bucket = common.select("DDP bucket", tt.BUCKETS, demo_bucket, key="bucket", where=c[3])
if not fit:
    c = st.columns(2)
    gf = common.slider("Compute (GFLOP/s per rank)", 1, 1000, 40, key="gf", where=c[0])
    mbs = common.slider("All-reduce bus bandwidth (MB/s)", 10, 10_000, 300, key="mbs", where=c[1])
if which == "layout":
    c = st.columns(7)
    run = fp.LayoutRun(
        model=common.select("Model", common.same(fp.MODELS), fp.MODELS[0], key="lm", where=c[0]),
        gpu=common.select("GPU", common.same(fp.GPUS), fp.GPUS[0], key="lg", where=c[1]),
        dp=common.number("DP", 1, 4096, 2, key="ldp", where=c[2]),
        tp=common.number("TP", 1, 8, 1, key="ltp", where=c[3]),
        pp=common.number("PP", 1, 64, 1, key="lpp", where=c[4]),
        global_batch=common.number("Global batch", 1, 65536, 16, key="lgb", where=c[5]),
        seq_len=common.number("Sequence", 128, 131072, 2048, key="lseq", where=c[6]),
        steps=1,
    )
if demo:
    files = demo_files(glob)
else:
    uploads = st.file_uploader(
        tt.UPLOAD, type=["json", "gz"], accept_multiple_files=True, max_upload_size=25, key="files"
    )
    files = tuple((f.name, f.getvalue()) for f in uploads or [])
if not files:
    st.info(tt.NO_FILES, icon="📂")
    common.show_url_notices()
    st.stop()
with common.explain_errors():
    an = analyse(files, not demo)
if an.notes:  # windows, outliers, files that do not belong together: one box, one line each
    st.warning("\n\n".join(an.notes), icon="⚠️")
steps = max(1, min(r.steps for r in an.ranks))
fit_rates = partial(tx.fit_rates, an, num_params=params, samples_per_rank=batch)
rates = common.attempt(fit_rates, suffix=tt.NO_FIT, level="warning") if fit else None  # → defaults
hand = (gf * 1e9, mbs * 1e6) if not fit else (40e9, 300e6)
flops, bus = (rates.flops_per_s, rates.bus_bytes_per_s) if rates else hand
with common.explain_errors():
    if which == "layout":
        tl, words = layout_plan(fp.LayoutRun(**{**run.__dict__, "steps": steps}))
        st.caption(words)
    else:
        tl = plan(
            fp.PlanInputs(
                ranks=n,
                params=params,
                batch=batch,
                bucket=bucket,
                flops=flops,
                bus=bus,
                steps=steps,
            )
        )
if mismatch := fp.rank_note(tl.num_ranks, an):
    st.warning(mismatch, icon="⚠️")

measured, hidden_t, hidden_p = tt.summary(an, tl)
common.metrics(tt.metrics(tl.step_s, measured, hidden_t, hidden_p))
common.chart(ft.timeline_figure(an, tl), key="timeline")
common.chart(ft.breakdown_figure(an, tl), key="breakdown")

st.subheader("Per rank")
table = tx.analysis_table(an)
common.dataframe(tt.rank_rows(table), tt.RANK_COLUMNS)
st.caption(tt.rank_caption(an, steps))
st.caption("What counted as communication (names as in the file):")
common.dataframe(tt.comm_rows(an), tt.COMM_COLUMNS)
row = st.container(horizontal=True)
common.download(
    "Analysis (CSV)", table.to_csv(index=False), "trace_analysis.csv", key="csv", where=row
)
common.download(
    "Simulated plan (Chrome trace JSON)",
    lambda: json.dumps(tx.timeline_trace(tl)),  # built only when clicked
    f"plan_{tl.num_ranks}_ranks.json",
    "application/json",
    key="json",
    where=row,
)
st.markdown(tt.PERFETTO)

common.takeaway(tt.takeaway(tl.step_s, measured, hidden_t, hidden_p, fitted=rates is not None))
with st.expander("How this is computed", expanded=True):
    st.markdown(tt.trace_markdown(an))
    st.latex(tt.IDLE_LATEX)
    st.markdown(tt.plan_markdown(flops, bus, rates, steps))
    st.latex(tt.RATES_LATEX)

st.subheader("Self-check")
common.self_check(**tt.self_check(an))
common.show_url_notices()
