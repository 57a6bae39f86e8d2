"""Per rank: where traced time went (compute vs communication vs overlap vs idle) and its
timeline as runs of one state, from the event columns core.traces.importer reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.traces.importer import CPU_OP, KERNEL, Trace
from core.traces.notes import notes

MAX_SEGMENTS = 2000  # drawn boxes over all ranks (~2k bars stay fast)
MAX_STEPS = 1000  # profiled steps analysed per rank; past it, the first MAX_STEPS (and it says so)
STRAY_SHARE = 0.01  # with no step marks: a cluster of at most 1% of the events …
STRAY_GAP = 10.0  # … separated from the rest by more than 10× the rest's span is an outlier
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


def runs(a, b, lo: float, hi: float, tol: float | None = None) -> tuple[np.ndarray, ...]:
    """Cut [lo, hi] at every boundary of sets a and b: runs of state = (in a) + 2·(in b).
    Edges closer than `tol` (default 1e-9 of the span) are rounding slivers, not runs.
    """
    edges = np.unique(np.concatenate([[lo, hi], a[0], a[1], b[0], b[1]]))
    edges = edges[np.r_[True, np.diff(edges) > (1e-9 * (hi - lo) if tol is None else tol)]]
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
    steps_in_file: int = 0  # ProfilerStep marks in the file (steps: those analysed)
    outside: int = 0  # events left out: before or after the analysed steps, or stray outliers
    categories: tuple[tuple[str, int], ...] = ()  # event categories found, as in the file
    world_size: int | None = None  # distributedInfo.world_size, when the file says

    @property
    def step_s(self) -> float:
        """Traced span per analysed step (the whole span when the file marks no steps)."""
        return self.span_s / max(1, self.steps)


@dataclass(frozen=True, kw_only=True, eq=False)
class TraceAnalysis:
    """Every rank's breakdown on one time axis (aligned: the files share a clock)."""

    ranks: tuple[RankTime, ...]
    aligned: bool
    notes: tuple[str, ...] = ()  # what the reader must know: windows, outliers, mismatched files


def _stray(ts: np.ndarray) -> np.ndarray:
    """Events outside the bulk: a cluster of ≤ STRAY_SHARE of them beyond a gap > STRAY_GAP × the
    rest's span (one event at ts = 0 in a trace on the epoch clock)."""
    keep = np.ones(len(ts), bool)
    for _ in range(3):
        s = np.sort(ts[keep])
        if len(s) < 2:
            break
        i = int(np.argmax(np.diff(s)))  # the widest gap, between s[i] and s[i + 1]
        gap, left, right = s[i + 1] - s[i], i + 1, len(s) - i - 1
        few, rest = (left, s[-1] - s[i + 1]) if left <= right else (right, s[i] - s[0])
        if few > STRAY_SHARE * len(s) or gap <= STRAY_GAP * max(rest, 1.0):
            break
        keep &= ts >= s[i + 1] if left <= right else ts <= s[i]
    return ~keep


def window(t: Trace) -> tuple[np.ndarray, int]:
    """Which events to analyse, and how many steps: the ProfilerStep windows (at most MAX_STEPS;
    work that starts in them counts to its end, as GPU kernels lag their launch), else all events
    but stray outliers."""
    n = min(len(t.step_start_us), MAX_STEPS)
    if n:
        lo, hi = t.step_start_us[0], t.step_end_us[:n].max()
        return (t.ts_us >= lo) & (t.ts_us < hi), n  # the next step's mark starts at hi
    return ~_stray(t.ts_us), 0


def _timeline(t: Trace, shift_us: float, cap: int, use) -> tuple[float, float, tuple, tuple, bool]:
    """(first µs, last µs, exact runs, runs to draw, on GPU) of one rank's events `use`."""
    gpu = bool((t.kind[use] == KERNEL).any())  # with kernels, measure the device (as HTA does)
    use = use & (t.kind == KERNEL) if gpu else use
    lo0 = float(t.ts_us[use].min())
    s = t.ts_us[use] - lo0  # small numbers before the per-thread offsets below
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
        tol=1e-4,  # 0.1 ns: a 2 µs kernel is never a sliver, however long the trace
    )
    k = np.floor(ws[st == 1] / width) * width - lo
    exact = runs(union(ws[st == 1] - k, we[st == 1] - k), union(s[c], e[c]), lo, hi, tol=1e-4)
    shift = lo0 + shift_us
    lo, hi, exact = lo + shift, hi + shift, tuple(x + shift for x in exact[:2]) + (exact[2],)
    if len(exact[0]) <= cap:
        return lo, hi, exact, exact, gpu
    return lo, hi, exact, bin_runs(exact, lo, hi, cap), gpu


def bin_runs(exact, lo: float, hi: float, cap: int) -> tuple[np.ndarray, ...]:
    """Runs that tile [lo, hi] cut into `cap` equal bins, each given the state that fills most of
    it (neighbours of one state joined): a drawing of bounded size."""
    edges, (x0, x1, xs) = np.linspace(lo, hi, cap + 1), exact
    filled = [
        np.diff(np.interp(edges, np.r_[x0, x1[-1]], np.r_[0, np.cumsum((x1 - x0) * (xs == j))]))
        for j in range(4)
    ]
    return _merge(edges[:-1], edges[1:], np.argmax(filled, axis=0).astype(np.int8))


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
                f"`{a.name}` and `{b.name}` both say rank {a.rank}: upload one file per rank "
                "(each process writes its own trace)"
            )
    base, cap = min(t.base_ns for t in traces), max(50, max_segments // len(traces))
    wins = [window(t) for t in traces]
    out = [_timeline(t, (t.base_ns - base) / 1e3, cap, w) for t, (w, _) in zip(traces, wins)]
    for t, o in zip(traces, out):
        if not o[1] > o[0]:
            raise ValueError(
                f"`{t.name}`: its events span 0 µs, so there is no time to split; export a "
                "trace of at least one whole step"
            )
    lo, widest = min(o[0] for o in out), max(o[1] - o[0] for o in out)
    # Files on different clocks (no shared baseTimeNanoseconds) can lie days apart: then each rank
    # is drawn from its own first event.
    aligned = max(o[0] for o in out) - lo <= 10 * widest + 1e6
    ranks = []
    for t, (a, b, exact, draw, gpu), (use, n) in zip(traces, out, wins):
        (s, e, st), origin = exact, (lo if aligned else a)
        d = e - s
        part = [float(d[st == j].sum()) * 1e-6 for j in range(4)]
        ranks.append(
            RankTime(
                rank=t.rank,
                name=t.name,
                source="GPU kernels" if gpu else "CPU ops",
                steps=n,
                steps_in_file=t.num_steps,
                outside=int(len(use) - use.sum()),
                categories=t.categories,
                world_size=t.world_size,
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
    return TraceAnalysis(
        ranks=tuple(ranks),
        aligned=bool(aligned),
        notes=notes(traces, ranks, bool(aligned), MAX_STEPS),
    )
