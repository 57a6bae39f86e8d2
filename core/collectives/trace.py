"""Step traces of collectives that move real numpy data, and the step executor that records them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

# Contribution sets are uint64 bitmasks (bit s = rank s's input is in the value): at most 64 ranks.
MAX_TRACKED_RANKS = 64
# Snapshots of every rank's whole buffer after every step are kept only for animation sizes.
MAX_STATE_ELEMENTS = 1 << 14  # num_ranks * num_elements


@dataclass(frozen=True, kw_only=True)
class Transfer:
    """One message: src sends chunks [chunk, chunk_end) to dst, which adds them (reduce) or
    overwrites.
    """

    src: int
    dst: int
    chunk: int
    chunk_end: int
    num_bytes: int
    reduce: bool


@dataclass(frozen=True, kw_only=True, eq=False)
class Step:
    """One synchronous step: its transfers run at once; each rank sends ≤ 1 and receives ≤ 1
    message.
    """

    index: int  # position in trace.steps (0-based)
    phase: str  # e.g. "reduce_scatter", "all_gather", "reduce", "broadcast", "gather"
    tier: str  # "flat", or "intra" / "inter" node for the two-level algorithm
    src: np.ndarray  # one entry per transfer
    dst: np.ndarray
    chunk: np.ndarray
    chunk_end: np.ndarray
    num_bytes: np.ndarray
    reduce: np.ndarray

    @property
    def transfers(self) -> tuple[Transfer, ...]:
        """The step's messages as Transfer values (built on demand: the arrays are the storage)."""
        cols = (self.src, self.dst, self.chunk, self.chunk_end, self.num_bytes, self.reduce)
        return tuple(
            Transfer(src=s, dst=d, chunk=c, chunk_end=e, num_bytes=b, reduce=r)
            for s, d, c, e, b, r in zip(*(a.tolist() for a in cols))
        )

    @property
    def max_bytes(self) -> int:
        """Largest message of the step: with every link busy at once it sets the step's pace."""
        return int(self.num_bytes.max()) if self.num_bytes.size else 0

    @property
    def max_reduced_bytes(self) -> int:
        """Largest number of bytes one rank adds into its buffer in this step (the gamma term)."""
        reduced = self.num_bytes[self.reduce]
        return int(reduced.max()) if reduced.size else 0


