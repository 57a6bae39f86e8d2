"""Reliability at scale: job MTBF, checkpoint interval and goodput, stragglers, useful devices."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from app_pages import common
from core import reliability as rel
from core.data_parallel import straggler_curve
from core.model import MODEL_PRESETS
from core.pipeline import simulate
from core.training import RECIPES
from core.units import gib_or_gb
from figures import reliability as fig
from figures.reliability import text as text
from figures.reliability.text import MIN_S


@dataclass(frozen=True, kw_only=True)
class Job:
    """The run's controls in SI units: the cache key of its failure and checkpoint plan."""

    gpus: int
    mtbf_h: float
    days: int
    restart_s: float
    model: str
    recipe: str
    contents: str
    bw_bytes_per_s: float
    tau_s: float


@st.cache_data(max_entries=64)
def _plan(job: Job) -> dict:
    """Failures, checkpoint, goodput curve, Monte Carlo and their figures for one configuration."""
    fails = lambda n, t=job.days * rel.DAY_S: rel.interruptions(  # noqa: E731
        num_gpus=n, run_s=t, gpu_mtbf_s=job.mtbf_h * rel.HOUR_S
    )
    run, what = fails(job.gpus), dict(recipe=job.recipe, contents=job.contents)
    model, write = MODEL_PRESETS[job.model], job.bw_bytes_per_s
    ck = rel.checkpoint(model=model, write_bandwidth_bytes_per_s=write, **what)
    kw = dict(checkpoint_s=ck.write_s, restart_s=job.restart_s, mtbf_s=run.job_mtbf_s)
    if why := rel.degenerate(**kw):  # a sentence, not a broken chart
        raise ValueError(why)
    curve, mine = rel.goodput_curve(**kw), rel.waste(interval_s=job.tau_s, **kw)
    mc, mc_error = [], None  # ~1 ms per point: every 16th curve point plus the user's interval
    for i, tau in enumerate([p.interval_s for p in curve.points[::16]] + [job.tau_s]):
        try:  # a point that cannot finish is skipped; the page warns with the core's reason
            mc.append(rel.simulate_goodput(interval_s=tau, run_work_s=run.run_s, seed=i, **kw))
        except ValueError as err:
            mc_error = str(err)
    scale = [fails(2**k) for k in range(3, 16)]  # fixed x: the chart does not redraw as N moves
    return dict(
        run=run,
        ck=ck,
        curve=curve,
        mine=mine,
        mc=mc,
        mc_error=mc_error,
        llama=fails(rel.LLAMA3_GPUS, rel.LLAMA3_SNAPSHOT_S),
        doubled=fails(2 * job.gpus),
        goodput_fig=fig.goodput_figure(curve, mc, mine),
        waste_fig=fig.waste_figure(curve),
        scale_fig=fig.interruptions_figure(scale),
    )


@st.cache_data(max_entries=64)
def _stragglers(jitter_pct: int) -> dict:
    """Closed form beside a 32-step Monte Carlo per rank count (~100 ms once per jitter value)."""
    ranks = tuple(2**k for k in range(16))  # 1 .. 32,768: the GPU slider's range
    curve = straggler_curve(
        rank_counts=ranks, mean_step_s=1.0, jitter_s=jitter_pct / 100, num_trials=32
    )
    return fig.stragglers_figure(curve)


@st.cache_data(max_entries=64)
def _useful(gpus: int, jitter_pct: int, pp: int, mb: int, goodput: float) -> tuple:
    """Bubble of a simulated 1F1B schedule, straggler slowdown at N ranks, and the useful GPUs."""
    bubble = simulate("1f1b", pp, mb).bubble_fraction
    slow = straggler_curve(
        rank_counts=(gpus,), mean_step_s=1.0, jitter_s=jitter_pct / 100, num_trials=2
    ).slowdown[0]  # the closed form; 2 trials keep the MC trivial
    ud = rel.useful_devices(
        num_gpus=gpus, bubble_fraction=bubble, straggler_slowdown=slow, goodput=goodput
    )
    return bubble, slow, ud, fig.useful_devices_figure(ud)


