"""A simulated pipeline step: its ops as numpy columns, idle time and the bubble metrics on it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from core.pipeline.schedules import SCHEDULES

KINDS = ("F", "B", "I", "W")  # kind codes 0..3 in OpTable.kind


class Op(NamedTuple):
    """One timed op; `overlapped` marks the two halves of a DualPipeV forward+backward pair."""

    rank: int
    stage: int
    chunk: int
    microbatch: int
    kind: str
    start_s: float
    end_s: float
    overlapped: bool


@dataclass(frozen=True, kw_only=True, eq=False)
class OpTable:
    """All ops as read-only numpy columns, sorted by rank then start; iterates as Op tuples."""

    rank: np.ndarray
    stage: np.ndarray
    chunk: np.ndarray
    microbatch: np.ndarray
    kind: np.ndarray  # int8 code into KINDS
    start_s: np.ndarray
    end_s: np.ndarray
    overlapped: np.ndarray

    def __len__(self) -> int:
        return len(self.rank)

    def __getitem__(self, i: int) -> Op:
        return Op(
            int(self.rank[i]),
            int(self.stage[i]),
            int(self.chunk[i]),
            int(self.microbatch[i]),
            KINDS[self.kind[i]],
            float(self.start_s[i]),
            float(self.end_s[i]),
            bool(self.overlapped[i]),
        )

    def __iter__(self) -> Iterator[Op]:
        cols = (
            self.rank.tolist(),
            self.stage.tolist(),
            self.chunk.tolist(),
            self.microbatch.tolist(),
            [KINDS[k] for k in self.kind.tolist()],
            self.start_s.tolist(),
            self.end_s.tolist(),
            self.overlapped.tolist(),
        )
        return (Op(*row) for row in zip(*cols))


@dataclass(frozen=True, kw_only=True, eq=False)
class PipelineResult:
    """A simulated schedule: timeline, idle time and activation memory per rank."""

    schedule: str
    num_stages: int  # P, pipeline ranks
    num_microbatches: int
    num_chunks: int
    forward_s: float
    backward_input_s: float
    backward_weight_s: float
    p2p_s: float
    overlap_s: float
    makespan_s: float
    ops: OpTable = field(repr=False)
    busy_s: tuple[float, ...]
    idle_s: tuple[float, ...]
    bubble_fraction: float  # metric A: Σ idle / (P · makespan)
    peak_activations: tuple[int, ...]  # (chunk, micro-batch) activations held at once, per rank

    @property
    def label(self) -> str:
        info = SCHEDULES.get(self.schedule)
        return info.label if info else self.schedule

    @property
    def peak_activation_stages(self) -> tuple[float, ...]:
        """Peak activations in full-stage equivalents (a chunk holds 1/v of a stage's)."""
        return tuple(k / self.num_chunks for k in self.peak_activations)

    @property
    def bubble_ratio(self) -> float:
        return bubble_ratio(self)

    @property
    def span_bubble(self) -> float:
        return span_bubble(self)


def peak_activations(ops: OpTable, p: int) -> tuple[int, ...]:
    """Per-rank max of held activations: +1 at F start, -1 at B end (or W end when split)."""
    acquire = ops.kind == 0
    release = (ops.kind == 1) | (ops.kind == 3)
    t = np.concatenate([ops.start_s[acquire], ops.end_s[release]])
    r = np.concatenate([ops.rank[acquire], ops.rank[release]])
    delta = np.concatenate([np.ones(acquire.sum(), np.int64), -np.ones(release.sum(), np.int64)])
    order = np.lexsort((delta, t, r))  # by rank, then time; at a tie release before acquire
    # Every activation a rank takes it also frees, so the running sum is back to 0 between ranks.
    level = np.cumsum(delta[order])
    peaks = np.zeros(p, np.int64)
    np.maximum.at(peaks, r[order], level)
    return tuple(int(x) for x in peaks)


def bubble_share(result: PipelineResult) -> float:
    """Metric A: idle share of all rank-time, Σ idle / (P · makespan)."""
    return sum(result.idle_s) / (result.num_stages * result.makespan_s)


def bubble_ratio(result: PipelineResult) -> float:
    """Metric B: idle relative to ideal compute, Σ idle / Σ busy (= A / (1 − A))."""
    return sum(result.idle_s) / sum(result.busy_s)


def span_bubble(result: PipelineResult) -> float:
    """Metric C: 1 − busy / span on the rank whose own first-to-last-op span is longest."""
    ops = result.ops
    p = result.num_stages
    first = np.full(p, np.inf)
    last = np.zeros(p)
    np.minimum.at(first, ops.rank, ops.start_s)
    np.maximum.at(last, ops.rank, ops.end_s)
    span = last - first
    r = int(np.argmax(span))
    return float(1.0 - result.busy_s[r] / span[r])
