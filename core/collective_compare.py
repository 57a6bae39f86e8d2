"""One all-reduce algorithm run on real inputs and scaled to a tensor size: the A-vs-B comparison's side."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.allreduce_algorithms import ALGORITHMS, simulate_all_reduce
from core.collective_cost import step_times_s
from core.collectives_busbw import check_positive
from core.collectives_trace import CollectiveTrace
from core.hardware import Cluster


@dataclass(frozen=True, kw_only=True, eq=False)
class AlgorithmRun:
    """What one algorithm did on the inputs, with bytes and times scaled to message_bytes per GPU."""

    algorithm: str
    label: str
    trace: CollectiveTrace
    max_error: float                 # max |output - true sum| over every rank and element
    message_bytes: float             # S: the tensor each GPU holds (the simulated one is scaled to it)
    bytes_scale: float               # S / trace.message_bytes
    sent_per_step_bytes: np.ndarray  # (steps, ranks), scaled
    step_times_s: np.ndarray         # (steps,)
    latency_s: float                 # the alpha part of time_s: one alpha per step
    time_s: float

    @property
    def num_steps(self) -> int:
        return self.trace.num_steps

    @property
    def num_ranks(self) -> int:
        return self.trace.num_ranks

    @property
    def bandwidth_s(self) -> float:
        """The bytes part of time_s: each step's largest message over its link."""
        return self.time_s - self.latency_s

    def after(self, steps: int) -> tuple[float, float]:
        """(bytes the busiest GPU has sent, seconds elapsed) once the first `steps` steps are done."""
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 0 <= steps <= self.num_steps:
            raise ValueError(f"steps={steps!r} is outside this run's 0 … {self.num_steps} steps; "
                             f"use a whole number in that range")
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


def run_algorithm(algorithm: str, inputs, *, message_bytes: float, bandwidth_bytes_per_s: float,
                  latency_s: float = 0.0, gpus_per_node: int | None = None,
                  inter_bandwidth_bytes_per_s: float | None = None,
                  inter_latency_s: float | None = None, cluster: Cluster | None = None) -> AlgorithmRun:
    """Simulate one registered all-reduce on inputs (num_ranks, num_elements) and time it.

    Step time = alpha + largest message / B (core.collective_cost.step_times_s); the hierarchical
    algorithm's inter-node steps use the inter_* link when given. A cluster supplies the defaults
    for those three: its node size, its network per GPU (all GPUs of a node cross at once, as in
    hierarchical_all_reduce_cost) and its network latency; its num_nodes is not used (N is the
    inputs' row count). Scaling the simulated bytes to message_bytes is exact when S splits into
    the same chunk proportions as the simulated tensor.
    """
    if cluster is not None:
        gpus_per_node = cluster.gpus_per_node if gpus_per_node is None else gpus_per_node
        if inter_bandwidth_bytes_per_s is None:
            inter_bandwidth_bytes_per_s = cluster.inter_bandwidth_per_gpu_bytes_per_s
        inter_latency_s = cluster.inter_link.latency_s if inter_latency_s is None else inter_latency_s
    trace = simulate_all_reduce(algorithm, inputs, gpus_per_node=gpus_per_node)
    check_positive(message_bytes, "message_bytes", "1e9 (1 GB)")
    scale = message_bytes / trace.message_bytes
    x = np.asarray(inputs)
    # The reference result: every rank must end holding the element-wise sum of all inputs.
    error = np.abs(trace.outputs - x.sum(axis=0, dtype=trace.outputs.dtype)[None, :])
    link = dict(inter_bandwidth_bytes_per_s=inter_bandwidth_bytes_per_s, bytes_scale=scale)
    times = step_times_s(trace, bandwidth_bytes_per_s, latency_s, inter_latency_s=inter_latency_s,
                         **link)
    bytes_only = step_times_s(trace, bandwidth_bytes_per_s, 0.0, inter_latency_s=0.0, **link)
    return AlgorithmRun(algorithm=algorithm, label=ALGORITHMS[algorithm].label, trace=trace,
                        max_error=float(error.max()), message_bytes=float(message_bytes),
                        bytes_scale=scale, sent_per_step_bytes=trace.sent_per_step() * scale,
                        step_times_s=times, latency_s=float((times - bytes_only).sum()),
                        time_s=float(times.sum()))
