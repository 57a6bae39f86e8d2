"""Words, metrics and rows of the plan-vs-trace page (plain data; no Streamlit here)."""

from __future__ import annotations

import pandas as pd

from core.traces import COMM_ONLY, OVERLAP, FittedRates, PlanTimeline, TraceAnalysis
from core.units import format_bandwidth, format_flops
from core.units import format_seconds as fs

DEMO_PARAMS = 4 * (512 * 512 + 512)  # scripts/make_demo_trace.py: 4 × Linear(512, 512), 64 samples
# The A100 demo's record_param_comms events all-reduce 2,049,000 + 7,875,584 + 6,563,840 +
# 6,637,568 + 2,431,040 = 25,557,032 float elements per step (5 DDP buckets): ResNet-50's
# parameter count (data/traces/README.md).
A100_PARAMS = 25_557_032
# Demo traces: (file glob in data/traces/, model parameters, DDP bucket in MiB).
DEMOS = {
    "a100": ("a100_2rank_nccl_ddp_rank*.json.gz", A100_PARAMS, "25"),
    "gloo": ("ddp_gloo_rank*.json.gz", DEMO_PARAMS, "1"),
}
DEMO_LABELS = {"a100": "A100", "gloo": "gloo"}  # short: the label is the URL value
BUCKETS = {"1": "1 MiB", "25": "25 MiB", "none": "no buckets"}
HELP = {
    "n": "Data-parallel ranks in the simulated plan (both demo jobs had 2).",
    "params": "Gloo demo: 4 × (512² + 512) = 1,050,624. A100 demo: ResNet-50, 25,557,032 (what "
    "its all-reduces carry per step). Empty: the demo's own.",
    "bucket": "The gloo demo ran DDP(bucket_cap_mb=1); the A100 demo PyTorch's default 25 MiB.",
    "demo": "A bundled real trace instead of uploads.",
    "src": "A100 · NCCL: rank 0 of a real two-rank DDP job on A100 GPUs (Meta's "
    "HolisticTraceAnalysis test data, MIT). CPU · gloo: two CPU processes, DDP over gloo, 3 steps "
    "(scripts/make_demo_trace.py).",
    "plan": "DP with the trace's fitted rates, or any DP × TP × PP layout timed by the planner.",
    "fit": "Give the plan the trace's achieved FLOP/s and all-reduce bandwidth, so it tests "
    "the schedule (overlap, exposed communication) rather than hardware numbers.",
}
UPLOAD = "Profiler traces: one .json or .json.gz per rank (prof.export_chrome_trace)"
NO_FILES = "Upload one trace per rank, or turn the demo trace back on."
NO_FIT = ". Showing the plan at 40 GFLOP/s and 300 MB/s."
PERFETTO = (  # markdown: the address is a link; chrome:// pages cannot be linked to from a page
    "Open the JSON in [ui.perfetto.dev](https://ui.perfetto.dev) (Open trace file) or type "
    "`chrome://tracing` in Chrome's address bar: one track per rank."
)
MS = ("span_s", "compute_s", "comm_s", "overlap_s", "idle_s")  # per-rank columns shown in ms
RANK_COLUMNS = {k: (k[:-2] + " (ms)", "%.3f", None) for k in MS}
COMM_COLUMNS = {"ms": ("total (ms, summed)", "%.3f", None)}
IDLE_LATEX = r"\text{idle} = \text{span} - |C \cup M| = \text{span} - (|C| + |M| - |C \cap M|)"
RATES_LATEX = (
    r"\text{FLOP/s} = \frac{6\,N\,B}{t_{\text{compute}}},\quad "
    r"\text{busbw} = \frac{2(p-1)}{p}\cdot\frac{4N}{t_{\text{comm}}}"
)


def summary(analysis: TraceAnalysis, plan: PlanTimeline) -> tuple[float, float, float]:
    """Measured step time (mean traced span per rank ÷ its steps), and the share of communication
    hidden behind compute in the trace and in the plan.
    """
    ranks = analysis.ranks
    measured = sum(r.step_s for r in ranks) / len(ranks)  # each rank by its own step count
    hidden_t = sum(r.overlap_s for r in ranks) / max(sum(r.comm_s for r in ranks), 1e-30)
    comm_p = plan.seconds(OVERLAP) + plan.seconds(COMM_ONLY)
    hidden_p = plan.seconds(OVERLAP) / comm_p if comm_p > 0 else 0.0
    return measured, hidden_t, hidden_p


def metrics(plan_s: float, measured: float, hidden_t: float, hidden_p: float) -> list[dict]:
    """st.metric arguments: step time and hidden communication, trace vs plan."""
    return [
        dict(
            label="Step time: trace",
            value=fs(measured),
            help="Mean traced span per rank ÷ profiled steps.",
            border=True,
        ),
        dict(
            label="Step time: plan",
            value=fs(plan_s),
            delta=f"{plan_s / measured - 1:+.0%} vs trace",
            delta_color="off",
            border=True,
        ),
        dict(
            label="Comm hidden: trace",
            value=f"{hidden_t:.0%}",
            help="Share of communication time overlapped with compute: |compute ∩ comm| / |comm|.",
        ),
        dict(
            label="Comm hidden: plan",
            value=f"{hidden_p:.0%}",
            help="Share of the bucket all-reduces that run during backward.",
        ),
    ]


