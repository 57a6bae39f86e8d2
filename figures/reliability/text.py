"""The reliability page's words: metric rows, the Llama 3 comparison, warnings, takeaway, "How
this is computed" (the formulas with this run's numbers) and the self-check (no streamlit).
"""

from __future__ import annotations

from core import reliability as rel
from core.units import format_bytes, format_count, format_seconds

MIN_S = 60.0  # the page's time controls are in minutes


def failure_metrics(run: rel.Interruptions, ck, days: int, mem) -> list[dict]:
    """Job MTBF, interruptions, chance of none, and the checkpoint's size and write time."""
    return [
        dict(
            label="Job MTBF",
            value=format_seconds(run.job_mtbf_s),
            help="per-GPU MTBF / number of GPUs",
        ),
        dict(label=f"Interruptions in {days} d", value=format_count(run.expected_interruptions)),
        dict(
            label="P(no failure)",
            value=f"{run.prob_no_failure:.3g}",
            help="chance the whole run sees none",
        ),
        dict(
            label="Checkpoint size",
            value=format_bytes(ck.size_bytes, mem),
            help=f"{ck.bytes_per_param} B/param × {ck.num_params:,} parameters ({ck.recipe})",
        ),
        dict(
            label="Write time δ",
            value=format_seconds(ck.write_s),
            help="checkpoint size / write bandwidth",
        ),
    ]


def llama_info(llama: rel.Interruptions) -> str:
    """Llama 3's reported interruptions beside what the chosen per-GPU MTBF predicts there."""
    return (
        f"**Llama 3 for scale** (Dubey et al. 2024, §3.3.4): {rel.LLAMA3_UNEXPECTED} unexpected "
        f"interruptions in {format_seconds(rel.LLAMA3_SNAPSHOT_S)} on {rel.LLAMA3_GPUS:,} GPUs "
        f"(job MTBF {format_seconds(rel.LLAMA3_JOB_MTBF_S)}); your per-GPU MTBF predicts "
        f"**{llama.expected_interruptions:,.0f}** there. The default spreads that rate over the "
        "GPUs, as if each interruption were one GPU's independent failure."
    )


def interval_metrics(curve, mine, mc_mine, tau_min: int) -> list[dict]:
    """Young's, Daly's and the exact optimal intervals, and the goodput at the chosen τ."""
    row = [
        dict(
            label=label,
            value=format_seconds(w.interval_s),
            delta=f"goodput {w.goodput:.2%}",
            delta_color="off",
            delta_arrow="off",
        )
        for label, w in (
            ("Young √(2δM)", curve.young),
            ("Daly 2006", curve.daly),
            ("Exact optimum", curve.optimum),
        )
    ]
    mc = (
        f"Monte Carlo {mc_mine.goodput:.1%} ± {2 * mc_mine.goodput_stderr:.1%}"
        if mc_mine
        else "Monte Carlo skipped"
    )
    return row + [
        dict(
            label=f"Goodput at your τ = {tau_min} min",
            value=f"{mine.goodput:.1%}",
            delta_color="off",
            delta=mc,
            delta_arrow="off",
        )
    ]


NO_WRITE = (
    "With a write bandwidth of 0 a checkpoint never finishes, so every failure throws away all "
    "the work since the start and a long run on many GPUs never completes. Set a write bandwidth "
    "above 0 to see how often the run should checkpoint."
)


def short_interval_warning(mine, ck, curve) -> str | None:
    """A warning when τ is shorter than the checkpoint write itself, else None; the advice points
    the way the optimum lies (longer or shorter) and never past it."""
    if mine.interval_s >= ck.write_s:
        return None
    best = curve.optimum.interval_s
    way = (
        f"Lengthen τ toward {format_seconds(best)}"
        if best > mine.interval_s
        else f"The best interval here, {format_seconds(best)}, is shorter still: the write is "
        "the problem, so use faster storage or a smaller checkpoint"
    )
    return (
        f"Your τ = {format_seconds(mine.interval_s)} is shorter than the checkpoint write δ = "
        f"{format_seconds(ck.write_s)}: the job saves more than it trains. {way}"
        + (" or use faster storage." if best > mine.interval_s else ".")
    )


def takeaway(gpus: int, run: rel.Interruptions, days: int, curve) -> str:
    """Two lines on the presenter slide: the failure rate and the interval that answers it (the
    useful-GPU count sits with its own controls, in the stragglers section)."""
    return (
        f"{gpus:,} GPUs cut a per-GPU MTBF of {format_seconds(run.gpu_mtbf_s)} to a job MTBF of "
        f"{format_seconds(run.job_mtbf_s)}: ~{run.expected_interruptions:,.0f} interruptions in "
        f"{days} d. Checkpointing every {format_seconds(curve.optimum.interval_s)} (≈ √(2δM)) "
        f"keeps goodput at {curve.optimum.goodput:.1%}."
    )


