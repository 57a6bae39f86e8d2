"""Reliability at scale: job MTBF, checkpoint interval and goodput, stragglers, useful devices."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core import reliability as rel
from core.data_parallel import straggler_curve
from core.memory import RECIPES
from core.model import MODEL_PRESETS
from core.pipeline import simulate
from core.units import format_bytes, format_count, format_seconds, gib_or_gb
from figures import reliability as fig

MIN_S = 60.0  # the page's time controls are in minutes


@st.cache_data(max_entries=64)
def _plan(
    gpus: int,
    mtbf_h: float,
    days: int,
    restart_s: float,
    model: str,
    recipe: str,
    contents: str,
    bw_bytes_per_s: float,
    tau_s: float,
) -> dict:
    """Failures, checkpoint, goodput curve, Monte Carlo and their figures for one configuration."""
    fails = lambda n, t=days * rel.DAY_S: rel.interruptions(  # noqa: E731
        num_gpus=n, run_s=t, gpu_mtbf_s=mtbf_h * rel.HOUR_S
    )
    run = fails(gpus)
    ck = rel.checkpoint(
        model=MODEL_PRESETS[model],
        write_bandwidth_bytes_per_s=bw_bytes_per_s,
        recipe=recipe,
        contents=contents,
    )
    kw = dict(checkpoint_s=ck.write_s, restart_s=restart_s, mtbf_s=run.job_mtbf_s)
    curve, mine = rel.goodput_curve(**kw), rel.waste(interval_s=tau_s, **kw)
    mc, mc_error = [], None  # ~1 ms per point: every 16th curve point plus the user's interval
    for i, tau in enumerate([p.interval_s for p in curve.points[::16]] + [tau_s]):
        try:
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
        doubled=fails(2 * gpus),
        goodput_fig=fig.goodput_figure(curve, mc, mine),
        waste_fig=fig.waste_figure(curve),
        scale_fig=fig.interruptions_figure(scale),
    )


@st.cache_data(max_entries=64)
def _stragglers(jitter_pct: int) -> dict:
    """Closed form beside a 32-step Monte Carlo per rank count (~100 ms once per jitter value)."""
    ranks = tuple(2**k for k in range(16))  # 1 .. 32,768: the GPU slider's range
    return fig.stragglers_figure(
        straggler_curve(
            rank_counts=ranks, mean_step_s=1.0, jitter_s=jitter_pct / 100, num_trials=32
        )
    )


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


def _side_by_side(**figs: dict) -> None:
    """Charts in equal columns (keyword = chart key)."""
    for col, (key, f) in zip(st.columns(len(figs)), figs.items()):
        with col:
            common.chart(f, key=key)


common.start_page(
    "Reliability",
    "A week-long run on thousands of GPUs is a reliability problem — "
    "what does it cost, and how often should it checkpoint?",
)
bw_unit, bw_size = gib_or_gb(common.bandwidth_units())
c = [cell for _ in range(3) for cell in st.columns(4)]  # three rows of four controls
gpus = common.slider("GPUs", 16, 32_768, rel.LLAMA3_GPUS, key="gpus", step=16, where=c[0])
mtbf_h = common.number(
    "Per-GPU MTBF (hours)",
    1_000.0,
    1e7,
    rel.LLAMA3_GPU_MTBF_S / rel.HOUR_S,
    key="mtbf",
    step=1_000.0,
    fmt="%.0f",
    where=c[1],
    help="Default: Llama 3's observed rate (see below).",
)
days = common.slider("Run length (days)", 1, 90, 7, key="days", where=c[2])
restart_min = common.slider("Restart + reload (min)", 0, 60, 10, key="restart", where=c[3])
model = common.select(
    "Model", {m: m for m in MODEL_PRESETS}, "Llama-3.1 405B", key="model", where=c[4]
)
recipe = common.select(
    "Precision recipe", {r: r for r in RECIPES}, "mixed_adam", key="recipe", where=c[5]
)
contents = common.select(
    "Checkpoint holds",
    {k: k for k in rel.CHECKPOINT_CONTENTS},
    "weights+optimizer",
    key="ckpt",
    where=c[6],
)
bw = common.number(
    f"Write bandwidth ({bw_unit}/s)",
    0.0,
    1e5,
    100.0,
    key="wbw",
    step=10.0,
    fmt="%.1f",
    where=c[7],
    help="Aggregate rate a blocking save sees.",
)
tau_min = common.slider("Checkpoint every τ (min)", 1, 240, 30, key="tau", where=c[8])
jitter = common.slider("Step-time jitter σ (% of step)", 0, 30, 5, key="jit", where=c[9])
pp = int(
    common.select(
        "Pipeline stages P (1F1B)",
        {str(p): str(p) for p in (1, 2, 4, 8, 16)},
        "8",
        key="pp",
        where=c[10],
    )
)
mb = common.slider("Micro-batches per step", 1, 128, 32, key="mb", where=c[11])

with common.explain_errors():
    r = _plan(
        gpus,
        mtbf_h,
        days,
        restart_min * MIN_S,
        model,
        recipe,
        contents,
        bw * bw_size,
        tau_min * MIN_S,
    )
    bubble, slow, ud, ud_fig = _useful(gpus, jitter, pp, mb, r["mine"].goodput)
    strag_fig = _stragglers(jitter)
run, ck, curve, mine, llama = r["run"], r["ck"], r["curve"], r["mine"], r["llama"]
c = st.columns(5)
c[0].metric("Job MTBF", format_seconds(run.job_mtbf_s), help="per-GPU MTBF / number of GPUs")
c[1].metric(f"Interruptions in {days} d", format_count(run.expected_interruptions))
c[2].metric("P(no failure)", f"{run.prob_no_failure:.3g}", help="chance the whole run sees none")
c[3].metric(
    "Checkpoint size",
    format_bytes(ck.size_bytes, common.memory_units()),
    help=f"{ck.bytes_per_param} B/param × {ck.num_params:,} parameters ({ck.recipe})",
)
c[4].metric("Write time δ", format_seconds(ck.write_s), help="checkpoint size / write bandwidth")
st.info(
    f"**Llama 3 for scale** (Dubey et al. 2024, §3.3.4): {rel.LLAMA3_UNEXPECTED} unexpected "
    f"interruptions in {format_seconds(rel.LLAMA3_SNAPSHOT_S)} on {rel.LLAMA3_GPUS:,} GPUs (job "
    f"MTBF {format_seconds(rel.LLAMA3_JOB_MTBF_S)}); your per-GPU MTBF predicts "
    f"**{llama.expected_interruptions:,.0f}** there. The default spreads that rate over the GPUs, "
    "as if each interruption were one GPU's independent failure.",
    icon="🦙",
)

st.subheader("How often should it checkpoint?")
mc_mine = next((m for m in r["mc"] if m.interval_s == mine.interval_s), None)
c = st.columns(4)
for col, label, w in zip(
    c, ("Young √(2δM)", "Daly 2006", "Exact optimum"), (curve.young, curve.daly, curve.optimum)
):
    col.metric(
        label, format_seconds(w.interval_s), f"goodput {w.goodput:.2%}", "off", delta_arrow="off"
    )
c[3].metric(
    f"Goodput at your τ = {tau_min} min",
    f"{mine.goodput:.1%}",
    delta_color="off",
    delta=f"Monte Carlo {mc_mine.goodput:.1%} ± {2 * mc_mine.goodput_stderr:.1%}"
    if mc_mine
    else "Monte Carlo skipped",
    delta_arrow="off",
)
if mine.interval_s < ck.write_s:
    st.warning(
        f"Your τ = {format_seconds(mine.interval_s)} is shorter than the checkpoint write δ = "
        f"{format_seconds(ck.write_s)}: the job saves more than it trains. Lengthen τ toward "
        f"{format_seconds(curve.optimum.interval_s)} or use faster storage.",
        icon="⚠️",
    )
if r["mc_error"]:
    st.warning(f"Some Monte Carlo points were skipped: {r['mc_error']}", icon="⚠️")
_side_by_side(goodput=r["goodput_fig"])
_side_by_side(waste=r["waste_fig"], scale=r["scale_fig"])
st.subheader("Stragglers, and the GPUs doing useful work")
_side_by_side(stragglers=strag_fig, useful=ud_fig)

common.takeaway(
    f"{gpus:,} GPUs cut a per-GPU MTBF of {format_seconds(run.gpu_mtbf_s)} to a job MTBF of "
    f"{format_seconds(run.job_mtbf_s)}: ~{run.expected_interruptions:,.0f} interruptions in "
    f"{days} d. Checkpointing every {format_seconds(curve.optimum.interval_s)} (≈ √(2δM)) "
    f"keeps goodput at {curve.optimum.goodput:.1%}; after bubble, stragglers and failures, "
    f"{ud.useful_gpus:,.0f} of {gpus:,} GPUs do useful work at any instant."
)

st.subheader("How this is computed")
t = lambda x: rf"\text{{{x if isinstance(x, str) else format_seconds(x)}}}".replace("%", r"\%")  # noqa
rows = [
    rf"M &= \frac{{\mathrm{{MTBF_{{gpu}}}}}}{{N}} = \frac{{{t(f'{mtbf_h:,.0f} h')}}}"
    rf"{{{t(f'{gpus:,}')}}} = {t(run.job_mtbf_s)}, \quad \frac{{T}}{{M}} = "
    rf"{t(f'{run.expected_interruptions:,.2f} interruptions')}",
    rf"\tau_\text{{Young}} &= \sqrt{{2\delta M}} = \sqrt{{2 \times {t(ck.write_s)} \times "
    rf"{t(run.job_mtbf_s)}}} = {t(curve.young.interval_s)}",
    rf"\tau_\text{{Daly}} &= \sqrt{{2\delta M}}\left[1 + \tfrac13\sqrt{{\tfrac{{\delta}}{{2M}}}} + "
    rf"\tfrac19\,\tfrac{{\delta}}{{2M}}\right] - \delta"
    rf" = {t(curve.daly.interval_s)}\ (\delta < 2M)",
    rf"\text{{goodput}}(\tau) &= \frac{{\tau}}{{M e^{{R/M}}\left(e^{{(\tau+\delta)/M}} - 1\right)}}"
    rf" = {t(f'{mine.goodput:.2%}')}\ \text{{at}}\ \tau = {t(mine.interval_s)}",
    rf"&\approx 1 - \frac{{\delta}}{{\tau}} - \frac{{\tau/2 + R}}{{M}} = "
    rf"{t(f'{1 - mine.first_order_waste:.2%}')}\ \text{{(first order; optimum at }}"
    rf"{t(curve.optimum.interval_s)}\text{{)}}",
    rf"\frac{{E[\text{{step}}]}}{{\mu}} &= 1 + \frac{{\sigma}}{{\mu}} E\big[\max_{{i \le N}} "
    rf"Z_i\big] = {t(f'{slow:.4f}')}",
    rf"\text{{useful GPUs}} &= N (1 - b) \frac{{\text{{goodput}}}}{{\text{{slowdown}}}} = "
    rf"{t(f'{ud.useful_gpus:,.0f}')}\ (b = {t(f'{bubble:.1%}')})",
]
st.latex(r"\begin{aligned}" + r" \\[4pt] ".join(rows) + r"\end{aligned}")
st.caption(
    f"Independent exponential failures, also during checkpoints and restarts (Young, CACM "
    f"1974; Daly, FGCS 2006); Monte Carlo: {days} d of work per run, seeded. b: 1F1B simulator "
    f"bubble at P = {pp}, {mb} micro-batches. Each rank's step ~ N(μ, σ²); a step waits for the "
    "slowest."
)

young2 = rel.young_interval_s(checkpoint_s=ck.write_s, mtbf_s=r["doubled"].job_mtbf_s)
common.self_check(
    f"Double the cluster to {2 * gpus:,} GPUs, same δ = {format_seconds(ck.write_s)}. "
    "What is Young's interval now?",
    young2 / MIN_S,
    key="q",
    unit="min",
    rel_tol=0.03,
    explanation=f"M halves, so √(2δM) shrinks by √2: "
    f"{format_seconds(curve.young.interval_s)} → {format_seconds(young2)}.",
)
common.show_url_notices()
