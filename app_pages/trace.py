"""Plan vs trace: does the simulated plan match a real PyTorch profiler trace?

The plan's controls, charts and numbers are one `st.fragment` (app_pages/common/trace_view.py):
moving one reruns that section, not the trace's tables below it (issue 18)."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.fold import cells, peek
from app_pages.common.trace_view import analyse, demo_files, plan_section
from core import traces as tx
from figures import trace_plan as fp
from figures import trace_text as tt

common.start_page("Plan vs trace", "Does the simulated plan match a real profiler trace?")
c, H = cells(4), tt.HELP
demo = common.toggle("Demo trace", True, key="demo", where=c[0], help=H["demo"])
src = common.select("Demo", tt.DEMO_LABELS, "a100", key="src", where=c[1], help=H["src"])
which = common.select("Plan", fp.PLANS, "dp", key="plan", where=c[2], help=H["plan"])
fit = common.toggle("Fit rates", True, key="fit", where=c[3], help=H["fit"])
glob, demo_params, demo_bucket = tt.DEMOS[src]
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

head, rest = st.container(), st.container()
with rest:  # drawn first (the plan section writes into its slots), shown below the plan section
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
    download = row.empty()
    st.markdown(tt.PERFETTO)
    lesson = common.takeaway_slot()
    with st.expander("How this is computed", expanded=True):
        st.markdown(tt.trace_markdown(an, answered=answered))
        st.latex(tt.IDLE_LATEX)
        how = st.empty()  # the plan's lines (the plan section); its formula does not change
        st.latex(tt.RATES_LATEX)
    st.subheader("Self-check")
    common.self_check(**tt.self_check(an))
with head:
    plan_section(
        an,
        which,
        fit,
        (demo_params, demo_bucket),
        common.sections.Slots(download=download, takeaway=lesson, how=how),
    )
common.show_url_notices()