def how_computed(job, plan: dict) -> list[tuple[str, str]]:
    """Every failure and checkpoint formula with this run's numbers in one aligned LaTeX block,
    then the assumptions: `job` the page's controls (gpus, mtbf_h, days), `plan` its results."""
    gpus, mtbf_h, days = job.gpus, job.mtbf_h, job.days
    run, ck, curve, mine = plan["run"], plan["ck"], plan["curve"], plan["mine"]

    def t(x) -> str:  # a value as LaTeX text: a string as is, a number of seconds formatted
        return rf"\text{{{x if isinstance(x, str) else format_seconds(x)}}}".replace("%", r"\%")

    rows = [
        rf"M &= \frac{{\mathrm{{MTBF_{{gpu}}}}}}{{N}} = \frac{{{t(f'{mtbf_h:,.0f} h')}}}"
        rf"{{{t(f'{gpus:,}')}}} = {t(run.job_mtbf_s)}, \quad \frac{{T}}{{M}} = "
        rf"{t(f'{run.expected_interruptions:,.2f} interruptions')}",
        rf"\tau_\text{{Young}} &= \sqrt{{2\delta M}} = \sqrt{{2 \times {t(ck.write_s)} \times "
        rf"{t(run.job_mtbf_s)}}} = {t(curve.young.interval_s)}",
        rf"\tau_\text{{Daly}} &= \sqrt{{2\delta M}}\left[1 + "
        rf"\tfrac13\sqrt{{\tfrac{{\delta}}{{2M}}}} + "
        rf"\tfrac19\,\tfrac{{\delta}}{{2M}}\right] - \delta"
        rf" = {t(curve.daly.interval_s)}\ (\delta < 2M)",
        rf"\text{{goodput}}(\tau) &= "
        rf"\frac{{\tau}}{{M e^{{R/M}}\left(e^{{(\tau+\delta)/M}} - 1\right)}}"
        rf" = {t(f'{mine.goodput:.2%}')}\ \text{{at}}\ \tau = {t(mine.interval_s)}",
        rf"&\approx 1 - \frac{{\delta}}{{\tau}} - \frac{{\tau/2 + R}}{{M}} = "
        rf"{t(f'{1 - mine.first_order_waste:.2%}')}\ \text{{(first order; optimum at }}"
        rf"{t(curve.optimum.interval_s)}\text{{)}}",
    ]
    caption = (
        f"Independent exponential failures, also during checkpoints and restarts (Young, CACM "
        f"1974; Daly, FGCS 2006); Monte Carlo: {days} d of work per run, seeded."
    )
    latex = r"\begin{aligned}" + r" \\[4pt] ".join(rows) + r"\end{aligned}"
    return [("latex", latex), ("caption", caption)]


def useful_computed(*, slow, ud, bubble, pp: int, mb: int) -> list[tuple[str, str]]:
    """The straggler slowdown and the useful GPUs with this section's numbers."""

    def t(x: str) -> str:
        return rf"\text{{{x}}}".replace("%", r"\%")

    rows = [
        rf"\frac{{E[\text{{step}}]}}{{\mu}} &= 1 + \frac{{\sigma}}{{\mu}} E\big[\max_{{i \le N}} "
        rf"Z_i\big] = {t(f'{slow:.4f}')}",
        rf"\text{{useful GPUs}} &= N (1 - b) \frac{{\text{{goodput}}}}{{\text{{slowdown}}}} = "
        rf"{t(f'{ud.useful_gpus:,.0f}')}\ (b = {t(f'{bubble:.1%}')})",
    ]
    caption = (
        f"b: 1F1B simulator bubble at P = {pp}, {mb} micro-batches. Each rank's step ~ N(μ, σ²); "
        "a step waits for the slowest. Goodput: at your τ, above."
    )
    latex = r"\begin{aligned}" + r" \\[4pt] ".join(rows) + r"\end{aligned}"
    return [("latex", latex), ("caption", caption)]


def self_checks(gpus: int, ck, curve, doubled: rel.Interruptions) -> list[dict]:
    """Young's interval on twice the GPUs, with the same checkpoint write time."""
    young2 = rel.young_interval_s(checkpoint_s=ck.write_s, mtbf_s=doubled.job_mtbf_s)
    return [
        dict(
            question=f"Double the cluster to {2 * gpus:,} GPUs, same δ = "
            f"{format_seconds(ck.write_s)}. What is Young's interval now?",
            answer=young2 / MIN_S,
            key="q",
            unit="min",
            rel_tol=0.03,
            explanation=f"M halves, so √(2δM) shrinks by √2: "
            f"{format_seconds(curve.young.interval_s)} → {format_seconds(young2)}.",
        )
    ]
