"""Data-parallel step time: compute + exposed gradient all-reduce, bucketed and overlapped with
backward.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from core.checks import positive, whole_number
from core.collectives import all_reduce_coefficients
from core.data_parallel.allreduce import AllReduceKind, all_reduce_pick, bottleneck
from core.hardware import Cluster
from core.training import Efficiency

# PyTorch DDP: kDefaultBucketBytesCap = 25 MiB and kDefaultFirstBucketBytes = 1 MiB
# (pytorch/pytorch torch/csrc/distributed/c10d/reducer.hpp).
DEFAULT_BUCKET_BYTES = 25 * 2**20
FIRST_BUCKET_BYTES = 2**20


class Scaling(str, Enum):
    """Weak: fixed batch per GPU. Strong: fixed global batch split over more GPUs."""

    WEAK = "weak"
    STRONG = "strong"


@dataclass(frozen=True, kw_only=True)
class DpJob:
    """A data-parallel training job: model size, per-GPU batch, precision, bucketing."""

    num_params: float
    tokens_per_gpu: float
    # bf16 gradients, the app's one traffic convention: the default recipe's 2-byte gradients
    # (core.training RECIPES["mixed_adam"], as the memory page and planner count them). PyTorch
    # DDP under autocast keeps fp32 gradients and all-reduces 4 B each: twice the bytes.
    grad_bytes_per_param: float = 2.0
    mfu: float = 0.4  # achieved fraction of dense peak FLOP/s
    flops_per_param_token: float = 6.0  # 6N rule: 2N forward + 4N backward (Kaplan et al. 2020)
    bucket_bytes: float | None = DEFAULT_BUCKET_BYTES  # None: one all-reduce after backward
    first_bucket_bytes: float = FIRST_BUCKET_BYTES
    # The textbook ring by default (what a fitted gloo trace replays, core.traces); the pages,
    # scenarios and planner ask for AllReduceKind.NCCL, NCCL's tuned pick.
    all_reduce: AllReduceKind = AllReduceKind.FLAT_RING
    # Achievable link shares; None: NCCL at the defaults, the textbook kinds at line rate.
    efficiency: Efficiency | None = None

    def __post_init__(self) -> None:
        for f, fix in (
            ("num_params", "use e.g. 7e9"),
            ("tokens_per_gpu", "use e.g. 4096"),
            ("grad_bytes_per_param", "use 4 (fp32) or 2 (bf16)"),
            ("flops_per_param_token", "use 6 (the 6N rule)"),
        ):
            positive(f, getattr(self, f), fix=fix)
        positive("mfu", self.mfu, fix="it is a fraction of peak FLOP/s; use e.g. 0.4", hi=1.0)
        if self.bucket_bytes is not None and not self.bucket_bytes >= 1:
            raise ValueError(
                f"bucket_bytes={self.bucket_bytes!r} must be ≥ 1 byte (or None for no "
                "bucketing); PyTorch's default is 25 MiB = 26,214,400 B"
            )
        object.__setattr__(self, "all_reduce", AllReduceKind(self.all_reduce))

    @property
    def grad_bytes(self) -> float:
        return self.num_params * self.grad_bytes_per_param


def bucket_sizes(
    total_bytes: float, bucket_bytes: float | None, first_bucket_bytes: float = FIRST_BUCKET_BYTES
) -> np.ndarray:
    """Bytes of each bucket in launch order: a small first bucket, then full ones, then the rest."""
    if bucket_bytes is None or bucket_bytes >= total_bytes:
        return np.array([float(total_bytes)])
    first = min(first_bucket_bytes, total_bytes)
    rest = total_bytes - first
    full, tail = divmod(rest, bucket_bytes)
    sizes = [first] + [bucket_bytes] * int(full) + ([tail] if tail > 0 else [])
    return np.array(sizes, dtype=float)


def overlap_schedule(ready_s: np.ndarray, comm_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and finish of each bucket's all-reduce on one stream: finish_i = max(r_i, f_{i-1}) +
    c_i.

    Exposure recurrence of docs/notes/collectives.md §4; buckets run in launch order. Unrolled,
    finish_n = C_n + max_{k≤n}(r_k − C_{k−1}) with C the running sum of c: one vectorised pass.
    """
    ready_s, comm_s = np.asarray(ready_s, dtype=float), np.asarray(comm_s, dtype=float)
    total = np.cumsum(comm_s)
    finish = total + np.maximum.accumulate(ready_s - (total - comm_s))
    return finish - comm_s, finish


