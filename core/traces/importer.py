"""Read PyTorch profiler traces (Chrome trace-event JSON): per rank, compute vs communication vs
idle.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass

import numpy as np

MB = 1e6
MAX_BYTES = 25 * MB  # an upload as sent (gzipped or plain)
MAX_UNCOMPRESSED_BYTES = 300 * MB  # the JSON text after gunzip
MAX_EVENTS = 2_000_000
MAX_SEGMENTS = 2000  # drawn boxes over all ranks (~2k bars stay fast: docs/notes/plotly.md §1)
TRIM = "trim the trace to a few steps (torch.profiler schedule(wait=1, warmup=1, active=2))"
# Collectives by name: NCCL kernels (ncclDevKernel_AllReduce…), gloo work (gloo:all_reduce), c10d
# dispatcher ops (c10d::allreduce_), record_param_comms. aten:: ops never are (aten::broadcast_to).
COMM = re.compile(
    r"nccl|gloo|c10d|record_param_comms|all_?reduce|all_?gather|reduce_?scatter|"
    r"all_?to_?all|broadcast|barrier|\b(i?send|i?recv)\b",
    re.IGNORECASE,
)
STEP = re.compile(r"ProfilerStep#\d+")
OTHER, CPU_OP, KERNEL = 0, 1, 2  # event kinds (OTHER: annotations, runtime calls…)
IDLE, COMPUTE, COMM_ONLY, OVERLAP = 0, 1, 2, 3  # timeline states: compute bit 1 + comm bit 2


@dataclass(frozen=True, kw_only=True, eq=False)
class Trace:
    """One rank's usable complete events as numpy columns (µs, as in the file)."""

    name: str
    rank: int
    base_ns: int  # baseTimeNanoseconds (the ts origin) or 0
    ts_us: np.ndarray
    dur_us: np.ndarray
    thread: np.ndarray  # index of the event's (pid, tid)
    kind: np.ndarray  # OTHER, CPU_OP or KERNEL
    comm: np.ndarray  # bool: a collective, by name
    comm_names: tuple[tuple[str, int, float], ...]  # (name, count, total µs), most time first
    num_steps: int  # ProfilerStep#N annotations
    skipped: int  # "X" events dropped for a bad ts or dur


def _fail(name: str, msg: str) -> ValueError:
    return ValueError(f"{name}: {msg}")


def _gunzip(data: bytes, name: str, limit: float) -> bytes:
    """Inflate every gzip member 1 MB at a time and stop past `limit`: a gzip bomb never expands."""
    out, size, rest = [], 0, data
    try:
        while rest:
            d, buf = zlib.decompressobj(wbits=31), rest
            while not d.eof:
                chunk, buf = d.decompress(buf, 1 << 20), d.unconsumed_tail
                if not chunk and not buf:
                    raise _fail(
                        name,
                        "the gzip stream ends early (truncated file): the upload or the "
                        "export was cut off; export the trace again",
                    )
                size += len(chunk)
                if size > limit:
                    raise _fail(
                        name,
                        f"unzips to more than {limit / MB:.0f} MB (the limit) from "
                        f"{len(data) / MB:.2g} MB: {TRIM}",
                    )
                out.append(chunk)
            rest = d.unused_data.lstrip(
                b"\0"
            )  # gzip allows several members; zero padding is ignored
    except zlib.error as err:
        raise _fail(
            name,
            f"not a valid gzip file ({err}): export the trace again, or upload the plain .json",
        ) from None
    return b"".join(out)


def _no_constant(token: str):
    raise ValueError(f"{token} is not standard JSON")


def _parse(text: bytes, name: str):
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        if err.msg.startswith("Unterminated string") or not err.doc[err.pos :].strip():
            raise _fail(
                name,
                f"the JSON ends early ({err.msg} at character {err.pos:,}): the file is "
                "truncated; export the trace again",
            ) from None
        raise _fail(
            name,
            f"not valid JSON at line {err.lineno}, column {err.colno} ({err.msg}): "
            "upload the .json or .json.gz that torch.profiler wrote",
        ) from None
    except RecursionError:
        raise _fail(name, "the JSON is nested too deeply to be a Chrome trace") from None
    except ValueError as err:  # NaN / Infinity, bad UTF-8, a 5,000-digit number
        raise _fail(name, f"not valid JSON ({str(err)[:120]}): export the trace again") from None


def _num(v) -> float | None:
    """A finite number, else None (bools, strings, NaN and 400-digit integers are not)."""
    ok = isinstance(v, float) or isinstance(v, int) and not isinstance(v, bool) and abs(v) < 10**300
    return float(v) if ok and math.isfinite(v) else None