common.start_page(
    "Reliability",
    "A week-long run on thousands of GPUs is a reliability problem — "
    "what does it cost, and how often should it checkpoint?",
)
common.walk("reliability")
bw_unit, bw_size = gib_or_gb(common.settings().bandwidth_units)
c = [cell for _ in range(3) for cell in st.columns(4)]  # three rows of four controls
gpus = common.slider("GPUs", 16, 32_768, rel.LLAMA3_GPUS, key="gpus", step=16, where=c[0])
tip = "Default: Llama 3's observed rate (see below)."
mtbf0, hours = rel.LLAMA3_GPU_MTBF_S / rel.HOUR_S, dict(step=1_000.0, fmt="%.0f", where=c[1])
mtbf_h = common.number("Per-GPU MTBF (hours)", 1_000.0, 1e7, mtbf0, key="mtbf", help=tip, **hours)
days = common.slider("Run length (days)", 1, 90, 7, key="days", where=c[2])
restart_min = common.slider("Restart + reload (min)", 0, 60, 10, key="restart", where=c[3])
models, recipes = {m: m for m in MODEL_PRESETS}, {r: RECIPES[r].label for r in RECIPES}
model = common.select("Model", models, "Llama-3.1 405B", key="model", where=c[4])
recipe = common.select("Precision recipe", recipes, "mixed_adam", key="recipe", where=c[5])
holds = common.same(rel.CHECKPOINT_CONTENTS)
contents = common.select("Checkpoint holds", holds, "weights+optimizer", key="ckpt", where=c[6])
tip, rate = "Aggregate rate a blocking save sees.", dict(step=10.0, fmt="%.1f", where=c[7])
bw = common.number(f"Write bandwidth ({bw_unit}/s)", 0.0, 1e5, 100.0, key="wbw", help=tip, **rate)
tau_min = common.slider("Checkpoint every τ (min)", 1, 240, 30, key="tau", where=c[8])
jitter = common.slider("Step-time jitter σ (% of step)", 0, 30, 5, key="jit", where=c[9])
stages = common.same((1, 2, 4, 8, 16))
pp = int(common.select("Pipeline stages P (1F1B)", stages, "8", key="pp", where=c[10]))
mb = common.slider("Micro-batches per step", 1, 128, 32, key="mb", where=c[11])

sizes = dict(gpus=gpus, mtbf_h=mtbf_h, days=days, model=model, recipe=recipe, contents=contents)
rates = dict(restart_s=restart_min * MIN_S, bw_bytes_per_s=bw * bw_size, tau_s=tau_min * MIN_S)
job = Job(**sizes, **rates)
if bw <= 0:  # the widget's own minimum: a checkpoint never finishes
    st.warning(text.NO_WRITE, icon="⚠️")
    common.show_url_notices()
    st.stop()
with common.explain_errors():
    r = _plan(job)
    bubble, slow, ud, ud_fig = _useful(gpus, jitter, pp, mb, r["mine"].goodput)
    strag_fig = _stragglers(jitter)
run, ck, curve, mine = r["run"], r["ck"], r["curve"], r["mine"]
common.metrics(text.failure_metrics(run, ck, days, common.settings().memory_units))
st.info(text.llama_info(r["llama"]), icon="🦙")
st.subheader("How often should it checkpoint?")
mc_mine = next((m for m in r["mc"] if m.interval_s == mine.interval_s), None)
common.metrics(text.interval_metrics(curve, mine, mc_mine, tau_min))
if short := text.short_interval_warning(mine, ck, curve):
    st.warning(short, icon="⚠️")
if r["mc_error"]:
    st.warning(f"Some Monte Carlo points were skipped: {r['mc_error']}", icon="⚠️")
common.charts((r["goodput_fig"], "goodput"))
common.charts((r["waste_fig"], "waste"), (r["scale_fig"], "scale"))
st.subheader("Stragglers, and the GPUs doing useful work")
common.charts((strag_fig, "stragglers"), (ud_fig, "useful"))

common.takeaway(text.takeaway(gpus, run, days, curve, ud))
common.how_computed(text.how_computed(job, r, slow=slow, ud=ud, bubble=bubble, pp=pp, mb=mb))
common.self_checks(text.self_checks(gpus, ck, curve, r["doubled"]), heading=False)
common.show_url_notices()