def cluster_for(base: Cluster, num_gpus: int) -> Cluster:
    """The base cluster's node type, with as many nodes as num_gpus needs (a partial node if <
    1).
    """
    g = base.gpus_per_node
    num_gpus = whole_number("num_gpus", num_gpus, fix=f"use e.g. {g}")
    if num_gpus <= g:
        return replace(
            base,
            num_nodes=1,
            gpus_per_node=int(num_gpus),
            nics_per_node=min(base.nics_per_node, int(num_gpus)),
        )
    if num_gpus % g:
        raise ValueError(
            f"{num_gpus} GPUs is not a whole number of {g}-GPU nodes: data parallelism "
            f"over nodes uses full nodes here; use a multiple of {g}"
        )
    return replace(base, num_nodes=int(num_gpus) // g)


@dataclass(frozen=True, kw_only=True)
class DpStep:
    """One data-parallel step on num_gpus GPUs: compute, gradient all-reduce, what stays exposed."""

    num_gpus: int
    num_nodes: int
    tokens_per_gpu: float
    forward_s: float
    backward_s: float
    grad_bytes: float  # each rank's gradient buffer (the all-reduce message)
    bytes_sent_per_rank: float  # ring: 2(p-1)/p x grad_bytes
    bottleneck_link: str
    bottleneck_bytes_per_s: float
    comm_s: float  # all buckets' all-reduces back to back
    comm_latency_s: float  # the part of comm_s that is per-message latency (α terms)
    exposed_comm_s: float  # what the step waits for after backward ends
    bucket_bytes: np.ndarray
    bucket_ready_s: np.ndarray  # from the start of forward
    bucket_start_s: np.ndarray
    bucket_finish_s: np.ndarray
    bucket_algorithm: tuple[str, ...] = ()  # what ran for each bucket (NCCL: algorithm / protocol)

    @property
    def algorithms(self) -> str:
        """What ran, with how many buckets each: 'Tree (double binary) / LL128 ×1067; …'."""
        names = list(dict.fromkeys(self.bucket_algorithm))
        if len(names) == 1:
            return names[0]
        return "; ".join(f"{a} ×{self.bucket_algorithm.count(a)}" for a in names)

    @property
    def compute_s(self) -> float:
        return self.forward_s + self.backward_s

    @property
    def step_s(self) -> float:
        return self.compute_s + self.exposed_comm_s

    @property
    def hidden_comm_s(self) -> float:
        return self.comm_s - self.exposed_comm_s

    @property
    def tokens_per_s(self) -> float:
        return self.num_gpus * self.tokens_per_gpu / self.step_s

    @property
    def efficiency(self) -> float:
        """Throughput / (N x one GPU's comm-free throughput) = compute_s / step_s."""
        return self.compute_s / self.step_s


def dp_step(job: DpJob, cluster: Cluster, *, tokens_per_gpu: float | None = None) -> DpStep:
    """Step time of a DP job on every GPU of a cluster (the whole cluster is the DP group)."""
    tokens = job.tokens_per_gpu if tokens_per_gpu is None else tokens_per_gpu
    positive("tokens_per_gpu", tokens, fix="use e.g. 4096")
    flops = job.flops_per_param_token * job.num_params * tokens
    compute_s = flops / (cluster.gpu.bf16_flops_per_s * job.mfu)
    fwd, bwd = compute_s / 3, 2 * compute_s / 3  # backward = 2 x forward (Kaplan et al. 2020)
    p = cluster.num_gpus
    sizes = bucket_sizes(job.grad_bytes, job.bucket_bytes, job.first_bucket_bytes)
    # Buckets come in at most three sizes (first, full, tail): price each size once.
    unique, inverse = np.unique(sizes, return_inverse=True)
    eff = job.efficiency
    picks = [all_reduce_pick(cluster, float(b), job.all_reduce, efficiency=eff) for b in unique]
    comm = np.array([pk.time_s for pk in picks])[inverse]
    latency = np.array([pk.latency_s for pk in picks])[inverse]
    if job.bucket_bytes is None:
        ready = np.array([fwd + bwd])  # one all-reduce after loss.backward()
    else:
        # Gradients become ready in reverse layer order at a uniform rate through backward
        # [assumption: parameters spread evenly over backward time]; a bucket launches when full.
        ready = fwd + bwd * np.cumsum(sizes) / job.grad_bytes
    start, finish = overlap_schedule(ready, comm)
    exposed = max(0.0, float(finish[-1]) - (fwd + bwd))
    name, bw = bottleneck(cluster, job.all_reduce, job.efficiency)
    return DpStep(
        num_gpus=p,
        num_nodes=cluster.num_nodes,
        tokens_per_gpu=tokens,
        forward_s=fwd,
        backward_s=bwd,
        grad_bytes=job.grad_bytes,
        bytes_sent_per_rank=all_reduce_coefficients("ring", p)[1] * job.grad_bytes,
        bottleneck_link=name,
        bottleneck_bytes_per_s=bw,
        comm_s=float(comm.sum()),
        comm_latency_s=float(latency.sum()),
        bucket_algorithm=tuple(picks[i].label for i in inverse),
        exposed_comm_s=exposed,
        bucket_bytes=sizes,
        bucket_ready_s=ready,
        bucket_start_s=start,
        bucket_finish_s=finish,
    )


@dataclass(frozen=True, kw_only=True)
class ScalingCurve:
    """DP steps for a sweep of GPU counts under weak or strong scaling."""

    scaling: Scaling
    steps: tuple[DpStep, ...]

    @property
    def num_gpus(self) -> np.ndarray:
        return np.array([s.num_gpus for s in self.steps])

    def column(self, attr: str) -> np.ndarray:
        """One DpStep attribute across the sweep, e.g. column('step_s')."""
        return np.array([getattr(s, attr) for s in self.steps], dtype=float)


def scaling_curve(
    job: DpJob,
    base: Cluster,
    gpu_counts=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
    *,
    scaling: Scaling = Scaling.WEAK,
    global_batch_tokens: float | None = None,
) -> ScalingCurve:
    """Sweep N: weak keeps job.tokens_per_gpu; strong splits a fixed global batch over N."""
    scaling = Scaling(scaling)
    total = None  # weak scaling: every GPU keeps job.tokens_per_gpu
    if scaling is Scaling.STRONG:
        total = (
            job.tokens_per_gpu * gpu_counts[0]
            if global_batch_tokens is None
            else global_batch_tokens
        )
        if total < max(gpu_counts):
            raise ValueError(
                f"global batch of {total:g} tokens cannot be split over "
                f"{max(gpu_counts)} GPUs: strong scaling needs ≥ 1 token per GPU; "
                f"use a global batch ≥ {max(gpu_counts)} tokens or fewer GPUs"
            )
    steps = tuple(
        dp_step(job, cluster_for(base, n), tokens_per_gpu=None if total is None else total / n)
        for n in gpu_counts
    )
    return ScalingCurve(scaling=scaling, steps=steps)
