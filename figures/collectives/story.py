"""The ring's story, one line per step, from the simulated trace: which GPU sends chunk 0 (the
chunk the caption follows round the ring), how many GPUs' inputs it carries, and what the receiver
does with it (adds during reduce-scatter, overwrites during all-gather).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.collectives import CollectiveTrace

PHASE_NAMES = {"reduce_scatter": "reduce-scatter", "all_gather": "all-gather"}
FOLLOWED_CHUNK = 0


@dataclass(frozen=True, kw_only=True)
class Move:
    """Chunk 0's hop in one step: who sends it, what it carries, what the receiver ends with."""

    step: int  # 1-based
    phase: str
    chunk: int
    src: int
    dst: int
    carried: int  # contributions in the sent copy
    after: int  # contributions in the receiver's copy after the step
    reduce: bool
    sent_value: float | None  # first element of the chunk, when the trace keeps values
    old_value: float | None
    new_value: float | None


def followed_move(trace: CollectiveTrace, step: int, receiver: int | None = None) -> Move:
    """Chunk 0's transfer in `step` (1 … num_steps), read from the trace; with `receiver`, the
    transfer into that GPU instead (the one a zoomed view shows)."""
    s = trace.steps[step - 1]
    pick = s.chunk == FOLLOWED_CHUNK if receiver is None else s.dst == receiver
    i = int(np.flatnonzero(pick)[0])
    src, dst, red, c = int(s.src[i]), int(s.dst[i]), bool(s.reduce[i]), int(s.chunk[i])
    counts = trace.contribution_counts
    lo, hi = trace.chunk_offsets[c], trace.chunk_offsets[c + 1]
    values = (None, None, None)
    if trace.states is not None and hi > lo:
        values = tuple(
            trace.states[t, r, lo].item()
            for t, r in ((step - 1, src), (step - 1, dst), (step, dst))
        )
    return Move(
        step=step,
        phase=s.phase,
        chunk=c,
        src=src,
        dst=dst,
        carried=int(counts[step - 1, src, c]),
        after=int(counts[step, dst, c]),
        reduce=red,
        sent_value=values[0],
        old_value=values[1],
        new_value=values[2],
    )


def _num(v: float) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


def step_caption(trace: CollectiveTrace, step: int, receiver: int | None = None) -> str:
    """One line, e.g. 'step 3 of 14, reduce-scatter: GPU 2 sends chunk 0 (3 contributions) to
    GPU 3, which adds its own: 4 of 8'; with `receiver`, the chunk that GPU receives."""
    n, last = trace.num_ranks, trace.num_steps
    if step == 0:
        return (
            f"step 0 of {last}: each of the {n} GPUs holds only its own tensor, cut into {n} "
            f"chunks (0 … {n - 1}); every step, every GPU sends one chunk to the next GPU at once"
        )
    m = followed_move(trace, step, receiver)
    head = f"step {step} of {last}, {PHASE_NAMES[m.phase]}: GPU {m.src} sends chunk {m.chunk}"
    if m.reduce:
        line = (
            f"{head} ({_plural(m.carried, 'contribution')}) to GPU {m.dst}, which adds its own: "
            f"{m.after} of {n}"
        )
        if m.new_value is not None:
            line += f" ({_num(m.sent_value)} + {_num(m.old_value)} = {_num(m.new_value)})"
    else:
        line = f"{head} (all {n} contributions, final) to GPU {m.dst}, which overwrites its copy"
        if m.new_value is not None:
            line += f" ({_num(m.old_value)} → {_num(m.new_value)})"
    return line


def receiver_note(trace: CollectiveTrace, step: int, receiver: int | None = None) -> str:
    """Short text by the receiving GPU: what it did with chunk 0 (or with what `receiver` got),
    e.g. 'adds chunk 0: 8+5=13'."""
    if step == 0:
        return ""
    m = followed_move(trace, step, receiver)
    verb = "adds" if m.reduce else "stores"
    if m.new_value is not None:
        op = f"{_num(m.sent_value)}+{_num(m.old_value)}={_num(m.new_value)}" if m.reduce else ""
        what = f"{verb} chunk {m.chunk}"
        return f"{what}: {op}" if op else f"{what} = {_num(m.new_value)}"
    return f"{verb} chunk {m.chunk} → {m.after}/{trace.num_ranks}"
