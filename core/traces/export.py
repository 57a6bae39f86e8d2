"""Plans as timelines: a DP step fitted to a measured trace, and plans as Chrome trace-event
JSON.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.checks import positive
from core.data_parallel import DpJob, DpStep, dp_step
from core.hardware import Cluster, GpuSpec, LinkSpec
from core.traces.analysis import (
    COMM_ONLY,
    COMPUTE,
    IDLE,
    OVERLAP,
    TraceAnalysis,
    bin_runs,
    runs,
    union,
)

MAX_PLAN_SEGMENTS = 1000  # runs of state kept per plan rank; past it, bins (and it says so)

# Slice names in exported traces: what a rank does in each state.
SLICE = {
    IDLE: "idle",
    COMPUTE: "compute",
    COMM_ONLY: "communication (exposed)",
    OVERLAP: "compute + communication (overlapped)",
}
CAT = {IDLE: "idle", COMPUTE: "compute", COMM_ONLY: "comm", OVERLAP: "compute+comm"}


@dataclass(frozen=True, kw_only=True, eq=False)
class PlanTimeline:
    """A simulated step repeated `steps` times; every rank runs the same runs of state."""

    label: str
    num_ranks: int
    steps: int
    step_s: float
    seg_start_s: np.ndarray
    seg_end_s: np.ndarray
    seg_state: np.ndarray  # IDLE, COMPUTE, COMM_ONLY, OVERLAP (core.traces.analysis)
    totals_s: tuple[float, float, float, float] = (0.0,) * 4  # exact, per state (binned or not)
    bin_s: float = 0.0  # > 0: the runs were coarsened to bins this wide (dominant state)

    def seconds(self, state: int) -> float:
        """Time in one state over all the steps, per rank (exact even when drawn in bins)."""
        return self.totals_s[state]


@dataclass(frozen=True, kw_only=True)
class FittedRates:
    """A trace's achieved rates per rank: FLOP/s of its compute and the all-reduce bus bandwidth."""

    steps: int
    compute_per_step_s: float
    comm_per_step_s: float
    step_s: float  # measured span / steps
    flops_per_s: float  # flops_per_param_sample · N · samples / compute per step
    bus_bytes_per_s: float  # ring: 2(p−1)/p · gradient bytes / comm per step (nccl-tests busbw)


def fit_rates(
    analysis: TraceAnalysis,
    *,
    num_params: float,
    samples_per_rank: float,
    grad_bytes_per_param: float = 4.0,
    flops_per_param_sample: float = 6.0,
) -> FittedRates:
    """Rates that make a DP plan reproduce the trace's compute and comm time per step (rank
    mean).
    """
    r = analysis.ranks
    # Ranks of the job: the files, or what distributedInfo says when only some ranks were given.
    p, steps = max([len(r)] + [x.world_size or 0 for x in r]), max(1, min(x.steps for x in r))
    compute = float(np.mean([x.compute_s for x in r])) / steps
    comm = float(np.mean([x.comm_s for x in r])) / steps
    if not compute > 0:
        raise ValueError(
            "the trace has no compute ops to fit a FLOP rate to: turn off fitting and set "
            "the plan's rates by hand"
        )
    if p < 2 or not comm > 0:
        raise ValueError(
            f"the trace has {p} rank(s) and {comm * 1e3:.3g} ms of collectives per step: "
            "an all-reduce bandwidth needs ≥ 2 ranks that communicate; upload every rank's "
            "trace, or turn off fitting and set the rates by hand"
        )
    return FittedRates(
        steps=steps,
        compute_per_step_s=compute,
        comm_per_step_s=comm,
        step_s=float(np.mean([x.span_s for x in r])) / steps,
        flops_per_s=flops_per_param_sample * num_params * samples_per_rank / compute,
        bus_bytes_per_s=2 * (p - 1) / p * grad_bytes_per_param * num_params / comm,
    )


def plan_cluster(
    num_ranks: int, *, flops_per_s: float, bus_bytes_per_s: float, latency_s: float = 0.0
) -> Cluster:
    """One node of `num_ranks` identical workers joined by one link (the plan's hardware)."""
    positive("flops_per_s", flops_per_s, fix="use e.g. 1e12 (fit_rates measures it from a trace)")
    positive("bus_bytes_per_s", bus_bytes_per_s, fix="use e.g. 1e10 (fit_rates measures it)")
    gpu = GpuSpec(
        name="plan rank",
        bf16_flops_per_s=float(flops_per_s),
        hbm_bytes=math.inf,
        hbm_bandwidth_bytes_per_s=math.inf,
        scale_up_link="plan link",
        source="set or fitted",
    )
    link = LinkSpec(
        name="plan link",
        bandwidth_bytes_per_s=float(bus_bytes_per_s),
        latency_s=latency_s,
        source="set or fitted",
    )
    return Cluster(
        num_nodes=1,
        gpus_per_node=num_ranks,
        gpu=gpu,
        intra_link=link,
        inter_link=link,
        nics_per_node=1,
    )


