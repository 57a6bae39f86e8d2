"""Plan vs trace: does the simulated plan match a real PyTorch profiler trace?"""

from __future__ import annotations

import json
from functools import partial

import streamlit as st

from app_pages import common
from app_pages.common.fold import cells, peek
from app_pages.common.trace_view import analyse, demo_files, layout_plan, plan, plan_controls
from core import traces as tx
from figures import trace as ft
from figures import trace_plan as fp
from figures import trace_text as tt

common.start_page("Plan vs trace", "Does the simulated plan match a real profiler trace?")
c, H = cells(4), tt.HELP
demo = common.toggle("Demo trace", True, key="demo", where=c[0], help=H["demo"])
src = common.select("Demo", tt.DEMO_LABELS, "a100", key="src", where=c[1], help=H["src"])
which = common.select("Plan", fp.PLANS, "dp", key="plan", where=c[2], help=H["plan"])
fit = common.toggle("Fit rates", True, key="fit", where=c[3], help=H["fit"])
glob, demo_params, demo_bucket = tt.DEMOS[src]
v = plan_controls(which, fit, demo_params, demo_bucket)
n, params, batch, bucket = v["n"], int(v["params"]), int(v["batch"]), v["bucket"]
answered = peek("q1", None) is not None  # the per-rank idle column is the self-check's answer
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
steps = max(1, min(r.steps for r in an.ranks))
fit_rates = partial(tx.fit_rates, an, num_params=params, samples_per_rank=batch)
rates = common.attempt(fit_rates, suffix=tt.NO_FIT, level="warning") if fit else None  # → defaults
hand = (v["gf"] * 1e9, v["mbs"] * 1e6) if not fit else (40e9, 300e6)
flops, bus = (rates.flops_per_s, rates.bus_bytes_per_s) if rates else hand
with common.explain_errors():
    if which == "layout":
        tl, words = layout_plan(fp.LayoutRun(**{**v["run"].__dict__, "steps": steps}))
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
if an.notes:  # windows, outliers, files that do not belong together: one box, one line each
    st.warning("\n\n".join(an.notes), icon="⚠️")  # below the charts: they answer first

st.subheader("Per rank")
table = tx.analysis_table(an)
common.dataframe(tt.rank_rows(table, answered=answered), tt.rank_columns(answered=answered))
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

presenting = common.settings().presenter  # one line on a slide
common.takeaway(tt.takeaway(tl.step_s, measured, hidden_t, hidden_p, rates is not None, presenting))
with st.expander("How this is computed", expanded=True):
    st.markdown(tt.trace_markdown(an, answered=answered))
    st.latex(tt.IDLE_LATEX)
    st.markdown(tt.plan_markdown(flops, bus, rates, steps))
    st.latex(tt.RATES_LATEX)

st.subheader("Self-check")
common.self_check(**tt.self_check(an))
common.show_url_notices()
