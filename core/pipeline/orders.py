"""Per-rank op orders for pipeline schedules (part (a) of the simulator: orders, no timing).

An action is (kind, stage, microbatch) with kind in "F", "B", "I", "W"; DualPipeV's overlapped
forward+backward pair is ("FB", f_stage, f_mb, b_stage, b_mb). Stage indices are global (0..vP-1).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.pipeline.schedules import check_inputs


@dataclass(frozen=True, kw_only=True)
class ScheduleOrder:
    """Per-rank action lists (no idle slots) plus the stage -> rank map."""

    schedule: str
    num_ranks: int
    num_microbatches: int
    num_chunks: int
    stage_to_rank: tuple[int, ...]
    rank_actions: tuple[tuple[tuple, ...], ...]


def stage_to_rank(placement: str, num_ranks: int, num_chunks: int) -> tuple[int, ...]:
    """Rank of each global stage under loop or V placement (docs/notes/pipeline.md §1)."""
    p = num_ranks
    if placement == "v":
        return tuple(s if s < p else 2 * p - 1 - s for s in range(2 * p))
    return tuple(s % p for s in range(num_chunks * p))


def stage_chunks(ranks: tuple[int, ...]) -> tuple[int, ...]:
    """Chunk index of each stage on its rank: how many lower stages that rank already holds."""
    held: dict[int, int] = {}
    out = []
    for r in ranks:
        out.append(held.get(r, 0))
        held[r] = out[-1] + 1
    return tuple(out)


def format_action(action: tuple) -> str:
    """torch-style action string, e.g. '2F0' or '(0F7;7B3)' for an overlapped pair."""
    if action[0] == "FB":
        return f"({action[1]}F{action[2]};{action[3]}B{action[4]})"
    return f"{action[1]}{action[0]}{action[2]}"


def build_order(
    schedule: str, num_ranks: int, num_microbatches: int, num_chunks: int = 1
) -> ScheduleOrder:
    """Validated per-rank orders for a named schedule."""
    info = check_inputs(schedule, num_ranks, num_microbatches, num_chunks)
    p, m, v = int(num_ranks), int(num_microbatches), int(num_chunks)
    make = _BUILDERS[schedule]
    return ScheduleOrder(
        schedule=schedule,
        num_ranks=p,
        num_microbatches=m,
        num_chunks=v,
        stage_to_rank=stage_to_rank(info.placement, p, v),
        rank_actions=tuple(tuple(make(r, p, m, v)) for r in range(p)),
    )


def _gpipe(r: int, p: int, m: int, v: int) -> list:
    """All forwards, then all backwards in ascending mb order (torch ScheduleGPipe)."""
    return [("F", r, i) for i in range(m)] + [("B", r, i) for i in range(m)]


def _one_f_one_b(r: int, p: int, m: int, v: int) -> list:
    """Warm-up min(P-1-r, M) forwards, steady F/B pairs, cool-down backwards (PipeDream-Flush)."""
    w = min(p - 1 - r, m)
    out = [("F", r, i) for i in range(w)]
    for i in range(m - w):
        out += [("F", r, w + i), ("B", r, i)]
    return out + [("B", r, i) for i in range(m - w, m)]


def _interleaved(r: int, p: int, m: int, v: int) -> list:
    """Megatron virtual pipeline with groups of G = P micro-batches (schedules.py, older form)."""
    g = p
    fwd = [
        (c, mb)
        for start in range(0, m, g)
        for c in range(v)
        for mb in range(start, min(start + g, m))
    ]
    bwd = [(v - 1 - c, mb) for c, mb in fwd]
    total = v * m
    w = min(2 * (p - 1 - r) + (v - 1) * g, total)
    out = [("F", c * p + r, mb) for c, mb in fwd[:w]]
    for i in range(total - w):
        (fc, fm), (bc, bm) = fwd[w + i], bwd[i]
        out += [("F", fc * p + r, fm), ("B", bc * p + r, bm)]
    return out + [("B", c * p + r, mb) for c, mb in bwd[total - w :]]


def _looped_bfs(r: int, p: int, m: int, v: int) -> list:
    """Every chunk's forwards breadth-first, then backwards from the last chunk, mb descending."""
    out = [("F", c * p + r, i) for c in range(v) for i in range(m)]
    return out + [("B", c * p + r, i) for c in reversed(range(v)) for i in reversed(range(m))]