def load_trace(
    data: bytes,
    *,
    name: str,
    default_rank: int = 0,
    max_bytes: float = MAX_BYTES,
    max_uncompressed_bytes: float = MAX_UNCOMPRESSED_BYTES,
    max_events: int = MAX_EVENTS,
) -> Trace:
    """Parse one profiler trace (plain or gzipped JSON); a ValueError says what is wrong and the
    fix.
    """
    name = re.sub(r"[^\w .+=@-]", "_", str(name))[:100] or "trace"  # safe to show, even as Markdown
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise _fail(name, f"expected the file's bytes, got {type(data).__name__}")
    data, limit = bytes(data), max_uncompressed_bytes
    gz = data[:2] == b"\x1f\x8b"
    if len(data) > (cap := max_bytes if gz else min(max_bytes, limit)):
        raise _fail(
            name,
            f"file is {len(data) / MB:.0f} MB{' gzipped' if gz else ''}; the limit is "
            f"{cap / MB:.0f} MB: {TRIM}{'' if gz else ', and gzip it'}",
        )
    if not data.strip():
        raise _fail(name, "file is empty: upload the .json or .json.gz that torch.profiler wrote")
    doc = _parse(_gunzip(data, name, limit) if gz else data, name)
    top = doc if isinstance(doc, dict) else {}
    events = top.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise _fail(
            name,
            'not a Chrome trace: expected an object with a "traceEvents" list or a bare '
            f"list of events, got a JSON {type(doc).__name__}",
        )
    if len(events) > max_events:
        raise _fail(name, f"has {len(events):,} events; the limit is {max_events:,}: {TRIM}")
    info = top.get("distributedInfo")
    rank = info.get("rank", default_rank) if isinstance(info, dict) else default_rank
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < 1_000_000:
        shown = (
            rank if isinstance(rank, int) else f"a JSON {type(rank).__name__}"
        )  # never echo text
        raise _fail(
            name,
            f"distributedInfo.rank is {shown}; it must be a whole number from "
            "0 to 999,999 (the process's global rank, as the profiler writes it)",
        )
    base = top.get("baseTimeNanoseconds")
    base_ns = (
        base if isinstance(base, int) and not isinstance(base, bool) and 0 <= base < 2**63 else 0
    )
    cols, threads, comm_time, steps, skipped = ([], [], [], [], [], []), {}, {}, 0, 0
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        t, d = _num(e.get("ts")), _num(e.get("dur"))
        if t is None or d is None or d < 0 or abs(t) > 1e18 or d > 1e15:
            skipped += 1
            continue
        cat, n = (v if isinstance(v, str) else "" for v in (e.get("cat"), e.get("name")))
        if (cat := cat.lower()) == "trace":  # the profiler's own window, not work
            continue
        n = n[:200]
        steps += cat == "user_annotation" and STEP.fullmatch(n) is not None
        is_comm = not n.startswith("aten::") and COMM.search(n) is not None
        key = tuple(
            v if isinstance(v, (str, int, float)) else None for v in (e.get("pid"), e.get("tid"))
        )
        for col, v in zip(
            cols,
            (
                t,
                d,
                threads.setdefault(key, len(threads)),
                is_comm,
                KERNEL if cat == "kernel" else CPU_OP if cat == "cpu_op" else OTHER,
            ),
        ):
            col.append(v)
        if is_comm:
            c = comm_time.setdefault(n, [0, 0.0])
            c[0], c[1] = c[0] + 1, c[1] + d
    if not cols[0]:
        why = (
            f'all {skipped:,} complete ("X") events have a non-numeric, negative or non-finite ts '
            "or "
            "dur"
            if skipped
            else 'it has no complete ("X") events with a ts and a dur'
        )
        raise _fail(
            name,
            f"nothing to analyse: {why}; export with torch.profiler "
            "(prof.export_chrome_trace) and upload that file",
        )
    top_comm = sorted(((k, c, t) for k, (c, t) in comm_time.items()), key=lambda r: -r[2])[:20]
    return Trace(
        name=name,
        rank=rank,
        base_ns=base_ns,
        ts_us=np.array(cols[0]),
        dur_us=np.array(cols[1]),
        thread=np.array(cols[2], np.int64),
        comm=np.array(cols[3], bool),
        kind=np.array(cols[4], np.int8),
        comm_names=tuple(top_comm),
        num_steps=int(steps),
        skipped=skipped,
    )


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
