"""Read PyTorch profiler traces (Chrome trace-event JSON, plain or gzipped) into per-rank
event columns; core.traces.analysis splits them into compute, communication and idle time.
"""

from __future__ import annotations

import math
import re
from array import array
from dataclasses import dataclass, field

import numpy as np

from core.traces.reader import TRIM, Clock, Limits, Top, events, gunzip_chunks, plain_chunks
from core.traces.reader import size_text as _sizes

MAX_BYTES = Limits.max_bytes  # an upload as sent (gzipped or plain)
MAX_UNCOMPRESSED_BYTES = Limits.max_uncompressed_bytes  # the JSON text after gunzip
MAX_EVENTS = Limits.max_events
MAX_THREADS = 10_000  # distinct (pid, tid) tracks
MAX_NAMES = 10_000  # distinct collective names counted by name; the rest are summed as "(others)"
# Collectives by name: NCCL kernels (ncclDevKernel_AllReduce…), gloo work (gloo:all_reduce), c10d
# dispatcher ops (c10d::allreduce_), record_param_comms. aten:: ops never are (aten::broadcast_to).
COMM = re.compile(
    r"nccl|gloo|c10d|record_param_comms|all_?reduce|all_?gather|reduce_?scatter|"
    r"all_?to_?all|broadcast|barrier|\b(i?send|i?recv)\b",
    re.IGNORECASE,
)
STEP = re.compile(r"ProfilerStep#\d+")
OTHER, CPU_OP, KERNEL = 0, 1, 2  # event kinds (OTHER: annotations, runtime calls, copies…)
# The "cat" of a complete event, as the profiler has written it across versions (lower-cased):
# Kineto's activity names (pytorch/kineto libkineto/src/ActivityType.cpp: cpu_op, kernel,
# gpu_memcpy, gpu_memset, cuda_runtime, user_annotation, gpu_user_annotation, python_function…) and
# the names of 2021 Kineto exports (PyTorch 1.8–1.9: "Operator", "Kernel", "Memcpy", "Memset",
# "Runtime"), which lower-case to the same kinds. Copies and memsets move data, not compute.
CATEGORIES = {
    "cpu_op": CPU_OP,
    "operator": CPU_OP,
    "kernel": KERNEL,
    "gpu_memcpy": OTHER,
    "gpu_memset": OTHER,
    "memcpy": OTHER,
    "memset": OTHER,
    "cuda_runtime": OTHER,
    "cuda_driver": OTHER,
    "runtime": OTHER,
    "user_annotation": OTHER,
    "gpu_user_annotation": OTHER,
    "python_function": OTHER,
    "overhead": OTHER,
}


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
    step_start_us: np.ndarray = field(default_factory=lambda: np.zeros(0))  # ProfilerStep#N
    step_end_us: np.ndarray = field(default_factory=lambda: np.zeros(0))  # windows, sorted
    categories: tuple[tuple[str, int], ...] = ()  # (cat as in the file, events), most first
    world_size: int | None = None  # distributedInfo.world_size


def _fail(name: str, msg: str) -> ValueError:
    return ValueError(f"`{name}`: {msg}")  # a code span when shown as Markdown: never a link


def _num(v) -> float | None:
    """A finite number, else None (bools, strings, NaN and 400-digit integers are not)."""
    ok = isinstance(v, float) or isinstance(v, int) and not isinstance(v, bool) and abs(v) < 10**300
    return float(v) if ok and math.isfinite(v) else None


def safe_name(name) -> str:
    """A file name safe to show anywhere: word characters, space and . + = @ - only."""
    return re.sub(r"[^\w .+=@-]", "_", str(name))[:100] or "trace"