def dp_plan(
    num_ranks: int,
    *,
    num_params: float,
    samples_per_rank: float,
    flops_per_s: float,
    bus_bytes_per_s: float,
    bucket_bytes: float | None = 2**20,
    steps: int = 1,
    grad_bytes_per_param: float = 4.0,
) -> tuple[DpStep, PlanTimeline]:
    """The DP step of core.data_parallel.scaling on the plan's hardware (MFU 1: the rate is what was
    achieved).
    """
    job = DpJob(
        num_params=num_params,
        tokens_per_gpu=samples_per_rank,
        mfu=1.0,
        bucket_bytes=bucket_bytes,
        grad_bytes_per_param=grad_bytes_per_param,
        first_bucket_bytes=min(2**20, bucket_bytes or 2**20),
    )
    step = dp_step(
        job, plan_cluster(num_ranks, flops_per_s=flops_per_s, bus_bytes_per_s=bus_bytes_per_s)
    )
    return step, dp_timeline(step, steps)


def dp_timeline(step: DpStep, steps: int = 1) -> PlanTimeline:
    """Forward + backward is compute; each bucket's all-reduce is comm; tiled `steps` times."""
    s, e, st = runs(
        (np.array([0.0]), np.array([step.compute_s])),
        union(step.bucket_start_s, step.bucket_finish_s),
        0.0,
        step.step_s,
    )
    return tiled(f"DP plan, {step.num_gpus} ranks", step.num_gpus, (s, e, st), step.step_s, steps)


def tiled(label: str, num_ranks: int, one, step_s: float, steps: int) -> PlanTimeline:
    """One step's runs (tiling [0, step_s]) repeated `steps` times, coarsened to at most
    MAX_PLAN_SEGMENTS bins when longer (26,703 buckets of 1 MiB for 7e9 parameters would be
    160,218 runs over 3 steps): the totals stay exact."""
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 1000:
        raise ValueError(f"steps={steps!r} must be a whole number from 1 to 1000")
    s, e, st = one
    totals = tuple(float(((e - s) * (st == k)).sum()) * steps for k in range(4))
    if len(s) * steps > MAX_PLAN_SEGMENTS:
        per = max(1, MAX_PLAN_SEGMENTS // steps)
        s, e, st = bin_runs((s, e, st), 0.0, step_s, per) if len(s) > per else (s, e, st)
    bin_s = (
        step_s / max(1, MAX_PLAN_SEGMENTS // steps)
        if len(one[0]) * steps > MAX_PLAN_SEGMENTS
        else 0.0
    )
    off = np.repeat(np.arange(steps) * step_s, len(s))
    return PlanTimeline(
        label=label,
        num_ranks=num_ranks,
        steps=steps,
        step_s=step_s,
        seg_start_s=np.tile(s, steps) + off,
        seg_end_s=np.tile(e, steps) + off,
        seg_state=np.tile(st, steps),
        totals_s=totals,
        bin_s=bin_s,
    )


def analysis_table(analysis: TraceAnalysis) -> pd.DataFrame:
    """One row per rank of an imported trace: seconds, and shares of the rank's span (for CSV)."""
    df = pd.DataFrame(
        [
            dict(
                rank=r.rank,
                file=r.name,
                source=r.source,
                steps=r.steps,
                start_s=r.start_s,
                span_s=r.span_s,
                compute_s=r.compute_s,
                comm_s=r.comm_s,
                overlap_s=r.overlap_s,
                comm_only_s=r.comm_s - r.overlap_s,
                idle_s=r.idle_s,
            )
            for r in analysis.ranks
        ]
    )
    for k in ("compute", "comm", "overlap", "idle"):
        df[f"{k}_share"] = df[f"{k}_s"] / df["span_s"].where(df["span_s"] > 0)
    return df


def meta_events(title: str, tracks: list[str]) -> list[dict]:
    """Metadata events naming the process and one thread track per rank, in rank order."""
    ev = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": title}}]
    for r, name in enumerate(tracks):
        ev += [
            {"name": "thread_name", "ph": "M", "pid": 0, "tid": r, "args": {"name": name}},
            {"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": r, "args": {"sort_index": r}},
        ]
    return ev


def slice_event(name: str, cat: str, tid: int, start_us: float, dur_us: float, **args) -> dict:
    return {
        "name": name,
        "cat": cat,
        "ph": "X",
        "pid": 0,
        "tid": tid,
        "ts": round(start_us, 3),
        "dur": round(dur_us, 3),
        "args": args,
    }


def timeline_trace(plan: PlanTimeline) -> dict:
    """A plan as Chrome trace-event JSON (Perfetto, chrome://tracing): one track per rank, µs."""
    n = plan.num_ranks if plan.num_ranks <= 64 else 1  # identical ranks: one track past 64
    tracks = [f"rank {r}" for r in range(n)] if n > 1 or plan.num_ranks == 1 else []
    events = meta_events(plan.label, tracks or [f"every rank ({plan.num_ranks:,})"])
    for r in range(n):
        events += [
            slice_event(SLICE[int(k)], CAT[int(k)], r, s * 1e6, (e - s) * 1e6)
            for s, e, k in zip(plan.seg_start_s.tolist(), plan.seg_end_s.tolist(), plan.seg_state)
            if e > s
        ]
    return {"traceEvents": events, "displayTimeUnit": "ms"}
