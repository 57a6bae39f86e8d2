"""Cut one simulated pipeline step into its three windows — the forward fill, the steady state
and the backward drain — and count, per pipeline rank, what each window holds: compute share,
forward and backward ops, sends to the neighbouring stages, activations in flight.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.pipeline import PipelineResult

KF, KB, KI, KW = 0, 1, 2, 3  # kind codes of core.pipeline's OpTable (KINDS = F, B, I, W)


@dataclass(frozen=True, kw_only=True)
class Window:
    """One time window of the pipeline part of a step; every tuple is indexed by pipeline rank."""

    key: str  # "fill", "steady" or "drain"
    start_s: float
    end_s: float
    busy: tuple[float, ...]  # share of the window each rank computes (the rest it waits)
    forwards: tuple[float, ...]  # forward ops started here, in full-stage units (a chunk: 1/v)
    backwards: tuple[float, ...]  # backward ops (B, or I of a split backward), same units
    sends_forward: tuple[int, ...]  # activation sends to the next stage (chunk ops)
    sends_backward: tuple[int, ...]  # gradient sends to the previous stage
    held: tuple[float, ...]  # most micro-batch activations held at once, full-stage units

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


def _held_peak(result: PipelineResult, rank: int, lo: float, hi: float) -> float:
    """Most (chunk, micro-batch) activations rank holds at once in [lo, hi], in stage units."""
    # Same bookkeeping as core.pipeline's peak_activations: +1 at F start, -1 at B (or W) end;
    # at a tie the release comes first.
    ops = result.ops
    mine = ops.rank == rank
    acquire, release = mine & (ops.kind == KF), mine & ((ops.kind == KB) | (ops.kind == KW))
    t = np.concatenate([ops.start_s[acquire], ops.end_s[release]])
    d = np.concatenate([np.ones(acquire.sum()), -np.ones(release.sum())])
    order = np.lexsort((d, t))
    t, level = t[order], np.cumsum(d[order])
    before = level[t <= lo]
    inside = level[(t > lo) & (t < hi)]
    start = before[-1] if len(before) else 0.0
    return float(max(start, inside.max() if len(inside) else start)) / result.num_chunks


def _window(result: PipelineResult, key: str, lo: float, hi: float, last: bool) -> Window:
    ops, p, v = result.ops, result.num_stages, result.num_chunks
    top = int(ops.stage.max()) if len(ops) else 0  # the last virtual stage sends nothing on
    started = (ops.start_s >= lo) & ((ops.start_s <= hi) if last else (ops.start_s < hi))
    overlap = np.clip(np.minimum(ops.end_s, hi) - np.maximum(ops.start_s, lo), 0.0, None)
    span = hi - lo
    busy, fwd, bwd, s_f, s_b = [], [], [], [], []
    for r in range(p):
        mine = ops.rank == r
        busy.append(min(1.0, float(overlap[mine].sum()) / span) if span > 0 else 0.0)
        f = mine & started & (ops.kind == KF)
        b = mine & started & ((ops.kind == KB) | (ops.kind == KI))
        fwd.append(float(f.sum()) / v)
        bwd.append(float(b.sum()) / v)
        s_f.append(int((f & (ops.stage < top)).sum()))
        s_b.append(int((b & (ops.stage > 0)).sum()))
    return Window(
        key=key,
        start_s=lo,
        end_s=hi,
        busy=tuple(busy),
        forwards=tuple(fwd),
        backwards=tuple(bwd),
        sends_forward=tuple(s_f),
        sends_backward=tuple(s_b),
        held=tuple(_held_peak(result, r, lo, hi) for r in range(p)),
    )


def pipeline_windows(result: PipelineResult) -> tuple[Window, ...]:
    """Fill [0, first backward), steady [first backward, last forward end), drain [.., end]."""
    ops = result.ops
    backward = (ops.kind == KB) | (ops.kind == KI)
    first_b = float(ops.start_s[backward].min())
    last_f = float(ops.end_s[ops.kind == KF].max())
    end = result.makespan_s
    cuts = [("fill", 0.0, min(first_b, last_f))]
    if last_f > first_b:  # 1F1B-like: forwards and backwards interleave between the two
        cuts.append(("steady", first_b, last_f))
    cuts.append(("drain", max(first_b, last_f), end))
    return tuple(
        _window(result, k, lo, hi, last=i == len(cuts) - 1) for i, (k, lo, hi) in enumerate(cuts)
    )