def rank_rows(table: pd.DataFrame, *, answered: bool = True) -> pd.DataFrame:
    """The per-rank table with its times in ms; the idle column (the self-check's answer, issue
    15 §3) only once the self-check is answered."""
    shown = MS if answered else tuple(k for k in MS if k != "idle_s")
    return table[["rank", "file", *shown]].assign(**{k: table[k] * 1e3 for k in shown})


def rank_columns(*, answered: bool = True) -> dict:
    """RANK_COLUMNS for the columns rank_rows shows."""
    return {k: v for k, v in RANK_COLUMNS.items() if answered or k != "idle_s"}


def comm_rows(analysis: TraceAnalysis) -> list[dict]:
    """What counted as communication, per rank: names as in the file, count, total ms."""
    return [
        dict(rank=r.rank, op=name, count=k, ms=us / 1e3)
        for r in analysis.ranks
        for name, k, us in r.comm_names
    ]


def rank_caption(analysis: TraceAnalysis, steps: int) -> str:
    cats = analysis.ranks[0].categories
    found = ", ".join(f"{c} ({k:,})" for c, k in cats[:8]) if cats else "none"
    return (
        f"{analysis.ranks[0].source} · {steps} profiled step{'s' * (steps > 1)} analysed · ms "
        f"of the analysed span. Event categories found in rank {analysis.ranks[0].rank}'s file: "
        f"{found} (cpu_op / Operator are CPU compute, kernel GPU work)."
    )


def takeaway(
    plan_s: float,
    measured: float,
    hidden_t: float,
    hidden_p: float,
    fitted: bool,
    presenting: bool = False,
) -> str:
    """How close the plan comes, and what the gap tests (the schedule, once rates are fitted);
    `presenting`: one line, the slide's headline (the full text runs 5 lines at 1280×720 and
    pushes the timeline half off the first screen, issue 15)."""
    gap = plan_s / measured - 1
    if presenting:
        hidden = f"; comm hidden: plan {hidden_p:.0%}, trace {hidden_t:.0%}."
        rates = "Fitted" if fitted else "Hand-set"
        return f"{rates}: plan {fs(plan_s)} vs trace {fs(measured)} ({gap:+.0%})" + (
            hidden if fitted else "; fit the rates to test the schedule."
        )
    if fitted:
        return (
            "Fitted to the trace's own compute and all-reduce rates, the plan's step is "
            f"{fs(plan_s)} against {fs(measured)} measured ({gap:+.0%}). The fit fixes the "
            f"totals, so the real test is the schedule: the trace hid {hidden_t:.0%} of its "
            f"communication behind compute, the plan {hidden_p:.0%}. What the plan leaves out — "
            "idle gaps (Python, the optimizer) and compute and gloo threads sharing the same "
            "cores — is the rest of the gap."
        )
    return (
        f"At hand-set rates the plan predicts {fs(plan_s)} per step against {fs(measured)} "
        f"measured ({gap:+.0%}): fit the rates to the trace to test the schedule rather than the "
        "hardware numbers."
    )


def trace_markdown(analysis: TraceAnalysis, *, answered: bool = True) -> str:
    """How the trace is read, with rank 0's (first rank's) numbers; its idle time (the
    self-check's answer) only once the self-check is answered."""
    r0 = analysis.ranks[0]
    idle = fs(r0.idle_s) if answered else "(the self-check below)"
    return (
        "**Trace.** Per rank, *comm* = the union of intervals of collectives (names with nccl, "
        "gloo, c10d, all_reduce, all_gather, reduce_scatter, broadcast, send/recv, "
        f"record_param_comms), and *compute* = the union of {r0.source} minus, on each thread, "
        "that thread's collectives (nested ops count once). With GPU kernels present only "
        f"kernels count, as in HTA. Rank {r0.rank}: span {fs(r0.span_s)}, compute "
        f"{fs(r0.compute_s)}, comm {fs(r0.comm_s)}, overlap {fs(r0.overlap_s)}, idle {idle}."
    )


def plan_markdown(flops: float, bus: float, rates: FittedRates | None, steps: int) -> str:
    """How the plan is built, with the rates it used (and where fitted ones came from)."""
    return (
        f"**Plan.** `dp_step` with compute = 6·N·B / FLOP/s (forward ⅓, backward ⅔), gradients of "
        f"4 B/parameter in buckets ready evenly through backward, each all-reduced by a ring in "
        f"2(p−1)/p · bytes / bus bandwidth. Rates used: {format_flops(flops)}/s per rank and "
        f"{format_bandwidth(bus, 'decimal')} bus bandwidth"
        + (
            f", fitted from {fs(rates.compute_per_step_s)} of compute and "
            f"{fs(rates.comm_per_step_s)} of collectives per step over {steps} steps."
            if rates
            else "."
        )
    )


def self_check(analysis: TraceAnalysis) -> dict:
    """Rank 0's idle time from its four measured spans (common.self_check's arguments)."""
    r0 = analysis.ranks[0]
    return dict(
        question=f"Rank {r0.rank} computed for {r0.compute_s * 1e3:.3f} ms and communicated for "
        f"{r0.comm_s * 1e3:.3f} ms, {r0.overlap_s * 1e3:.3f} ms of it at the same time, over a "
        f"span of {r0.span_s * 1e3:.3f} ms. How long was it idle?",
        answer=r0.idle_s * 1e3,
        key="q1",
        rel_tol=0.01,
        unit="ms",
        explanation="span − (compute + comm − overlap).",
    )
