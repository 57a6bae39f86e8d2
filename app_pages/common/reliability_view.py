"""The reliability page's cached builders and its stragglers-and-useful-GPUs section, an
`st.fragment`: its jitter, P and micro-batch controls rerun only that section. Kept apart from
app_pages/reliability.py (its line budget; and the cached builders are made once per process here,
not once per page run).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from app_pages import common
from app_pages.common.fold import cells
from core import reliability as rel
from core.data_parallel import straggler_curve
from core.model import MODEL_PRESETS
from core.pipeline import simulate
from figures import reliability as fig
from figures.reliability import text as text


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


def _kw(job: Job) -> tuple[dict, rel.Interruptions, rel.Checkpoint]:
    """The goodput model's inputs (δ, R, M), the run's failures and its checkpoint."""
    run = rel.interruptions(
        num_gpus=job.gpus, run_s=job.days * rel.DAY_S, gpu_mtbf_s=job.mtbf_h * rel.HOUR_S
    )
    model, what = MODEL_PRESETS[job.model], dict(recipe=job.recipe, contents=job.contents)
    ck = rel.checkpoint(model=model, write_bandwidth_bytes_per_s=job.bw_bytes_per_s, **what)
    return dict(checkpoint_s=ck.write_s, restart_s=job.restart_s, mtbf_s=run.job_mtbf_s), run, ck


# Cached as resources (one shared object per key, never mutated: common.chart and
# figures.theme.presenter copy before changing a figure): a cache_data hit unpickles a copy.
@st.cache_resource(max_entries=64, show_spinner=False)
def _base(job: Job) -> dict:
    """Everything τ does not change (keyed with τ = 0): failures, checkpoint, the goodput curve
    and its Monte Carlo points (~1 ms each: every 16th curve point), the waste and scale charts."""
    fails = lambda n, t=job.days * rel.DAY_S: rel.interruptions(  # noqa: E731
        num_gpus=n, run_s=t, gpu_mtbf_s=job.mtbf_h * rel.HOUR_S
    )
    kw, run, ck = _kw(job)
    if why := rel.degenerate(**kw):  # a sentence, not a broken chart
        raise ValueError(why)
    curve = rel.goodput_curve(**kw)
    mc, mc_error = [], None
    for i, tau in enumerate([p.interval_s for p in curve.points[::16]]):
        try:  # a point that cannot finish is skipped; the page warns with the core's reason
            mc.append(rel.simulate_goodput(interval_s=tau, run_work_s=run.run_s, seed=i, **kw))
        except ValueError as err:
            mc_error = str(err)
    scale = [fails(2**k) for k in range(3, 16)]  # fixed x: the chart does not redraw as N moves
    return dict(
        run=run,
        ck=ck,
        curve=curve,
        mc=mc,
        mc_error=mc_error,
        llama=fails(rel.LLAMA3_GPUS, rel.LLAMA3_SNAPSHOT_S),
        doubled=fails(2 * job.gpus),
        waste_fig=fig.waste_figure(curve),
        scale_fig=fig.interruptions_figure(scale),
    )


@st.cache_resource(max_entries=64, show_spinner=False)
def plan(job: Job) -> dict:
    """The base plan plus what τ changes: the waste at τ, its Monte Carlo and the goodput chart."""
    base = _base(replace(job, tau_s=0.0))
    kw, run, _ = _kw(job)
    mine, mc, mc_error = rel.waste(interval_s=job.tau_s, **kw), list(base["mc"]), base["mc_error"]
    seed = len(base["curve"].points[::16])  # the seed the user's point always had
    try:
        mc.append(rel.simulate_goodput(interval_s=job.tau_s, run_work_s=run.run_s, seed=seed, **kw))
    except ValueError as err:
        mc_error = str(err)
    goodput_fig = fig.goodput_figure(base["curve"], mc, mine)
    return base | dict(mine=mine, mc=mc, mc_error=mc_error, goodput_fig=goodput_fig)


@st.cache_resource(max_entries=64, show_spinner=False)
def _stragglers(jitter_pct: int) -> dict:
    """Closed form beside a 32-step Monte Carlo per rank count (~100 ms once per jitter value)."""
    ranks = tuple(2**k for k in range(16))  # 1 .. 32,768: the GPU slider's range
    curve = straggler_curve(
        rank_counts=ranks, mean_step_s=1.0, jitter_s=jitter_pct / 100, num_trials=32
    )
    return fig.stragglers_figure(curve)


@st.cache_resource(max_entries=64, show_spinner=False)
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


def useful_section(gpus: int, goodput: float) -> None:
    """Jitter, pipeline P and micro-batches beside the stragglers and useful-GPU charts and their
    formulas: a fragment, so these three controls rerun only this section (their numbers appear
    nowhere else on the page)."""

    @st.fragment
    def section() -> None:
        common.sections.follow_page()  # args from a page run that finished
        st.subheader("Stragglers, and the GPUs doing useful work")
        c = cells(3)
        jitter = common.slider("Step-time jitter σ (% of step)", 0, 30, 5, key="jit", where=c[0])
        stages = common.same((1, 2, 4, 8, 16))
        pp = int(common.select("Pipeline stages P (1F1B)", stages, "8", key="pp", where=c[1]))
        mb = common.slider("Micro-batches per step", 1, 128, 32, key="mb", where=c[2])
        with common.explain_errors():
            bubble, slow, ud, ud_fig = _useful(gpus, jitter, pp, mb, goodput)
            strag_fig = _stragglers(jitter)
        common.charts((strag_fig, "stragglers"), (ud_fig, "useful"))
        blocks = text.useful_computed(slow=slow, ud=ud, bubble=bubble, pp=pp, mb=mb)
        common.how_computed(blocks, expander=True)

    section()
