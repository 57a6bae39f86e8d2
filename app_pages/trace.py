"""Plan vs trace: does the simulated data-parallel plan match a real PyTorch profiler trace?"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from app_pages import common
from core import traces as ti
from core import traces as tx
from core.units import format_bandwidth, format_flops
from core.units import format_seconds as fs
from figures import trace as ft

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "traces"
DEMO_PARAMS = 4 * (512 * 512 + 512)  # scripts/make_demo_trace.py: 4 × Linear(512, 512), 64 samples
BUCKETS = {"1": "1 MiB", "25": "25 MiB", "none": "no buckets"}


@st.cache_data(max_entries=16)
def demo_files() -> tuple[tuple[str, bytes], ...]:
    return tuple((p.name, p.read_bytes()) for p in sorted(DEMO_DIR.glob("ddp_gloo_rank*.json.gz")))


@st.cache_data(max_entries=16)
def analyse(files: tuple[tuple[str, bytes], ...]) -> ti.TraceAnalysis:
    """One trace per rank; a file without distributedInfo.rank takes its upload position."""
    return ti.analyze(
        [ti.load_trace(data, name=name, default_rank=i) for i, (name, data) in enumerate(files)]
    )


@st.cache_data(max_entries=64)
def plan(n: int, params: int, batch: int, bucket: str, flops: float, bus: float, steps: int):
    return tx.dp_plan(
        n,
        num_params=params,
        samples_per_rank=batch,
        flops_per_s=flops,
        bus_bytes_per_s=bus,
        bucket_bytes=None if bucket == "none" else int(bucket) * 2**20,
        steps=steps,
    )


common.start_page("Plan vs trace", "Does the simulated plan match a real profiler trace?")
c = st.columns(4)
n = common.slider(
    "Plan ranks",
    1,
    16,
    2,
    key="n",
    where=c[0],
    help="Data-parallel ranks in the simulated plan (the demo trace has 2).",
)
# Float inputs shown as whole numbers: Streamlit's int number_input cannot read "inf" from a URL.
params = int(
    common.number(
        "Model parameters",
        1.0,
        1e11,
        float(DEMO_PARAMS),
        key="params",
        step=1.0,
        fmt="%.0f",
        where=c[1],
        help="The demo's MLP: 4 × (512² + 512) = 1,050,624.",
    )
)
batch = int(
    common.number(
        "Samples per rank per step", 1.0, 1e9, 64.0, key="batch", step=1.0, fmt="%.0f", where=c[2]
    )
)
bucket = common.select(
    "DDP bucket",
    BUCKETS,
    "1",
    key="bucket",
    where=c[3],
    help="The demo ran DDP(bucket_cap_mb=1); PyTorch's default is 25 MiB.",
)
c = st.columns(4)
demo = common.toggle(
    "Demo trace",
    True,
    key="demo",
    where=c[0],
    help="Two CPU processes, DDP over gloo, 3 steps (scripts/make_demo_trace.py).",
)
fit = common.toggle(
    "Fit rates",
    True,
    key="fit",
    where=c[1],
    help="Give the plan the trace's achieved FLOP/s and all-reduce bandwidth, so it tests "
    "the schedule (overlap, exposed communication) rather than hardware numbers.",
)
if not fit:
    gf = common.slider("Compute (GFLOP/s per rank)", 1, 1000, 40, key="gf", where=c[2])
    mbs = common.slider("All-reduce bus bandwidth (MB/s)", 10, 10_000, 300, key="mbs", where=c[3])
files = (
    demo_files()
    if demo
    else tuple(
        (f.name, f.getvalue())
        for f in st.file_uploader(
            "Profiler traces: one .json or .json.gz per rank (prof.export_chrome_trace)",
            type=["json", "gz"],
            accept_multiple_files=True,
            max_upload_size=25,
            key="files",
        )
        or []
    )
)
if not files:
    st.info("Upload one trace per rank, or turn the demo trace back on.", icon="📂")
    common.show_url_notices()
    st.stop()
with common.explain_errors():
    an = analyse(files)
steps = max(1, min(r.steps for r in an.ranks))
rates = None
if fit:
    try:
        rates = tx.fit_rates(an, num_params=params, samples_per_rank=batch)
    except ValueError as err:
        st.warning(f"{err}. Showing the plan at 40 GFLOP/s and 300 MB/s.", icon="⚠️")
flops, bus = (
    (rates.flops_per_s, rates.bus_bytes_per_s)
    if rates
    else ((gf * 1e9, mbs * 1e6) if not fit else (40e9, 300e6))
)
with common.explain_errors():
    step, tl = plan(n, params, batch, bucket, flops, bus, steps)

measured = sum(r.span_s for r in an.ranks) / len(an.ranks) / steps
hidden_t = sum(r.overlap_s for r in an.ranks) / max(sum(r.comm_s for r in an.ranks), 1e-30)
hidden_p = step.hidden_comm_s / step.comm_s if step.comm_s > 0 else 0.0
m = st.columns(4)
m[0].metric(
    "Step time: trace",
    fs(measured),
    help="Mean traced span per rank ÷ profiled steps.",
    border=True,
)
m[1].metric(
    "Step time: plan",
    fs(step.step_s),
    f"{step.step_s / measured - 1:+.0%} vs trace",
    delta_color="off",
    border=True,
)
m[2].metric(
    "Comm hidden: trace",
    f"{hidden_t:.0%}",
    help="Share of communication time overlapped with compute: |compute ∩ comm| / |comm|.",
)
m[3].metric(
    "Comm hidden: plan",
    f"{hidden_p:.0%}",
    help="Share of the bucket all-reduces that run during backward.",
)
common.chart(ft.timeline_figure(an, tl), key="timeline")
common.chart(ft.breakdown_figure(an, tl), key="breakdown")

st.subheader("Per rank")
table = tx.analysis_table(an)
ms = ("span_s", "compute_s", "comm_s", "overlap_s", "idle_s")
st.dataframe(
    table[["rank", "file", *ms]].assign(**{k: table[k] * 1e3 for k in ms}),
    hide_index=True,
    width="stretch",
    column_config={k: st.column_config.NumberColumn(k[:-2] + " (ms)", format="%.3f") for k in ms},
)
st.caption(
    f"{an.ranks[0].source} · {steps} profiled step{'s' * (steps > 1)} · ms of the traced span."
)
st.caption("What counted as communication (names as in the file):")
st.dataframe(
    pd.DataFrame(
        [
            dict(rank=r.rank, op=name, count=k, ms=us / 1e3)
            for r in an.ranks
            for name, k, us in r.comm_names
        ]
    ),
    hide_index=True,
    width="stretch",
    column_config={"ms": st.column_config.NumberColumn("total (ms, summed)", format="%.3f")},
)
row = st.container(horizontal=True)
row.download_button(
    "Analysis (CSV)",
    table.to_csv(index=False),
    "trace_analysis.csv",
    "text/csv",
    key="csv",
    on_click="ignore",
    icon="⬇️",
)
row.download_button(
    "Simulated plan (Chrome trace JSON)",
    lambda: json.dumps(tx.timeline_trace(tl)),
    f"plan_dp{n}.json",
    "application/json",
    key="json",
    on_click="ignore",
    icon="⬇️",
)
st.text("Open the JSON in https://ui.perfetto.dev or chrome://tracing: one track per rank.")

gap = step.step_s / measured - 1
common.takeaway(
    f"Fitted to the trace's own compute and all-reduce rates, the plan's step is {fs(step.step_s)} "
    "against "
    f"{fs(measured)} measured ({gap:+.0%}). The fit fixes the totals, so the real test is the "
    "schedule: "
    f"the trace hid {hidden_t:.0%} of its communication behind compute, the plan {hidden_p:.0%}. "
    "What the "
    "plan leaves out — idle gaps (Python, the optimizer) and compute and gloo threads sharing the "
    "same "
    "cores — is the rest of the gap."
    if rates
    else f"At hand-set rates the plan predicts {fs(step.step_s)} per step against {fs(measured)} "
    "measured "
    f"({gap:+.0%}): fit the rates to the trace to test the schedule rather than the hardware "
    "numbers."
)

with st.expander("How this is computed", expanded=True):
    r0 = an.ranks[0]
    st.markdown(
        "**Trace.** Per rank, *comm* = the union of intervals of collectives (names with nccl, "
        "gloo, "
        "c10d, all_reduce, all_gather, reduce_scatter, broadcast, send/recv, record_param_comms), "
        "and "
        f"*compute* = the union of {r0.source} minus, on each thread, that thread's collectives "
        "(nested "
        f"ops count once). With GPU kernels present only kernels count, as in HTA. Rank {r0.rank}: "
        f"span {fs(r0.span_s)}, compute {fs(r0.compute_s)}, comm {fs(r0.comm_s)}, overlap "
        f"{fs(r0.overlap_s)}, idle {fs(r0.idle_s)}."
    )
    st.latex(r"\text{idle} = \text{span} - |C \cup M| = \text{span} - (|C| + |M| - |C \cap M|)")
    st.markdown(
        f"**Plan.** `dp_step` with compute = 6·N·B / FLOP/s (forward ⅓, backward ⅔), gradients of "
        f"4 B/parameter in buckets ready evenly through backward, each all-reduced by a ring in "
        f"2(p−1)/p · bytes / bus bandwidth. Rates used: {format_flops(flops)}/s per rank and "
        f"{format_bandwidth(bus, 'decimal')} bus bandwidth"
        + (
            f", fitted from {fs(rates.compute_per_step_s)} of compute and "
            f"{fs(rates.comm_per_step_s)} of "
            f"collectives per step over {steps} steps."
            if rates
            else "."
        )
    )
    st.latex(
        r"\text{FLOP/s} = \frac{6\,N\,B}{t_{\text{compute}}},\quad "
        r"\text{busbw} = \frac{2(p-1)}{p}\cdot\frac{4N}{t_{\text{comm}}}"
    )

st.subheader("Self-check")
common.self_check(
    f"Rank {r0.rank} computed for {r0.compute_s * 1e3:.3f} ms and communicated for "
    f"{r0.comm_s * 1e3:.3f} ms, {r0.overlap_s * 1e3:.3f} ms of it at the same time, over a "
    f"span of {r0.span_s * 1e3:.3f} ms. How long was it idle?",
    r0.idle_s * 1e3,
    key="q1",
    rel_tol=0.01,
    unit="ms",
    explanation="span − (compute + comm − overlap).",
)
common.show_url_notices()
