"""SplitLab course lab: write the five functions below, then run `pytest test_lab.py -v`.

Each function is a stub that raises NotImplementedError: replace the body with your code. The tests
check your numbers against SplitLab's own core (the simulators behind the pages), so a passing test
means your function agrees with the pictures you have been looking at. Plain numpy only.

Conventions (the same as SplitLab's pages):
- a "rank" is one GPU; `x[r]` is rank r's buffer;
- a ring sends from rank r to rank (r + 1) mod N; the tensor is cut into N near-equal chunks
  (`np.array_split`: the first L mod N chunks are one element longer);
- bytes are counted as numpy counts them (`array.itemsize` per element).
"""

from __future__ import annotations

import numpy as np


def gelu(a: np.ndarray) -> np.ndarray:
    """GeLU, tanh form (Hendrycks & Gimpel 2016), as Megatron-LM uses it. Given: use it in
    `tp_mlp_forward`.
    """
    c = np.sqrt(2.0 / np.pi)
    return 0.5 * a * (1.0 + np.tanh(c * (a + 0.044715 * a**3)))


# ---------- 1. collectives ----------
def ring_all_reduce(x: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """Sum N ranks' buffers with a ring: N-1 reduce-scatter steps, then N-1 all-gather steps.

    x: shape (N, L), row r = rank r's buffer. Do not modify x.
    In every step each rank sends ONE chunk to its right neighbour (r + 1) mod N:
      reduce-scatter step k: rank r sends chunk (r - k) mod N, the receiver ADDS it to its copy;
        after N-1 steps rank r holds the full sum of chunk (r + 1) mod N;
      all-gather step k: rank r sends chunk (r + 1 - k) mod N, the receiver OVERWRITES its copy.
    Returns (out, num_steps, bytes_sent):
      out: shape (N, L), every row equal to x.sum(axis=0);
      num_steps: how many communication steps the ring took (expect 2(N-1));
      bytes_sent: shape (N,) int, bytes each rank sent in total (expect ≈ 2(N-1)/N · L · itemsize).
    """
    raise NotImplementedError("1. ring_all_reduce: write the ring (see the docstring)")


# ---------- 2. data parallel ----------
def average_gradients(
    local_grads: np.ndarray, shard_sizes: tuple[int, ...] | None = None
) -> np.ndarray:
    """Data parallel: turn each rank's gradient into the gradient of the whole batch.

    local_grads: shape (N, P), row r = the gradient of the MEAN loss over rank r's shard.
    shard_sizes: samples per rank, or None for equal shards.
    Sum the rows with YOUR ring_all_reduce (that is what DDP does), then divide:
      equal shards: by N (DDP's average);
      unequal shards: weight row r by shard_sizes[r] before the all-reduce and divide by the
        total number of samples, otherwise small shards count as much as big ones.
    Returns shape (P,): the full-batch gradient.
    """
    raise NotImplementedError("2. average_gradients: all-reduce, then divide")


# ---------- 3. tensor parallel ----------
def column_parallel_linear(x: np.ndarray, w: np.ndarray, tp: int) -> list[np.ndarray]:
    """Megatron's column-parallel linear: rank i holds the i-th block of w's COLUMNS.

    x: (tokens, d_in), replicated on every rank; w: (d_in, d_out), d_out divisible by tp.
    Returns the tp per-rank outputs, rank i's = x @ (its columns of w): shape (tokens, d_out/tp).
    No communication in forward (Megatron's f is the identity here).
    """
    raise NotImplementedError("3a. column_parallel_linear: split w by columns")


def row_parallel_linear(x_parts: list[np.ndarray], w: np.ndarray) -> np.ndarray:
    """Megatron's row-parallel linear: rank i holds the i-th block of w's ROWS and x_parts[i].

    x_parts: tp arrays (tokens, d_in/tp) — exactly what a column-parallel layer left on each rank.
    w: (d_in, d_out). Each rank computes a partial (tokens, d_out); the partials are summed with an
    all-reduce (Megatron's g: use YOUR ring_all_reduce on the flattened partials).
    Returns (tokens, d_out) = concat(x_parts, axis=1) @ w.
    """
    raise NotImplementedError("3b. row_parallel_linear: partial products, then all-reduce")


def tp_mlp_forward(
    x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, tp: int
) -> np.ndarray:
    """The transformer MLP GeLU(x @ w1 + b1) @ w2 split over tp ranks: w1 by columns (each rank adds
    its slice of b1 and applies GeLU locally: no communication), w2 by rows (one all-reduce).
    Returns (tokens, d_model).
    """
    raise NotImplementedError("3c. tp_mlp_forward: column-parallel, GeLU, row-parallel")


# ---------- 4. pipeline parallel ----------
def simulate_gpipe(
    num_stages: int, num_microbatches: int, forward_s: float = 1.0, backward_s: float = 2.0
) -> tuple[float, float]:
    """Simulate a GPipe schedule and measure its bubble.

    Stage s (0..P-1) runs the forward of micro-batches 0..M-1 in order, then their backwards in
    reverse order (M-1..0). Forward of (s, m) needs forward (s-1, m) finished; backward of (s, m)
    needs backward (s+1, m) finished (the last stage's backward needs its own forward). A stage
    runs one op at a time; each op starts as soon as its stage is free and its input is ready.
    Sends are instantaneous.
    Returns (makespan_s, bubble_fraction) where bubble_fraction = total idle stage-time /
    (P · makespan). Compare with the closed form (P - 1) / (M + P - 1).
    """
    raise NotImplementedError("4. simulate_gpipe: time every op, then measure the idle time")


# ---------- 5. ZeRO ----------
def zero_bytes_per_gpu(num_params: int, dp: int, zero_stage: int) -> int:
    """Bytes of model states per GPU under ZeRO with mixed-precision Adam (Rajbhandari et al.
    2020, §3.1 and §5): 2 bytes/param of fp16 weights, 2 of fp16 gradients, 12 of optimizer state
    (fp32 master weights, momentum, variance).
    Stage 0 replicates all of it; stage 1 shards the optimizer state over the dp ranks, stage 2
    also the gradients, stage 3 also the weights. A shard holds ceil(num_params / dp) params.
    """
    raise NotImplementedError("5. zero_bytes_per_gpu: 2 + 2 + 12 bytes, some of it sharded")
