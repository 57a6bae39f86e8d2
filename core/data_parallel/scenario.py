"""The scenario "a DP job that scaled to 8 GPUs goes slower at 64", with each fix priced."""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.collectives import scan_bytes_per_rank
from core.data_parallel.scaling import (
    DEFAULT_BUCKET_BYTES,
    AllReduceKind,
    DpJob,
    DpStep,
    cluster_for,
    dp_step,
)
from core.hardware import Cluster, make_cluster


def scenario_cluster() -> Cluster:
    """8x A100 80GB nodes (NVLink 3, 300 GB/s per direction) with one 100 GbE NIC per node."""
    return make_cluster(
        num_nodes=1,
        gpus_per_node=8,
        gpu_name="A100 80GB",
        inter_link_name="100 GbE",
        nics_per_node=1,
    )


def dgx_cluster() -> Cluster:
    """The same 8x A100 node on a DGX-class network: one 200 Gb/s HDR InfiniBand NIC per GPU
    (DGX A100: 8 compute NICs per node, docs/notes/collectives.md §6)."""
    return make_cluster(
        num_nodes=1,
        gpus_per_node=8,
        gpu_name="A100 80GB",
        inter_link_name="InfiniBand HDR",
        nics_per_node=8,
    )


def scenario_job() -> DpJob:
    """A 1.3B-parameter model, DDP with bf16 gradients, 2,048 tokens per GPU, one all-reduce after
    backward (no bucketing, no overlap), NCCL's tuned all-reduce, 40% MFU."""
    return DpJob(
        num_params=1.3e9,
        tokens_per_gpu=2048,
        grad_bytes_per_param=2.0,
        mfu=0.4,
        bucket_bytes=None,
        all_reduce=AllReduceKind.NCCL,
    )


@dataclass(frozen=True, kw_only=True)
class Fix:
    """One remedy applied to the large run, and the step it gives."""

    label: str
    step: DpStep


@dataclass(frozen=True, kw_only=True)
class SlowerAtScale:
    """Weak scaling from small_gpus to large_gpus GPUs, why it slows, and what each fix buys."""

    job: DpJob
    small: DpStep  # e.g. 8 GPUs: one node, all-reduce on NVLink
    large: DpStep  # e.g. 64 GPUs: 8 nodes, all-reduce through the NICs
    large_strong: DpStep  # same global batch as the small run, split over large_gpus
    sim_bytes_sent_per_rank_small: float  # measured by the ring simulator, scaled to the message
    sim_bytes_sent_per_rank_large: float
    fixes: tuple[Fix, ...]
    dgx_small: DpStep  # the same two runs on a DGX-class network (dgx_cluster)
    dgx_large: DpStep
    dgx_large_bucketed: DpStep  # ... with the bucketing fix: where overlap has room to hide

    @property
    def speedup(self) -> float:
        """Tokens/s at scale over tokens/s on the small run (a speed-up; ideal = gpu_ratio)."""
        return self.throughput_ratio

    @property
    def step_ratio(self) -> float:
        """How many times longer one step takes at scale (weak scaling)."""
        return self.large.step_s / self.small.step_s

    @property
    def throughput_ratio(self) -> float:
        """Tokens/s at scale over tokens/s on the small run (ideal = large/small GPUs)."""
        return self.large.tokens_per_s / self.small.tokens_per_s

    @property
    def strong_throughput_ratio(self) -> float:
        """Tokens/s at scale with the small run's global batch split over large_gpus, over the small
        run.
        """
        return self.large_strong.tokens_per_s / self.small.tokens_per_s

    @property
    def gpu_ratio(self) -> float:
        """The ideal throughput ratio: large_gpus / small_gpus."""
        return self.large.num_gpus / self.small.num_gpus

    @property
    def bandwidth_drop(self) -> float:
        """Bottleneck bandwidth inside the node over the bottleneck at scale."""
        return self.small.bottleneck_bytes_per_s / self.large.bottleneck_bytes_per_s


