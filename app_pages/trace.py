"""Plan vs trace: does the simulated data-parallel plan match a real PyTorch profiler trace?"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import streamlit as st

from app_pages import common
from core import traces as tx
from figures import trace as ft
from figures import trace_text as tt

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "traces"


@dataclass(frozen=True, kw_only=True)
class PlanInputs:
    """What the simulated plan depends on (the cache's key)."""

    ranks: int
    params: int
    batch: int  # samples per rank per step
    bucket: str  # MiB, or "none"
    flops: float  # per rank, FLOP/s
    bus: float  # all-reduce bus bandwidth, bytes/s
    steps: int


@st.cache_data(max_entries=16)
def demo_files() -> tuple[tuple[str, bytes], ...]:
    return tuple((p.name, p.read_bytes()) for p in sorted(DEMO_DIR.glob("ddp_gloo_rank*.json.gz")))


@st.cache_data(max_entries=16)
def analyse(files: tuple[tuple[str, bytes], ...]) -> tx.TraceAnalysis:
    """One trace per rank; a file without distributedInfo.rank takes its upload position."""
    return tx.analyze(
        [tx.load_trace(data, name=name, default_rank=i) for i, (name, data) in enumerate(files)]
    )


@st.cache_data(max_entries=64)
def plan(p: PlanInputs):
    return tx.dp_plan(
        p.ranks,
        num_params=p.params,
        samples_per_rank=p.batch,
        flops_per_s=p.flops,
        bus_bytes_per_s=p.bus,
        bucket_bytes=None if p.bucket == "none" else int(p.bucket) * 2**20,
        steps=p.steps,
    )


common.start_page("Plan vs trace", "Does the simulated plan match a real profiler trace?")
c, H = st.columns(4), tt.HELP
n = common.slider("Plan ranks", 1, 16, 2, key="n", where=c[0], help=H["n"])
# Float inputs shown as whole numbers: Streamlit's int number_input cannot read "inf" from a URL.
params = common.number(
    "Model parameters",
    1.0,
    1e11,
    float(tt.DEMO_PARAMS),
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
bucket = common.select("DDP bucket", tt.BUCKETS, "1", key="bucket", where=c[3], help=H["bucket"])
c = st.columns(4)
demo = common.toggle("Demo trace", True, key="demo", where=c[0], help=H["demo"])
fit = common.toggle("Fit rates", True, key="fit", where=c[1], help=H["fit"])
if not fit:
    gf = common.slider("Compute (GFLOP/s per rank)", 1, 1000, 40, key="gf", where=c[2])
    mbs = common.slider("All-reduce bus bandwidth (MB/s)", 10, 10_000, 300, key="mbs", where=c[3])
if demo:
    files = demo_files()
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
    an = analyse(files)
steps = max(1, min(r.steps for r in an.ranks))
fit_rates = partial(tx.fit_rates, an, num_params=params, samples_per_rank=batch)
rates = common.attempt(fit_rates, suffix=tt.NO_FIT, level="warning") if fit else None  # → defaults
hand = (gf * 1e9, mbs * 1e6) if not fit else (40e9, 300e6)
flops, bus = (rates.flops_per_s, rates.bus_bytes_per_s) if rates else hand
with common.explain_errors():
    inputs = PlanInputs(
        ranks=n, params=params, batch=batch, bucket=bucket, flops=flops, bus=bus, steps=steps
    )
    step, tl = plan(inputs)

measured, hidden_t, hidden_p = tt.summary(an, step, steps)
common.metrics(tt.metrics(step, measured, hidden_t, hidden_p))
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
    f"plan_dp{n}.json",
    "application/json",
    key="json",
    where=row,
)
st.text(tt.PERFETTO)

common.takeaway(tt.takeaway(step, measured, hidden_t, hidden_p, fitted=rates is not None))
with st.expander("How this is computed", expanded=True):
    st.markdown(tt.trace_markdown(an))
    st.latex(tt.IDLE_LATEX)
    st.markdown(tt.plan_markdown(flops, bus, rates, steps))
    st.latex(tt.RATES_LATEX)

st.subheader("Self-check")
common.self_check(**tt.self_check(an))
common.show_url_notices()