@dataclass(frozen=True, kw_only=True, eq=False)
class CollectiveTrace:
    """What a simulated collective did: final buffers, every step's transfers, bytes per rank.

    contributions[t, r, c] (uint64, t = 0 is the initial state, t = i + 1 is after steps[i]) has bit
    s
    set iff rank r's copy of chunk c includes rank s's input; None above MAX_TRACKED_RANKS ranks.
    states[t] is every rank's whole buffer after t steps; None unless num_ranks * num_elements is
    small.
    """

    algorithm: str
    collective: str
    num_ranks: int
    num_elements: int
    itemsize: int
    chunk_offsets: np.ndarray  # chunk c is elements [chunk_offsets[c], chunk_offsets[c + 1])
    outputs: np.ndarray  # (num_ranks, num_elements): every rank's buffer at the end
    steps: tuple[Step, ...]
    bytes_sent: np.ndarray  # (num_ranks,) int64
    bytes_received: np.ndarray
    bytes_reduced: np.ndarray  # bytes each rank added into its own buffer
    contributions: np.ndarray | None
    states: np.ndarray | None
    owned_chunk: np.ndarray | None = (
        None  # reduce-scatter: the chunk each rank ends owning, reduced
    )

    @property
    def num_steps(self) -> int:
        return len(self.steps)

    @property
    def num_chunks(self) -> int:
        return len(self.chunk_offsets) - 1

    @property
    def message_bytes(self) -> int:
        """Bytes of one rank's buffer (S in the all-reduce formulas)."""
        return self.num_elements * self.itemsize

    @property
    def contribution_counts(self) -> np.ndarray | None:
        """(num_steps + 1, num_ranks, num_chunks): how many ranks' inputs each copy of a chunk
        holds.
        """
        if self.contributions is None:
            return None
        return np.bitwise_count(self.contributions).astype(np.int16)

    def contributors(self, step: int, rank: int, chunk: int) -> tuple[int, ...]:
        """Ranks whose input is in `rank`'s copy of `chunk` after `step` steps (0 = initial)."""
        if self.contributions is None:
            raise ValueError(
                f"contributions are tracked only up to {MAX_TRACKED_RANKS} ranks, "
                f"this trace has {self.num_ranks}; simulate ≤ {MAX_TRACKED_RANKS} ranks"
            )
        mask = int(self.contributions[step, rank, chunk])
        return tuple(s for s in range(self.num_ranks) if mask >> s & 1)

    def sent_per_step(self) -> np.ndarray:
        """(num_steps, num_ranks) int64: bytes each rank sent in each step."""
        out = np.zeros((self.num_steps, self.num_ranks), dtype=np.int64)
        for i, s in enumerate(self.steps):
            np.add.at(out[i], s.src, s.num_bytes)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per transfer (step numbered from 1), e.g. for a CSV download."""
        cols = ("src", "dst", "chunk", "chunk_end", "num_bytes", "reduce")
        parts = {
            c: np.concatenate([getattr(s, c) for s in self.steps])
            if self.steps
            else np.zeros(0, dtype=bool if c == "reduce" else np.int64)
            for c in cols
        }
        sizes = [len(s.src) for s in self.steps]
        head = {
            "step": np.repeat(np.arange(1, self.num_steps + 1), sizes),
            "phase": np.repeat([s.phase for s in self.steps], sizes).astype(object),
            "tier": np.repeat([s.tier for s in self.steps], sizes).astype(object),
        }
        return pd.DataFrame({**head, **parts})


def as_rank_inputs(inputs) -> np.ndarray:
    """Validate a (num_ranks, num_elements) numeric array: row r is rank r's tensor."""
    x = np.asarray(inputs)
    if x.ndim != 2:
        raise ValueError(
            f"inputs has shape {x.shape}: it must be 2-D (num_ranks, num_elements), row r "
            "being rank r's tensor; reshape, e.g. x.reshape(num_ranks, -1)"
        )
    if x.dtype == bool or not np.issubdtype(x.dtype, np.number):
        raise ValueError(
            f"inputs has dtype {x.dtype}: a sum needs numbers; use e.g. "
            "x.astype(np.float32) or np.int64"
        )
    if x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(
            f"inputs has shape {x.shape}: a collective needs ≥ 1 rank and ≥ 1 element "
            "per rank; pass a non-empty array"
        )
    return x


