"""Per rank: where traced time went (compute vs communication vs overlap vs idle) and its
timeline as runs of one state, from the event columns core.traces.importer reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.traces.importer import CPU_OP, KERNEL, Trace

MAX_SEGMENTS = 2000  # drawn boxes over all ranks (~2k bars stay fast)
IDLE, COMPUTE, COMM_ONLY, OVERLAP = 0, 1, 2, 3  # timeline states: compute bit 1 + comm bit 2


# Interval sets are (start, end) arrays, sorted and disjoint.
def union(start, end) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals into a sorted disjoint set (touching ones join)."""
    o = np.argsort(start, kind="stable")
    s, e = np.asarray(start, float)[o], np.maximum.accumulate(np.asarray(end, float)[o])
    return s[s > np.r_[-np.inf, e[:-1]]], e[np.r_[s[1:], np.inf] > e]


def _inside(iv, t: np.ndarray) -> np.ndarray:
    return t < np.r_[iv[1], -np.inf][np.searchsorted(iv[0], t, side="right") - 1]  # -1: before all


def _merge(s, e, state) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Join neighbouring segments of the same state."""
    new = np.diff(state, prepend=-1) != 0
    return s[new], e[np.diff(state, append=-1) != 0], state[new]


def runs(a, b, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut [lo, hi] at every boundary of sets a and b: runs of state = (in a) + 2·(in b)."""
    edges = np.unique(np.concatenate([[lo, hi], a[0], a[1], b[0], b[1]]))
    edges = edges[np.r_[True, np.diff(edges) > 1e-9 * (hi - lo)]]  # rounding slivers are not runs
    mid = (edges[:-1] + edges[1:]) / 2
    return _merge(edges[:-1], edges[1:], (_inside(a, mid) + 2 * _inside(b, mid)).astype(np.int8))


@dataclass(frozen=True, kw_only=True, eq=False)
class RankTime:
    """Where one rank's traced time went (seconds), and its timeline as runs of one state each."""

    rank: int
    name: str
    source: str  # "GPU kernels" or "CPU ops"
    steps: int
    start_s: float  # first event, from the earliest event of all ranks
    span_s: float
    compute_s: float  # |compute|: union of non-communication ops, so nesting counts once
    comm_s: float  # |comm|: union of collectives
    overlap_s: float  # |compute ∩ comm|
    idle_s: float  # span − |compute ∪ comm|
    seg_start_s: np.ndarray  # the timeline to draw (IDLE, COMPUTE, COMM_ONLY, OVERLAP runs)
    seg_end_s: np.ndarray
    seg_state: np.ndarray
    bin_s: float  # > 0: coarsened to bins this wide, each showing its dominant state
    comm_names: tuple[tuple[str, int, float], ...]


@dataclass(frozen=True, kw_only=True, eq=False)
class TraceAnalysis:
    """Every rank's breakdown on one time axis (aligned: the files share a clock)."""

    ranks: tuple[RankTime, ...]
    aligned: bool


def _timeline(t: Trace, shift_us: float, cap: int) -> tuple[float, float, tuple, tuple, bool]:
    """(first µs, last µs, exact runs, runs to draw, on GPU) of one rank."""
    gpu = bool((t.kind == KERNEL).any())  # with kernels, measure the device (as HTA does)
    use = t.kind == KERNEL if gpu else np.ones(len(t.kind), bool)
    s = t.ts_us[use] + shift_us
    e, c = s + t.dur_us[use], t.comm[use]
    work = ~c & (t.kind[use] == (KERNEL if gpu else CPU_OP))
    lo, hi = float(s.min()), float(e.max())
    # Compute = each thread's work minus that thread's comm (a CPU op wrapping a collective is comm
    # inside, compute outside). Each thread gets its own window, so one vectorised pass does all.
    width = hi - lo + 1.0
    off = t.thread[use] * width - lo
    ws, we, st = runs(
        union(s[work] + off[work], e[work] + off[work]),
        union(s[c] + off[c], e[c] + off[c]),
        0.0,
        hi + off.max(),
    )
    k = np.floor(ws[st == 1] / width) * width - lo
    exact = runs(union(ws[st == 1] - k, we[st == 1] - k), union(s[c], e[c]), lo, hi)
    if len(exact[0]) <= cap:
        return lo, hi, exact, exact, gpu
    # Too many to draw: cap equal bins, each given the state that fills most of it.
    edges, (x0, x1, xs) = np.linspace(lo, hi, cap + 1), exact
    filled = [
        np.diff(np.interp(edges, np.r_[x0, x1[-1]], np.r_[0, np.cumsum((x1 - x0) * (xs == j))]))
        for j in range(4)
    ]
    return (
        lo,
        hi,
        exact,
        _merge(edges[:-1], edges[1:], np.argmax(filled, axis=0).astype(np.int8)),
        gpu,
    )


def analyze(traces, *, max_segments: int = MAX_SEGMENTS) -> TraceAnalysis:
    """Per rank: compute, communication, overlap and idle seconds, and a drawable timeline."""
    traces = sorted(traces, key=lambda t: t.rank)
    if not traces:
        raise ValueError(
            "no trace to analyse: upload one profiler trace (.json or .json.gz) per rank"
        )
    for a, b in zip(traces, traces[1:]):
        if a.rank == b.rank:
            raise ValueError(
                f"{a.name} and {b.name} both say rank {a.rank}: upload one file per rank "
                "(each process writes its own trace)"
            )
    base, cap = min(t.base_ns for t in traces), max(50, max_segments // len(traces))
    out = [_timeline(t, (t.base_ns - base) / 1e3, cap) for t in traces]
    for t, o in zip(traces, out):
        if not o[1] > o[0]:
            raise ValueError(
                f"{t.name}: its events span 0 µs, so there is no time to split; export a "
                "trace of at least one whole step"
            )
    lo, widest = min(o[0] for o in out), max(o[1] - o[0] for o in out)
    # Files on different clocks (no shared baseTimeNanoseconds) can lie days apart: then each rank
    # is drawn from its own first event.
    aligned = max(o[0] for o in out) - lo <= 10 * widest + 1e6
    ranks = []
    for t, (a, b, exact, draw, gpu) in zip(traces, out):
        (s, e, st), origin = exact, (lo if aligned else a)
        d = e - s
        part = [float(d[st == j].sum()) * 1e-6 for j in range(4)]
        ranks.append(
            RankTime(
                rank=t.rank,
                name=t.name,
                source="GPU kernels" if gpu else "CPU ops",
                steps=t.num_steps,
                start_s=(a - origin) * 1e-6,
                span_s=(b - a) * 1e-6,
                compute_s=part[1] + part[3],
                comm_s=part[2] + part[3],
                overlap_s=part[3],
                idle_s=(b - a) * 1e-6 - sum(part[1:]),
                seg_start_s=(draw[0] - origin) * 1e-6,
                seg_end_s=(draw[1] - origin) * 1e-6,
                seg_state=draw[2],
                bin_s=(b - a) * 1e-6 / cap if draw is not exact else 0.0,
                comm_names=t.comm_names,
            )
        )
    return TraceAnalysis(ranks=tuple(ranks), aligned=bool(aligned))
