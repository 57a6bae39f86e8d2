"""One all-reduce algorithm run on real inputs and scaled to a tensor size: the A-vs-B comparison's
side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.collectives.algorithms import ALGORITHMS, simulate_all_reduce
from core.collectives.busbw import check_positive, check_ranks
from core.collectives.cost import step_times_s
from core.collectives.trace import CollectiveTrace
from core.hardware import Cluster


@dataclass(frozen=True, kw_only=True, eq=False)
class AlgorithmRun:
    """What one algorithm did on the inputs, with bytes and times scaled to message_bytes per
    GPU.
    """

    algorithm: str
    label: str
    trace: CollectiveTrace
    max_error: float  # max |output - true sum| over every rank and element
    message_bytes: float  # S: the tensor each GPU holds (the simulated one is scaled to it)
    bytes_scale: float  # S / trace.message_bytes
    sent_per_step_bytes: np.ndarray  # (steps, ranks), scaled
    step_times_s: np.ndarray  # (steps,)
    latency_s: float  # the alpha part of time_s: one alpha per step
    time_s: float
    bandwidth_s: float  # the bytes part: each step's slowest message without its alpha

    @property
    def num_steps(self) -> int:
        return self.trace.num_steps

    @property
    def num_ranks(self) -> int:
        return self.trace.num_ranks

    def after(self, steps: int) -> tuple[float, float]:
        """(bytes the busiest GPU has sent, seconds elapsed) once the first `steps` steps are
        done.
        """
        if (
            isinstance(steps, bool)
            or not isinstance(steps, (int, np.integer))
            or not 0 <= steps <= self.num_steps
        ):
            raise ValueError(
                f"steps={steps!r} is outside this run's 0 … {self.num_steps} steps; "
                f"use a whole number in that range"
            )
        sent = self.sent_per_step_bytes[:steps].sum(axis=0)
        return float(sent.max()), float(self.step_times_s[:steps].sum())

    @property
    def max_bytes_sent(self) -> float:
        """Bytes sent by the busiest GPU."""
        return float(self.trace.bytes_sent.max() * self.bytes_scale)

    @property
    def min_bytes_sent(self) -> float:
        """Bytes sent by the least busy GPU."""
        return float(self.trace.bytes_sent.min() * self.bytes_scale)


def timing_elements(num_ranks: int) -> int:
    """Elements per rank that every algorithm splits evenly: a multiple of N (ring, hierarchical)
    and of
    the largest power of two ≤ N (halving-doubling), so scaled bytes and times match a large
    tensor's."""
    num_ranks = check_ranks(num_ranks)
    return math.lcm(num_ranks, 1 << (num_ranks.bit_length() - 1))


def cluster_step_times_s(
    trace: CollectiveTrace,
    cluster: Cluster,
    *,
    bytes_scale: float,
    intra_bandwidth_bytes_per_s: float,
    intra_latency_s: float,
    with_latency: bool = True,
) -> np.ndarray:
    """Seconds per step on a two-tier cluster: a message between GPUs of one node uses the intra
    link;
    one that leaves its node shares that node's NICs with the step's other leaving messages
    (cluster.node_injection_bytes_per_s / k) and pays the network latency. A step lasts as long as
    its
    slowest message (ranks are node-major, as in core.hardware)."""
    g, inj, net_alpha = (
        cluster.gpus_per_node,
        cluster.node_injection_bytes_per_s,
        cluster.inter_link.latency_s,
    )
    out = np.zeros(trace.num_steps)
    for i, step in enumerate(trace.steps):
        if not step.src.size:
            continue
        cross = (step.src // g) != (step.dst // g)
        leaving = np.bincount(step.src[cross] // g, minlength=trace.num_ranks // g + 1)
        bw = np.where(
            cross, inj / np.maximum(leaving[step.src // g], 1), intra_bandwidth_bytes_per_s
        )
        alpha = np.where(cross, net_alpha, intra_latency_s) if with_latency else 0.0
        out[i] = float(np.max(alpha + step.num_bytes * bytes_scale / bw))
    return out


def run_algorithm(
    algorithm: str,
    inputs,
    *,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float = 0.0,
    gpus_per_node: int | None = None,
    inter_bandwidth_bytes_per_s: float | None = None,
    inter_latency_s: float | None = None,
    cluster: Cluster | None = None,
) -> AlgorithmRun:
    """Simulate one registered all-reduce on inputs (num_ranks, num_elements) and time it.

    Step time = alpha + largest message / B (core.collectives.cost.step_times_s); the hierarchical
    algorithm's inter-node steps use the inter_* link when given. With a cluster, every algorithm is
    timed message by message on it (cluster_step_times_s): node-crossing messages share their node's
    NICs, the rest use bandwidth_bytes_per_s / latency_s; the hierarchical node size defaults to the
    cluster's. Scaling the simulated bytes to message_bytes is exact when S splits into the same
    chunk
    proportions as the simulated tensor (use timing_elements(N) elements per rank).
    """
    if cluster is not None:
        gpus_per_node = cluster.gpus_per_node if gpus_per_node is None else gpus_per_node
    trace = simulate_all_reduce(algorithm, inputs, gpus_per_node=gpus_per_node)
    check_positive(message_bytes, "message_bytes", "1e9 (1 GB)")
    scale = message_bytes / trace.message_bytes
    x = np.asarray(inputs)
    # The reference result: every rank must end holding the element-wise sum of all inputs.
    error = np.abs(trace.outputs - x.sum(axis=0, dtype=trace.outputs.dtype)[None, :])
    if cluster is not None:
        if trace.num_ranks % cluster.gpus_per_node:
            raise ValueError(
                f"{trace.num_ranks} GPUs are not whole nodes of {cluster.gpus_per_node}: "
                f"use N a multiple of {cluster.gpus_per_node}"
            )
        link = dict(
            bytes_scale=scale,
            intra_bandwidth_bytes_per_s=bandwidth_bytes_per_s,
            intra_latency_s=latency_s,
        )
        times = cluster_step_times_s(trace, cluster, **link)
        bytes_only = cluster_step_times_s(trace, cluster, with_latency=False, **link)
    else:
        link = dict(inter_bandwidth_bytes_per_s=inter_bandwidth_bytes_per_s, bytes_scale=scale)
        times = step_times_s(
            trace, bandwidth_bytes_per_s, latency_s, inter_latency_s=inter_latency_s, **link
        )
        bytes_only = step_times_s(trace, bandwidth_bytes_per_s, 0.0, inter_latency_s=0.0, **link)
    return AlgorithmRun(
        algorithm=algorithm,
        label=ALGORITHMS[algorithm].label,
        trace=trace,
        max_error=float(error.max()),
        message_bytes=float(message_bytes),
        bytes_scale=scale,
        sent_per_step_bytes=trace.sent_per_step() * scale,
        step_times_s=times,
        latency_s=float(times.sum() - bytes_only.sum()),
        time_s=float(times.sum()),
        bandwidth_s=float(bytes_only.sum()),
    )