def chunk_offsets(num_elements: int, num_chunks: int) -> np.ndarray:
    """Offsets of num_chunks near-equal chunks, the larger ones first (numpy.array_split's rule)."""
    sizes = np.full(num_chunks, num_elements // num_chunks, dtype=np.int64)
    sizes[: num_elements % num_chunks] += 1
    return np.concatenate([[0], np.cumsum(sizes)])


def initial_masks(num_ranks: int, num_chunks: int) -> np.ndarray | None:
    """Every rank's copy of every chunk starts holding only its own input (None if untracked)."""
    if num_ranks > MAX_TRACKED_RANKS:
        return None
    own = np.left_shift(np.uint64(1), np.arange(num_ranks, dtype=np.uint64))
    return np.repeat(own[:, None], num_chunks, axis=1)


def keeps_states(num_ranks: int, num_elements: int) -> bool:
    return num_ranks <= MAX_TRACKED_RANKS and num_ranks * num_elements <= MAX_STATE_ELEMENTS


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def make_step(*, index, phase, tier, src, dst, chunk, chunk_end, num_bytes, reduce) -> Step:
    arrays = dict(src=src, dst=dst, chunk=chunk, chunk_end=chunk_end, num_bytes=num_bytes)
    arrays = {k: _frozen(np.asarray(v, dtype=np.int64)) for k, v in arrays.items()}
    red = _frozen(np.broadcast_to(np.asarray(reduce, dtype=bool), arrays["src"].shape).copy())
    return Step(index=index, phase=phase, tier=tier, reduce=red, **arrays)


def make_trace(
    *, algorithm, collective, inputs, offsets, outputs, steps, masks, states, owned_chunk=None
) -> CollectiveTrace:
    """Freeze a finished run and total the bytes each rank sent, received and reduced."""
    n, e = inputs.shape
    sent, received, reduced = (np.zeros(n, dtype=np.int64) for _ in range(3))
    for s in steps:
        np.add.at(sent, s.src, s.num_bytes)
        np.add.at(received, s.dst, s.num_bytes)
        np.add.at(reduced, s.dst[s.reduce], s.num_bytes[s.reduce])
    return CollectiveTrace(
        algorithm=algorithm,
        collective=collective,
        num_ranks=n,
        num_elements=e,
        itemsize=inputs.dtype.itemsize,
        chunk_offsets=_frozen(np.asarray(offsets, dtype=np.int64)),
        outputs=_frozen(outputs),
        steps=tuple(steps),
        bytes_sent=_frozen(sent),
        bytes_received=_frozen(received),
        bytes_reduced=_frozen(reduced),
        contributions=None if masks is None else _frozen(np.stack(masks)),
        states=None if states is None else _frozen(np.stack(states)),
        owned_chunk=None if owned_chunk is None else _frozen(np.asarray(owned_chunk, np.int64)),
    )


class Executor:
    """Runs synchronous steps on real buffers: every payload is read before any is applied."""

    def __init__(self, inputs, offsets, *, algorithm: str, collective: str):
        self.x = as_rank_inputs(inputs)
        n, e = self.x.shape
        self.buf = np.array(self.x, order="C", copy=True)
        self.off = np.asarray(offsets, dtype=np.int64)
        self.algorithm, self.collective = algorithm, collective
        self.steps: list[Step] = []
        self.mask = initial_masks(n, len(self.off) - 1)
        self.masks = None if self.mask is None else [self.mask.copy()]
        self.states = [self.buf.copy()] if keeps_states(n, e) else None

    def step(self, phase: str, moves, tier: str = "flat") -> None:
        """Apply moves (src, dst, chunk, chunk_end, reduce) at once: dst adds or overwrites the
        chunks.
        """
        m = np.array(list(moves), dtype=np.int64).reshape(-1, 5)
        src, dst, c0, c1, red = m.T
        lo, hi = self.off[c0], self.off[c1]
        payloads = [self.buf[s, a:b].copy() for s, a, b in zip(src, lo, hi)]
        for d, a, b, r, p in zip(dst, lo, hi, red, payloads):
            if r:
                self.buf[d, a:b] += p
            else:
                self.buf[d, a:b] = p
        if self.mask is not None:
            sent = [self.mask[s, a:b].copy() for s, a, b in zip(src, c0, c1)]
            for d, a, b, r, p in zip(dst, c0, c1, red, sent):
                self.mask[d, a:b] = (self.mask[d, a:b] | p) if r else p
            self.masks.append(self.mask.copy())
        if self.states is not None:
            self.states.append(self.buf.copy())
        self.steps.append(
            make_step(
                index=len(self.steps),
                phase=phase,
                tier=tier,
                src=src,
                dst=dst,
                chunk=c0,
                chunk_end=c1,
                num_bytes=(hi - lo) * self.x.itemsize,
                reduce=red.astype(bool),
            )
        )

    def finish(self, owned_chunk=None) -> CollectiveTrace:
        return make_trace(
            algorithm=self.algorithm,
            collective=self.collective,
            inputs=self.x,
            offsets=self.off,
            outputs=self.buf,
            steps=self.steps,
            masks=self.masks,
            states=self.states,
            owned_chunk=owned_chunk,
        )
