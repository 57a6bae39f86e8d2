"""Ring reduce-scatter, all-gather and all-reduce on real numpy buffers, vectorised across ranks.

Chunk indexing (derived in docs/notes/collectives.md §1): each rank's
buffer is split into N chunks (chunk c = elements chunk_offsets[c]:chunk_offsets[c+1], the first
num_elements % N chunks one element longer); rank r sends to (r + 1) mod N.
- All-reduce reduce-scatter step k = 0..N-2: rank r sends chunk (r - k) mod N; the receiver adds it.
  Afterwards rank r holds the fully reduced chunk (r + 1) mod N.
- All-reduce all-gather step k: rank r sends chunk (r + 1 - k) mod N; the receiver overwrites.
- Stand-alone ring_reduce_scatter / ring_all_gather use NCCL's placement instead (rank r ends owning
  / starts owning chunk r): the same schedule rotated by one chunk.
"""

from __future__ import annotations

import numpy as np

from core.checks import whole_number
from core.collectives.trace import (
    CollectiveTrace,
    as_rank_inputs,
    chunk_offsets,
    initial_masks,
    keeps_states,
    make_step,
    make_trace,
)

RING_INDEXING = (
    "Chunk c is the c-th of N near-equal slices of the tensor. Reduce-scatter step k "
    "(k = 0..N−2): rank r sends chunk (r − k) mod N to rank (r + 1) mod N, which adds it; "
    "rank r then holds the fully reduced chunk (r + 1) mod N. All-gather step k: rank r "
    "sends chunk (r + 1 − k) mod N, which the receiver stores."
)


def _diagonal(n: int, shift: int) -> list[tuple[slice, slice]]:
    """(dst, src) row slices of the (n*n, L) buffer for "rank d receives chunk (d + shift) mod n
    from d-1".

    Row d*n + c is rank d's chunk c, so these rows lie on diagonals of stride n + 1: basic slices
    make
    each step one strided in-place numpy op (fancy-index gather/scatter was 10x slower at N = 256).
    """
    a = shift % n
    out = [(slice(a, a + 1), slice((n - 1) * n + a, (n - 1) * n + a + 1))]  # rank 0 hears rank n-1
    for lo, hi, off in ((1, n - a, a), (max(1, n - a), n, a - n)):  # chunk d+a without / with wrap
        if hi > lo:
            start, stop = lo * (n + 1) + off, (hi - 1) * (n + 1) + off + 1
            out.append((slice(start, stop, n + 1), slice(start - n, stop - n, n + 1)))
    return out


def _ring(inputs, phases: tuple[str, ...], owner: int, collective: str) -> CollectiveTrace:
    """Run ring phases in place; owner = 1 is the indexing above, 0 is NCCL's placement."""
    x = as_rank_inputs(inputs)
    n, e = x.shape
    off = chunk_offsets(e, n)
    sizes = np.diff(off)
    width = int(sizes.max())
    # Padded layout (rank, chunk, width): uneven chunks carry zero padding that is never counted.
    pos = np.repeat(np.arange(n) * width - off[:-1], sizes) + np.arange(e)
    even, track = e == n * width, keeps_states(n, e)
    if even and not track and n > 1 and phases == ("reduce_scatter", "all_gather"):
        # Every slot of every rank is received before it is read or returned, so skip the 1 GiB
        # copy at N = 256: each reduce-scatter add reads the receiver's own input directly.
        own = np.ascontiguousarray(x).reshape(n * n, width)
        buf = np.empty_like(x, order="C")
    else:
        buf = np.array(x, order="C", copy=True) if even else np.zeros((n, n * width), x.dtype)
        if not even:
            buf[:, pos] = x
        own = buf.reshape(n * n, width)
    rows = buf.reshape(n * n, width)

    def unpadded() -> np.ndarray:
        return buf if even else buf[:, pos]

    mask = initial_masks(n, n)
    masks = None if mask is None else [mask.copy()]
    states = [unpadded().copy()] if track else None
    ranks = np.arange(n)
    dst = (ranks + 1) % n
    steps = []
    for phase in phases:
        reduce = phase == "reduce_scatter"
        for k in range(n - 1):
            # Rank r sends chunk (r + owner - 1 - k) (reduce-scatter) or (r + owner - k)
            # (all-gather).
            sent = (ranks + owner - k - (1 if reduce else 0)) % n
            for d, s in _diagonal(n, owner - k - (2 if reduce else 1)):
                if reduce:  # the sender's chunk is its own input at k = 0, a partial sum after
                    np.add(own[d], (own if k == 0 else rows)[s], out=rows[d])
                else:
                    rows[d] = rows[s]
            if mask is not None:
                mask[dst, sent] = (
                    (mask[dst, sent] | mask[ranks, sent]) if reduce else mask[ranks, sent]
                )
                masks.append(mask.copy())
            if states is not None:
                states.append(unpadded().copy())
            steps.append(
                make_step(
                    index=len(steps),
                    phase=phase,
                    tier="flat",
                    src=ranks,
                    dst=dst,
                    chunk=sent,
                    chunk_end=sent + 1,
                    num_bytes=sizes[sent] * x.itemsize,
                    reduce=reduce,
                )
            )
    owned = (ranks + owner) % n if phases == ("reduce_scatter",) else None
    return make_trace(
        algorithm="ring",
        collective=collective,
        inputs=x,
        offsets=off,
        outputs=unpadded(),
        steps=steps,
        masks=masks,
        states=states,
        owned_chunk=owned,
    )


def ring_all_reduce(inputs) -> CollectiveTrace:
    """Ring all-reduce: N-1 reduce-scatter then N-1 all-gather steps; every output row is the
    sum.
    """
    return _ring(inputs, ("reduce_scatter", "all_gather"), owner=1, collective="all_reduce")


def ring_reduce_scatter(inputs) -> CollectiveTrace:
    """Ring reduce-scatter (N-1 steps): rank r ends holding the fully reduced chunk r
    (owned_chunk).
    """
    return _ring(inputs, ("reduce_scatter",), owner=0, collective="reduce_scatter")


def ring_all_gather(inputs) -> CollectiveTrace:
    """Ring all-gather (N-1 steps), in place: row r supplies chunk r; every output row is the
    assembly.
    """
    return _ring(inputs, ("all_gather",), owner=0, collective="all_gather")


def shard(trace: CollectiveTrace, rank: int) -> np.ndarray:
    """The chunk `rank` owns after a reduce-scatter (its slice of the summed tensor)."""
    if trace.owned_chunk is None:
        raise ValueError(f"a {trace.collective} trace has no owned chunks; use ring_reduce_scatter")
    c = int(trace.owned_chunk[rank])
    return trace.outputs[rank, trace.chunk_offsets[c] : trace.chunk_offsets[c + 1]]


def example_inputs(num_ranks: int, num_elements: int, seed: int = 0) -> np.ndarray:
    """Small random integers (0-9) per rank, so a learner can check the sums by eye."""
    size = (
        whole_number("num_ranks", num_ranks, fix="use e.g. 4"),
        whole_number("num_elements", num_elements, fix="use e.g. 8"),
    )
    return np.random.default_rng(seed).integers(0, 10, size=size, dtype=np.int64)