def _zb_h1(r: int, p: int, m: int, v: int) -> list:
    """1F1B skeleton with B split into I and W; W deferred by r rounds on rank r (ZB1P)."""
    w = min(p - 1 - r, m)
    out = [("F", r, i) for i in range(w)]
    next_w = 0
    for j in range(m):  # j-th input-gradient op on this rank
        if w + j < m:
            out.append(("F", r, w + j))
        out.append(("I", r, j))
        if j >= r:
            out.append(("W", r, next_w))
            next_w += 1
    return out + [("W", r, i) for i in range(next_w, m)]


def _zb_v(r: int, p: int, m: int, v: int) -> list:
    """Handcrafted ZB-V order, a port of torch ScheduleZBVZeroBubble (M ≥ 2P, so no padding)."""
    s0, s1 = r, 2 * p - 1 - r
    f0 = f1 = b0 = b1 = 0
    out = []
    for _ in range(2 * (p - r) - 1):
        out.append(("F", s0, f0))
        f0 += 1
    for _ in range(r):
        out += [("F", s1, f1), ("F", s0, f0)]
        f1 += 1
        f0 += 1
    for _ in range(p - r):
        out += [("F", s1, f1), ("I", s1, b1), ("W", s1, b1)]
        f1 += 1
        b1 += 1
    while f1 < f0 or f0 < m:
        if f0 < m:
            out.append(("F", s0, f0))
            f0 += 1
        out += [("I", s0, b0), ("W", s0, b0), ("F", s1, f1), ("I", s1, b1), ("W", s1, b1)]
        b0 += 1
        f1 += 1
        b1 += 1
    w0, w1 = b0, b1
    for _ in range(r):
        out += [("I", s0, b0), ("I", s1, b1)]
        b0 += 1
        b1 += 1
    for _ in range(p - r):
        out += [("I", s0, b0), ("W", s0, w0)]
        b0 += 1
        w0 += 1
    out += [("W", s1, i) for i in range(w1, b1)]
    return out + [("W", s0, i) for i in range(w0, b0)]


def _dualpipe_v(r: int, p: int, m: int, v: int) -> list:
    """The eight phases of deepseek-ai/DualPipe dualpipev.py (torch ScheduleDualPipeV port)."""
    s0, s1 = r, 2 * p - 1 - r
    nf = {s0: 0, s1: 0}
    nb = {s0: 0, s1: 0}  # B and I share one counter per stage
    pending_w: list[tuple[int, int]] = []
    out: list[tuple] = []

    def f(s):
        out.append(("F", s, nf[s]))
        nf[s] += 1

    def b(s, split):
        out.append(("I" if split else "B", s, nb[s]))
        if split:
            pending_w.append((s, nb[s]))
        nb[s] += 1

    def pair(fs, bs):
        out.append(("FB", fs, nf[fs], bs, nb[bs]))
        nf[fs] += 1
        nb[bs] += 1

    def w():
        if pending_w:
            s, i = pending_w.pop(0)
            out.append(("W", s, i))

    for _ in range(2 * (p - 1 - r)):
        f(s0)
    for _ in range(r + 1):
        f(s0)
        f(s1)
    for _ in range(p - 1 - r):
        b(s1, True)
        w()
        f(s1)
    for i in range(m - 2 * p + r + 1):
        if i == 0 and r == p - 1:  # not overlapped on the last rank: shortens the bubble
            f(s0)
            b(s1, False)
        else:
            pair(s0, s1)
        pair(s1, s0)
    for _ in range(p - 1 - r):
        b(s1, False)
        pair(s1, s0)
    split, half = False, (r + 1) // 2
    for i in range(r + 1):
        split = split or (i == half and r % 2 == 1)
        b(s1, split)
        split = split or (i == half and r % 2 == 0)
        b(s0, split)
    for _ in range(p - 1 - r):
        w()
        b(s0, split)
    for _ in range(r + 1):
        w()
    return out


_BUILDERS = {
    "gpipe": _gpipe,
    "1f1b": _one_f_one_b,
    "interleaved_1f1b": _interleaved,
    "looped_bfs": _looped_bfs,
    "zb_h1": _zb_h1,
    "zb_v": _zb_v,
    "dualpipe_v": _dualpipe_v,
}
