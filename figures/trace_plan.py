"""The plan side of plan vs trace as any planner layout (DP × TP × PP, core.planner.evaluate),
laid out as one rank's timeline of states, and the check that plan and trace have as many ranks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.hardware import make_cluster
from core.model import preset
from core.planner import Evaluation, Layout, Training, evaluate
from core.traces import (
    COMM_ONLY,
    COMPUTE,
    IDLE,
    OVERLAP,
    PlanTimeline,
    TraceAnalysis,
    dp_plan,
    tiled,
)
from core.units import format_seconds

MODELS = ("Llama-3.2 1B", "Llama-3.1 8B", "GPT-2 small (124M)", "Llama-2 7B", "Llama-3.1 70B")
GPUS = ("A100 80GB", "A100 40GB", "H100 SXM")
PLANS = {"dp": "DP", "layout": "layout"}  # short: the label is the URL value


@dataclass(frozen=True, kw_only=True)
class PlanInputs:
    """What the simulated DP plan depends on (the cache's key)."""

    ranks: int
    params: int
    batch: int  # samples per rank per step
    bucket: str  # MiB, or "none"
    flops: float  # per rank, FLOP/s
    bus: float  # all-reduce bus bandwidth, bytes/s
    steps: int


def dp_run(p: PlanInputs) -> PlanTimeline:
    """The DP plan of core.traces.dp_plan as a timeline."""
    return dp_plan(
        p.ranks,
        num_params=p.params,
        samples_per_rank=p.batch,
        flops_per_s=p.flops,
        bus_bytes_per_s=p.bus,
        bucket_bytes=None if p.bucket == "none" else int(p.bucket) * 2**20,
        steps=p.steps,
    )[1]


@dataclass(frozen=True, kw_only=True)
class LayoutRun:
    """A planner layout to lay beside the trace (the cache's key)."""

    model: str
    gpu: str
    dp: int
    tp: int
    pp: int
    global_batch: int
    seq_len: int
    steps: int

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp


def evaluate_layout(run: LayoutRun) -> Evaluation:
    """core.planner.evaluate on nodes of up to 8 GPUs (the DGX A100 / H100 node)."""
    per_node = min(8, run.gpus)
    if run.gpus % per_node:
        raise ValueError(
            f"DP × TP × PP = {run.gpus} GPUs do not fill nodes of 8: use a multiple of 8, or "
            "fewer than 8"
        )
    cluster = make_cluster(num_nodes=run.gpus // per_node, gpus_per_node=per_node, gpu_name=run.gpu)
    lay = Layout(dp=run.dp, tp=run.tp, pp=run.pp)
    return evaluate(
        preset(run.model),
        cluster,
        lay,
        Training(global_batch=run.global_batch, seq_len=run.seq_len),
    )


def layout_run(run: LayoutRun) -> tuple[PlanTimeline, str]:
    """A planner layout's timeline over `run.steps` steps, and a sentence on it."""
    ev = evaluate_layout(run)
    return layout_timeline(ev, run.steps), layout_summary(ev)


def layout_timeline(ev: Evaluation, steps: int) -> PlanTimeline:
    """The step's critical path (core.planner Breakdown) in its order: forward + backward work
    (the DP sync hidden behind backward drawn as overlap at its end), the exposed TP / PP / ZeRO
    communication, the pipeline bubble, the exposed DP sync, the optimizer step."""
    bd = ev.breakdown
    work = bd.compute_s + bd.memory_bound_s + bd.recompute_s
    hidden = min(max(ev.dp_sync_s - bd.dp_s, 0.0), work)
    parts = [
        (COMPUTE, work - hidden),
        (OVERLAP, hidden),
        (COMM_ONLY, bd.tp_s + bd.pp_p2p_s + bd.zero_gather_s),
        (IDLE, bd.pp_bubble_s),
        (COMM_ONLY, bd.dp_s),
        (COMPUTE, bd.optimizer_s),
    ]
    parts = [(k, d) for k, d in parts if d > 0]
    d = np.array([p[1] for p in parts])
    end = np.cumsum(d)
    one = (end - d, end, np.array([p[0] for p in parts], np.int8))
    lay = ev.layout
    label = f"planner: DP {lay.dp} × TP {lay.tp} × PP {lay.pp}, {ev.cluster.gpu.name}"
    return tiled(label, lay.dp * lay.tp * lay.pp, one, float(end[-1]), steps)


def rank_note(plan_ranks: int, analysis: TraceAnalysis) -> str | None:
    """A warning when the plan has another number of ranks than the traced job."""
    world = max([len(analysis.ranks)] + [r.world_size or 0 for r in analysis.ranks])
    if plan_ranks == world:
        return None
    return (
        f"The plan has {plan_ranks:,} ranks but the traced job had {world:,} (files uploaded or "
        "distributedInfo.world_size): step times and communication are not comparable "
        "like for like; set the plan to the trace's rank count."
    )


def layout_summary(ev: Evaluation) -> str:
    return (
        f"Planner layout: {format_seconds(ev.step_time_s)} per step, MFU {ev.mfu:.0%}, "
        f"{ev.num_microbatches} micro-batches per pipeline"
        + ("" if ev.fits else "; it does not fit in memory")
        + "."
    )