def slower_at_scale(
    *,
    job: DpJob | None = None,
    base: Cluster | None = None,
    small_gpus: int = 8,
    large_gpus: int = 64,
    batch_factor: float = 8.0,
    bucket_bytes: float = DEFAULT_BUCKET_BYTES,
) -> SlowerAtScale:
    """Price the slowdown from small_gpus to large_gpus and each fix applied at large_gpus."""
    job = scenario_job() if job is None else job
    base = scenario_cluster() if base is None else base
    if not large_gpus > small_gpus:
        raise ValueError(
            f"large_gpus={large_gpus} must exceed small_gpus={small_gpus}: the scenario "
            "compares a run with its scaled-up version; e.g. 8 and 64"
        )
    if not batch_factor > 1:
        raise ValueError(
            f"batch_factor={batch_factor} must be > 1 to enlarge the per-GPU batch; use e.g. 8"
        )
    small_c, large_c = cluster_for(base, small_gpus), cluster_for(base, large_gpus)
    scan = scan_bytes_per_rank([small_gpus, large_gpus], job.grad_bytes, ("ring",))
    bigger = job.tokens_per_gpu * batch_factor
    variants = [
        (
            f"bucketing ({bucket_bytes / 2**20:g} MiB) + overlap",
            replace(job, bucket_bytes=bucket_bytes),
            None,
        ),
        (f"per-GPU batch ×{batch_factor:g} ({bigger:,.0f} tokens)", job, bigger),
        ("both", replace(job, bucket_bytes=bucket_bytes), bigger),
    ]
    fixes = tuple(
        Fix(label=label, step=dp_step(j, large_c, tokens_per_gpu=tok)) for label, j, tok in variants
    )
    return SlowerAtScale(
        job=job,
        small=dp_step(job, small_c),
        large=dp_step(job, large_c),
        large_strong=dp_step(
            job, large_c, tokens_per_gpu=job.tokens_per_gpu * small_gpus / large_gpus
        ),
        sim_bytes_sent_per_rank_small=float(scan.max_bytes_sent["ring"][0]),
        sim_bytes_sent_per_rank_large=float(scan.max_bytes_sent["ring"][1]),
        fixes=fixes,
        dgx_small=dp_step(job, cluster_for(dgx_cluster(), small_gpus)),
        dgx_large=dp_step(job, cluster_for(dgx_cluster(), large_gpus)),
        dgx_large_bucketed=dp_step(
            replace(job, bucket_bytes=bucket_bytes), cluster_for(dgx_cluster(), large_gpus)
        ),
    )


@dataclass(frozen=True, kw_only=True)
class FixEffect:
    """What one fix changes at scale, against the unfixed large run (positive = more)."""

    label: str
    tokens_per_s_gain: float  # fixed tokens/s ÷ unfixed tokens/s: > 1 helps, < 1 hurts
    step_change_s: float
    compute_change_s: float
    comm_s: float  # the fixed run's all-reduce time, all buckets back to back
    comm_change_s: float
    latency_change_s: float  # its per-message (α) part: more buckets, more messages
    hidden_s: float  # all-reduce overlapped with backward
    hide_cap_s: float  # the backward time: the most overlap can ever hide
    num_buckets: int

    @property
    def helps(self) -> bool:
        return self.tokens_per_s_gain > 1.0


def fix_effects(s: SlowerAtScale) -> tuple[FixEffect, ...]:
    """Each fix's measured effect on the large run, term by term, so a page can say why."""
    base = s.large
    return tuple(
        FixEffect(
            label=f.label,
            tokens_per_s_gain=f.step.tokens_per_s / base.tokens_per_s,
            step_change_s=f.step.step_s - base.step_s,
            compute_change_s=f.step.compute_s - base.compute_s,
            comm_s=f.step.comm_s,
            comm_change_s=f.step.comm_s - base.comm_s,
            latency_change_s=f.step.comm_latency_s - base.comm_latency_s,
            hidden_s=max(0.0, f.step.hidden_comm_s),
            hide_cap_s=f.step.backward_s,
            num_buckets=len(f.step.bucket_bytes),
        )
        for f in s.fixes
    )