def load_trace(
    data: bytes,
    *,
    name: str,
    default_rank: int = 0,
    max_bytes: float = MAX_BYTES,
    max_uncompressed_bytes: float = MAX_UNCOMPRESSED_BYTES,
    max_events: int = MAX_EVENTS,
    limits: Limits | None = None,
) -> Trace:
    """Parse one profiler trace (plain or gzipped JSON) as a stream, within `limits`; a ValueError
    says what is wrong, which limit was hit, and the fix.
    """
    name = safe_name(name)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise _fail(name, f"expected the file's bytes, got {type(data).__name__}")
    lim = limits or Limits(
        max_bytes=max_bytes, max_uncompressed_bytes=max_uncompressed_bytes, max_events=max_events
    )
    data = bytes(data)
    gz = data[:2] == b"\x1f\x8b"
    cap = lim.max_bytes if gz else min(lim.max_bytes, lim.max_uncompressed_bytes)
    if len(data) > cap:
        size, limit = _sizes(len(data), cap)
        raise _fail(
            name,
            f"file is {size}{' gzipped' if gz else ''}, larger than the limit of {limit}: "
            f"{TRIM}{'' if gz else ', and gzip it'}",
        )
    if not data.strip():
        raise _fail(name, "file is empty: upload the .json or .json.gz that torch.profiler wrote")
    shown = f"`{name}`"
    clock, top = Clock(shown, lim.max_seconds), Top()
    chunks = gunzip_chunks(data, shown, lim, clock) if gz else plain_chunks(data, clock)
    cols = (array("d"), array("d"), array("q"), array("b"), array("b"))
    threads, comm_time, cats, steps = {}, {}, {}, ([], [])
    seen = skipped = 0
    for e in events(chunks, shown, lim, clock, top):
        seen += 1
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        t, d = _num(e.get("ts")), _num(e.get("dur"))
        if t is None or d is None or d < 0 or abs(t) > 1e18 or d > 1e15:
            skipped += 1
            continue
        cat, n = (v if isinstance(v, str) else "" for v in (e.get("cat"), e.get("name")))
        if (low := cat.lower()) == "trace":  # the profiler's own window, not work
            continue
        cats[cat[:40]] = cats.get(cat[:40], 0) + 1 if len(cats) < 100 or cat[:40] in cats else 0
        n = n[:200]
        kind = CATEGORIES.get(low, OTHER)
        if STEP.fullmatch(n) and low in ("user_annotation", "operator", "cpu_op"):
            steps[0].append(t)  # a step mark wraps the work: never compute itself
            steps[1].append(t + d)
            kind = OTHER
        is_comm = not n.startswith("aten::") and COMM.search(n) is not None
        key = tuple(
            v[:100] if isinstance(v, str) else v if isinstance(v, (int, float)) else None
            for v in (e.get("pid"), e.get("tid"))
        )
        if (th := threads.setdefault(key, len(threads))) >= MAX_THREADS:
            raise _fail(name, f"has more than {MAX_THREADS:,} threads (pid, tid): {TRIM}")
        for col, v in zip(cols, (t, d, th, is_comm, kind)):
            col.append(v)
        if is_comm:
            c = comm_time.setdefault(n if len(comm_time) < MAX_NAMES else "(others)", [0, 0.0])
            c[0], c[1] = c[0] + 1, c[1] + d
    if not seen:
        raise _fail(
            name,
            'not a Chrome trace: expected an object with a "traceEvents" list of events, or a '
            "bare list of events; this file has no events",
        )
    rank = top.rank if top.rank is not None else default_rank
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < 1_000_000:
        shown = rank if isinstance(rank, int) else f"a JSON {type(rank).__name__}"  # never text
        raise _fail(
            name,
            f"distributedInfo.rank is {shown}; it must be a whole number from "
            "0 to 999,999 (the process's global rank, as the profiler writes it)",
        )
    base = top.base_ns
    base_ns = (
        base if isinstance(base, int) and not isinstance(base, bool) and 0 <= base < 2**63 else 0
    )
    ws = top.world_size
    ws = ws if isinstance(ws, int) and not isinstance(ws, bool) and 0 < ws < 10**7 else None
    if not cols[0]:
        why = (
            f'all {skipped:,} complete ("X") events have a non-numeric, negative or non-finite ts '
            "or dur"
            if skipped
            else 'it has no complete ("X") events with a ts and a dur'
        )
        raise _fail(
            name,
            f"nothing to analyse: {why}; export with torch.profiler "
            "(prof.export_chrome_trace) and upload that file",
        )
    top_comm = sorted(((k, c, t) for k, (c, t) in comm_time.items()), key=lambda r: -r[2])[:20]
    o = np.argsort(steps[0], kind="stable")
    return Trace(
        name=name,
        rank=rank,
        base_ns=base_ns,
        ts_us=np.frombuffer(cols[0], float),
        dur_us=np.frombuffer(cols[1], float),
        thread=np.frombuffer(cols[2], np.int64),
        comm=np.frombuffer(cols[3], np.int8).astype(bool),
        kind=np.frombuffer(cols[4], np.int8),
        comm_names=tuple(top_comm),
        num_steps=len(steps[0]),
        skipped=skipped,
        step_start_us=np.array(steps[0], float)[o],
        step_end_us=np.array(steps[1], float)[o],
        categories=tuple(sorted(((k, v) for k, v in cats.items() if v), key=lambda r: -r[1])),
        world_size=ws,
    )
