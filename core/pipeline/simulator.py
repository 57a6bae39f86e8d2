"""Event simulator for pipeline schedules: times per-rank orders under stage dependencies."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.checks import positive
from core.pipeline.orders import ScheduleOrder, build_order, format_action, stage_chunks
from core.pipeline.result import OpTable, PipelineResult, peak_activations


def _seconds(name: str, value, allow_zero: bool = False) -> float:
    """A duration in seconds through core.checks.positive, with a sample value as the fix."""
    fix = f"use e.g. {0.0 if allow_zero else 1.0} seconds"
    return positive(name, value, fix=fix, allow_zero=allow_zero)


def _per_rank(name: str, value, p: int) -> tuple[float, ...]:
    """One duration per pipeline rank: a float for every rank, or a sequence of p of them."""
    if isinstance(value, str) or not hasattr(value, "__len__"):  # a scalar (checked as one)
        return (_seconds(name, value),) * p
    vals = tuple(_seconds(f"{name}[{r}]", x) for r, x in enumerate(value))
    if len(vals) != p:
        raise ValueError(f"{name} lists {len(vals)} durations for {p} ranks; give one per rank")
    return vals


def simulate(
    schedule: str,
    num_stages: int,
    num_microbatches: int,
    num_chunks: int = 1,
    forward_s: float | Sequence[float] = 1.0,
    backward_input_s: float | Sequence[float] = 1.0,
    backward_weight_s: float | Sequence[float] = 1.0,
    p2p_s: float = 0.0,
    overlap_s: float | Sequence[float] | None = None,
) -> PipelineResult:
    """Build a schedule's per-rank orders and time them (durations per full stage and mb)."""
    order = build_order(schedule, num_stages, num_microbatches, num_chunks)
    return simulate_order(
        order,
        forward_s=forward_s,
        backward_input_s=backward_input_s,
        backward_weight_s=backward_weight_s,
        p2p_s=p2p_s,
        overlap_s=overlap_s,
    )


def simulate_order(
    order: ScheduleOrder,
    *,
    forward_s: float | Sequence[float] = 1.0,
    backward_input_s: float | Sequence[float] = 1.0,
    backward_weight_s: float | Sequence[float] = 1.0,
    p2p_s: float = 0.0,
    overlap_s: float | Sequence[float] | None = None,
) -> PipelineResult:
    """Time any per-rank order; ValueError names the rank and op that would wait forever.

    Durations are per full stage and micro-batch: one float for every rank, or one per rank
    (uneven stages: embedding on the first, LM head + loss on the last); the result's
    forward_s / backward_*_s / overlap_s are then the slowest rank's.
    """
    p = order.num_ranks
    f = _per_rank("forward_s", forward_s, p)
    i = _per_rank("backward_input_s", backward_input_s, p)
    w = _per_rank("backward_weight_s", backward_weight_s, p)
    lat = _seconds("p2p_s", p2p_s, allow_zero=True)
    if overlap_s is None:
        o = tuple(a + b + c for a, b, c in zip(f, i, w))
    else:
        o = _per_rank("overlap_s", overlap_s, p)
    v, s2r = order.num_chunks, order.stage_to_rank
    # A chunk op costs 1/v of its rank's full-stage op; a full backward is I + W.
    dur = {
        k: [d[s2r[s]] / v for s in range(len(s2r))]
        for k, d in (
            ("F", f),
            ("B", tuple(a + b for a, b in zip(i, w))),
            ("I", i),
            ("W", w),
            ("FB", o),
        )
    }
    cols, busy = _run(order, dur, lat)
    rank, kind, stage, mb, start, end, pair = (np.asarray(c) for c in cols)
    idx = np.lexsort((start, rank))
    m = order.num_microbatches
    chunk_of = np.array(stage_chunks(order.stage_to_rank), np.int32)
    chunk = chunk_of[stage]
    arrays = dict(
        rank=rank[idx].astype(np.int32),
        stage=stage[idx].astype(np.int32),
        chunk=chunk[idx].astype(np.int32),
        microbatch=mb[idx].astype(np.int32),
        kind=kind[idx].astype(np.int8),
        start_s=start[idx].astype(float),
        end_s=end[idx].astype(float),
        overlapped=pair[idx].astype(bool),
    )
    for a in arrays.values():
        a.flags.writeable = False
    ops = OpTable(**arrays)
    makespan = float(ops.end_s.max())
    idle = tuple(makespan - b for b in busy)
    return PipelineResult(
        schedule=order.schedule,
        num_stages=p,
        num_microbatches=m,
        num_chunks=v,
        forward_s=max(f),
        backward_input_s=max(i),
        backward_weight_s=max(w),
        p2p_s=lat,
        overlap_s=max(o),
        makespan_s=makespan,
        ops=ops,
        busy_s=tuple(busy),
        idle_s=idle,
        bubble_fraction=sum(idle) / (p * makespan),
        peak_activations=peak_activations(ops, p),
    )


