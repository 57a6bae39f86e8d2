"""The scenario "a DP job that scaled to 8 GPUs goes slower at 64", with each fix priced."""
from __future__ import annotations

from dataclasses import dataclass, replace

from core.collectives import scan_bytes_per_rank
from core.dp_scaling import DEFAULT_BUCKET_BYTES, AllReduceKind, DpJob, DpStep, cluster_for, dp_step
from core.hardware import Cluster, make_cluster


def scenario_cluster() -> Cluster:
    """8x A100 80GB nodes (NVLink 3, 300 GB/s per direction) with one 100 GbE NIC per node."""
    return make_cluster(num_nodes=1, gpus_per_node=8, gpu_name="A100 80GB",
                        inter_link_name="100 GbE", nics_per_node=1)


def scenario_job() -> DpJob:
    """A 1.3B-parameter model, DDP with fp32 gradients, 2,048 tokens per GPU, one all-reduce after
    backward (no bucketing, no overlap), flat ring, 40% MFU."""
    return DpJob(num_params=1.3e9, tokens_per_gpu=2048, grad_bytes_per_param=4.0, mfu=0.4,
                 bucket_bytes=None, all_reduce=AllReduceKind.FLAT_RING)


@dataclass(frozen=True, kw_only=True)
class Fix:
    """One remedy applied to the large run, and the step it gives."""

    label: str
    step: DpStep


@dataclass(frozen=True, kw_only=True)
class SlowerAtScale:
    """Weak scaling from small_gpus to large_gpus GPUs, why it slows, and what each fix buys."""

    job: DpJob
    small: DpStep                      # e.g. 8 GPUs: one node, all-reduce on NVLink
    large: DpStep                      # e.g. 64 GPUs: 8 nodes, all-reduce through the NICs
    large_strong: DpStep               # same global batch as the small run, split over large_gpus
    sim_bytes_sent_per_rank_small: float   # measured by the ring simulator, scaled to the message
    sim_bytes_sent_per_rank_large: float
    fixes: tuple[Fix, ...]

    @property
    def step_ratio(self) -> float:
        """How many times longer one step takes at scale (weak scaling)."""
        return self.large.step_s / self.small.step_s

    @property
    def throughput_ratio(self) -> float:
        """Tokens/s at scale over tokens/s on the small run (ideal = large/small GPUs)."""
        return self.large.tokens_per_s / self.small.tokens_per_s

    @property
    def bandwidth_drop(self) -> float:
        """Bottleneck bandwidth inside the node over the bottleneck at scale."""
        return self.small.bottleneck_bytes_per_s / self.large.bottleneck_bytes_per_s


def slower_at_scale(*, job: DpJob | None = None, base: Cluster | None = None, small_gpus: int = 8,
                    large_gpus: int = 64, batch_factor: float = 8.0,
                    bucket_bytes: float = DEFAULT_BUCKET_BYTES) -> SlowerAtScale:
    """Price the slowdown from small_gpus to large_gpus and each fix applied at large_gpus."""
    job = scenario_job() if job is None else job
    base = scenario_cluster() if base is None else base
    if not large_gpus > small_gpus:
        raise ValueError(f"large_gpus={large_gpus} must exceed small_gpus={small_gpus}: the scenario "
                         "compares a run with its scaled-up version; e.g. 8 and 64")
    if not batch_factor > 1:
        raise ValueError(f"batch_factor={batch_factor} must be > 1 to enlarge the per-GPU batch; "
                         "use e.g. 8")
    small_c, large_c = cluster_for(base, small_gpus), cluster_for(base, large_gpus)
    scan = scan_bytes_per_rank([small_gpus, large_gpus], job.grad_bytes, ("ring",))
    bigger = job.tokens_per_gpu * batch_factor
    variants = [
        (f"bucketing ({bucket_bytes / 2**20:g} MiB) + overlap", replace(job, bucket_bytes=bucket_bytes),
         None),
        ("hierarchical all-reduce", replace(job, all_reduce=AllReduceKind.HIERARCHICAL), None),
        (f"per-GPU batch ×{batch_factor:g} ({bigger:,.0f} tokens)", job, bigger),
        ("all three", replace(job, bucket_bytes=bucket_bytes, all_reduce=AllReduceKind.HIERARCHICAL),
         bigger),
    ]
    fixes = tuple(Fix(label=label, step=dp_step(j, large_c, tokens_per_gpu=tok))
                  for label, j, tok in variants)
    return SlowerAtScale(
        job=job, small=dp_step(job, small_c), large=dp_step(job, large_c),
        large_strong=dp_step(job, large_c, tokens_per_gpu=job.tokens_per_gpu * small_gpus / large_gpus),
        sim_bytes_sent_per_rank_small=float(scan.max_bytes_sent["ring"][0]),
        sim_bytes_sent_per_rank_large=float(scan.max_bytes_sent["ring"][1]), fixes=fixes)
