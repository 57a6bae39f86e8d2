"""Reliability at scale: job MTBF, checkpoint interval and goodput, stragglers, useful devices.

Every control feeds the goodput chart, the costs, the takeaway and the self-check's answers, so
the page's body is one `st.fragment` (issue 18): a move reruns it, not the title or the sidebar
(app_pages/common/sections.py)."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common.fold import cells
from app_pages.common.reliability_view import Job, plan, useful_section
from core import reliability as rel
from core.model import MODEL_PRESETS
from core.training import RECIPES
from core.units import gib_or_gb
from figures.reliability import text as text
from figures.reliability.text import MIN_S


def _peek(key: str, default):  # a folded control's value for the expander's label
    return st.session_state.get(key, st.query_params.get(key, default))


@st.fragment(key="rel_main")
def main_section() -> None:
    common.sections.follow_page()  # args from a page run that finished
    bw_unit, bw_size = gib_or_gb(common.settings().bandwidth_units)
    c = cells(4)  # the four controls the goodput chart answers; the checkpoint's make folds below
    gpus = common.slider("GPUs", 16, 32_768, rel.LLAMA3_GPUS, key="gpus", step=16, where=c[0])
    tip = "Default: Llama 3's observed rate (see below)."
    mtbf0 = rel.LLAMA3_GPU_MTBF_S / rel.HOUR_S
    hours = dict(step=1_000.0, fmt="%.0f", where=c[1], help=tip)
    mtbf_h = common.number("Per-GPU MTBF (hours)", 1_000.0, 1e7, mtbf0, key="mtbf", **hours)
    days = common.slider("Run length (days)", 1, 90, 7, key="days", where=c[2])
    tau_min = common.slider("Checkpoint every τ (min)", 1, 240, 30, key="tau", where=c[3])
    models, recipes = {m: m for m in MODEL_PRESETS}, {r: RECIPES[r].label for r in RECIPES}
    holds = common.same(rel.CHECKPOINT_CONTENTS)

    label = (
        f"Checkpoint and restart: {_peek('model', 'Llama-3.1 405B')} · "
        f"{_peek('recipe', recipes['mixed_adam'])} · {_peek('ckpt', 'weights+optimizer')} · "
        f"{_peek('wbw', 100.0)} {bw_unit}/s · restart {_peek('restart', 10)} min"
    )
    k = cells(5, where=st.expander(label))
    model = common.select("Model", models, "Llama-3.1 405B", key="model", where=k[0])
    recipe = common.select("Precision recipe", recipes, "mixed_adam", key="recipe", where=k[1])
    contents = common.select("Checkpoint holds", holds, "weights+optimizer", key="ckpt", where=k[2])
    tip = "Aggregate rate a blocking save sees."
    rate = dict(step=10.0, fmt="%.1f", where=k[3], help=tip)
    bw = common.number(f"Write bandwidth ({bw_unit}/s)", 0.0, 1e5, 100.0, key="wbw", **rate)
    restart_min = common.slider("Restart + reload (min)", 0, 60, 10, key="restart", where=k[4])

    sizes = dict(gpus=gpus, mtbf_h=mtbf_h, days=days, model=model, recipe=recipe, contents=contents)
    rates = dict(restart_s=restart_min * MIN_S, bw_bytes_per_s=bw * bw_size, tau_s=tau_min * MIN_S)
    job = Job(**sizes, **rates)
    if bw <= 0:  # the widget's own minimum: a checkpoint never finishes
        st.warning(text.NO_WRITE, icon="⚠️")
        return
    with common.explain_errors():
        r = plan(job)
    run, ck, curve, mine = r["run"], r["ck"], r["curve"], r["mine"]
    st.subheader("How often should it checkpoint?")
    common.chart(r["goodput_fig"], key="goodput")  # the answer first (issue 15), then numbers
    mc_mine = next((m for m in r["mc"] if m.interval_s == mine.interval_s), None)
    common.metrics(text.interval_metrics(curve, mine, mc_mine, tau_min))
    if short := text.short_interval_warning(mine, ck, curve):
        st.warning(short, icon="⚠️")
    if r["mc_error"]:
        st.warning(f"Some Monte Carlo points were skipped: {r['mc_error']}", icon="⚠️")
    st.subheader("What failures cost at this scale")
    common.metrics(text.failure_metrics(run, ck, days, common.settings().memory_units))
    st.info(text.llama_info(r["llama"]), icon="🦙")
    common.charts((r["waste_fig"], "waste"), (r["scale_fig"], "scale"))
    useful_section(gpus, mine.goodput)  # a fragment: its three controls rerun only that section

    common.takeaway(text.takeaway(gpus, run, days, curve))
    common.how_computed(text.how_computed(job, r))
    checks = text.self_checks(gpus, ck, curve, r["doubled"])
    st.fragment(common.self_checks)(checks, heading=False)  # an answer reruns only the check


common.start_page(
    "Reliability",
    "A week-long run on thousands of GPUs is a reliability problem — "
    "what does it cost, and how often should it checkpoint?",
)
common.walk("reliability")
main_section()
common.show_url_notices()
