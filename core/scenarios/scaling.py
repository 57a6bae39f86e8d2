"""Scaling scenarios: data parallelism slow at scale (2) and GPipe vs 1F1B bubbles (4)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from core import data_parallel as dsc
from core.data_parallel import cluster_for, dp_step
from core.hardware import Cluster
from core.pipeline import closed_form_bubble_share, simulate
from core.scenarios.common import Link, link


@dataclass(frozen=True, kw_only=True)
class ScaleOut:
    """2 · DP fine on 8 GPUs, slow on 64: bytes per rank, the bottleneck link, each fix measured."""

    run: dsc.SlowerAtScale  # its fixes include one more: a NIC per GPU
    cluster: Cluster  # the node type (8 GPUs, NVLink, NICs) both runs use
    effects: tuple[dsc.FixEffect, ...]
    links: tuple[Link, ...]


def scale_out(large_gpus: int = 64, nics_fix: int = 8) -> ScaleOut:
    """core.data_parallel.scenario's job and cluster, plus the fix that attacks the cause: more NIC
    bandwidth.
    """
    run = dsc.slower_at_scale(large_gpus=large_gpus)
    base, job, dgx = dsc.scenario_cluster(), run.job, dsc.dgx_cluster()
    nic_fix = dsc.Fix(
        label=f"{nics_fix}× {base.inter_link.name} per node (one NIC per GPU)",
        step=dp_step(job, cluster_for(replace(base, nics_per_node=nics_fix), large_gpus)),
    )
    run = replace(run, fixes=run.fixes + (nic_fix,))
    # The data-parallel page sets tokens per GPU in units of 1,024 (kt) and sizes by label ("1.3B").
    common = dict(
        size=f"{job.num_params / 1e9:g}B",
        kt=round(job.tokens_per_gpu / 1024),
        gpu=base.gpu.name,
        gpn=base.gpus_per_node,
        nic=base.inter_link.name,
        ar=job.all_reduce.value,
        ovl="false",
        at=large_gpus,
    )
    # One bucket after backward hides nothing; its "hidden" time is float rounding (~1e-17 s): zero
    # it.
    effects = tuple(
        replace(e, hidden_s=0.0) if e.hidden_s < 1e-9 else e for e in dsc.fix_effects(run)
    )
    return ScaleOut(
        run=run,
        cluster=base,
        effects=effects,
        links=(
            link(
                "data_parallel",
                f"Data-parallel page: this job, 8 → {large_gpus} GPUs, "
                f"{base.nics_per_node} NIC per node",
                **common,
                nics=base.nics_per_node,
            ),
            link("data_parallel", f"… with {nics_fix} NICs per node", **common, nics=nics_fix),
            link(
                "data_parallel",
                f"… on a DGX-class network ({dgx.nics_per_node}× {dgx.inter_link.name} per node)",
                **{**common, "nic": dgx.inter_link.name},
                nics=dgx.nics_per_node,
            ),
        ),
    )


@dataclass(frozen=True, kw_only=True)
class BubbleRow:
    """One schedule at one M: simulated and closed-form bubble fraction, peak activations held."""

    simulated: float
    closed_form: float
    peak_activations: int  # micro-batches' activations the fullest rank holds at once


@dataclass(frozen=True, kw_only=True)
class Schedules:
    """4 · GPipe vs 1F1B at P stages, M = 8 and M = 64."""

    stages: int
    rows: dict[tuple[str, int], BubbleRow]  # (schedule, M) -> row
    links: tuple[Link, ...]


def gpipe_vs_1f1b(stages: int = 8, microbatches: tuple[int, ...] = (8, 64)) -> Schedules:
    """Simulate both schedules (t_F = 1, t_B = 2) and evaluate the GPipe paper's (P−1)/(M+P−1)."""
    rows = {}
    for m in microbatches:
        for s in ("gpipe", "1f1b"):
            r = simulate(s, stages, m)
            rows[s, m] = BubbleRow(
                simulated=r.bubble_fraction,
                closed_form=closed_form_bubble_share(s, stages, m),
                peak_activations=max(r.peak_activations),
            )
    return Schedules(
        stages=stages,
        rows=rows,
        links=tuple(
            link(
                "pipeline",
                f"Pipeline page: GPipe vs 1F1B, P = {stages}, M = {m}",
                p=stages,
                m=m,
                sched="GPipe",
                cmp="true",
                sched2="1F1B",
            )
            for m in microbatches
        ),
    )