def _run(order: ScheduleOrder, dur: dict, lat: float) -> tuple[tuple[list, ...], list[float]]:
    """Dependency-ready loop: each rank runs its list in order, start = max(free, deps done)."""
    p, m, s2r = order.num_ranks, order.num_microbatches, order.stage_to_rank
    n_st = len(s2r)
    # Extra latency on an edge that crosses ranks (V placement keeps stages P-1 and P together).
    lat_prev = [lat if s and s2r[s - 1] != s2r[s] else 0.0 for s in range(n_st)]
    lat_next = [lat if s + 1 < n_st and s2r[s + 1] != s2r[s] else 0.0 for s in range(n_st)]
    last = n_st - 1
    f_end = [-1.0] * (n_st * m)  # end of F(s, mb) at index s*m + mb; -1 = not yet run
    g_end = [-1.0] * (n_st * m)  # end of the input-gradient op (B or I) of (s, mb)
    off = n_st * m  # waiter keys: idx for f_end, off + idx for g_end
    waiters: dict[int, list[int]] = {}
    ptr, free, busy = [0] * p, [0.0] * p, [0.0] * p
    c_rank, c_kind, c_stage, c_mb, c_start, c_end, c_pair = ([] for _ in range(7))
    code = {"F": 0, "B": 1, "I": 2, "W": 3}
    df, dfb = dur["F"], dur["FB"]
    stack = list(range(p - 1, -1, -1))

    def need(kind: str, s: int, b: int) -> tuple[int, float] | float:
        """Ready time of an op, or the waiter key it is blocked on (as an int)."""
        idx = s * m + b
        if kind == "F":
            if not s:
                return 0.0
            t = f_end[idx - m]
            return idx - m if t < 0 else t + lat_prev[s]
        if kind == "W":
            t = g_end[idx]
            return off + idx if t < 0 else t
        t = f_end[idx]
        if t < 0:
            return idx
        if s == last:
            return t
        t2 = g_end[idx + m]
        if t2 < 0:
            return off + idx + m
        t2 += lat_next[s]
        return t if t > t2 else t2

    while stack:
        r = stack.pop()
        acts, k, t_free, n = order.rank_actions[r], ptr[r], free[r], len(order.rank_actions[r])
        while k < n:
            a = acts[k]
            kind = a[0]
            if kind == "FB":
                ready = need("F", a[1], a[2])
                ready2 = need("B", a[3], a[4]) if type(ready) is float else ready
                if type(ready2) is int:
                    waiters.setdefault(ready2, []).append(r)
                    break
                start = max(t_free, ready, ready2)
                end = start + dfb[a[1]]
                for kd, s, b in (("F", a[1], a[2]), ("B", a[3], a[4])):
                    c_rank.append(r)
                    c_kind.append(code[kd])
                    c_stage.append(s)
                    c_mb.append(b)
                    c_start.append(start)
                    c_end.append(end)
                    c_pair.append(True)
                f_end[a[1] * m + a[2]] = end
                g_end[a[3] * m + a[4]] = end
                for key in (a[1] * m + a[2], off + a[3] * m + a[4]):
                    if key in waiters:
                        stack.extend(waiters.pop(key))
                busy[r] += dfb[a[1]]
            else:
                s, b = a[1], a[2]
                ready = need(kind, s, b)
                if type(ready) is int:
                    waiters.setdefault(ready, []).append(r)
                    break
                start = t_free if t_free > ready else ready
                d = (df if kind == "F" else dur[kind])[s]
                end = start + d
                c_rank.append(r)
                c_kind.append(code[kind])
                c_stage.append(s)
                c_mb.append(b)
                c_start.append(start)
                c_end.append(end)
                c_pair.append(False)
                key = s * m + b
                if kind == "F":
                    f_end[key] = end
                elif kind != "W":
                    g_end[key] = end
                    key += off
                if key in waiters:
                    stack.extend(waiters.pop(key))
                busy[r] += d
            t_free = end
            k += 1
        ptr[r], free[r] = k, t_free
    stuck = [r for r in range(p) if ptr[r] < len(order.rank_actions[r])]
    if stuck:  # nothing can run but ops remain: name who waits on what
        on = {r: key for key, ranks in waiters.items() for r in ranks}
        parts = []
        for r in stuck[:4]:
            s, b = divmod(on[r] % off, m)
            act = order.rank_actions[r][ptr[r]]
            dep = f"{s}F{b}" if on[r] < off else f"{s}I{b}" if act[0] == "W" else f"{s}B{b}/{s}I{b}"
            parts.append(f"rank {r} waits forever at {format_action(act)} for {dep}")
        raise ValueError(
            f"deadlock: {'; '.join(parts)} ({len(stuck)} of {p} ranks stuck); "
            "reorder so each op's dependencies run before it"
        )
    return (c_rank, c_kind, c_stage, c_mb, c_start, c_end, c_pair), busy
