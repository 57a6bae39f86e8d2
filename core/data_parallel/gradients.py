"""Data parallelism, proved with arrays: ring-averaged shard gradients equal the full-batch
gradient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_divides, positive, whole_number
from core.collectives import ring_all_reduce


@dataclass(frozen=True, kw_only=True)
class Problem:
    """A seeded regression task for a 2-layer tanh MLP: inputs, targets and initial weights."""

    x: np.ndarray  # (num_samples, num_features)
    y: np.ndarray  # (num_samples,)
    params: np.ndarray  # flat [W1, b1, w2, b2]
    num_features: int
    hidden: int
    seed: int


def make_problem(
    *, num_samples: int = 96, num_features: int = 4, hidden: int = 16, seed: int = 0
) -> Problem:
    """Targets from a fixed random 'teacher' MLP plus noise; a fresh random student to train."""
    num_samples = whole_number("num_samples", num_samples)
    num_features = whole_number("num_features", num_features)
    hidden = whole_number("hidden", hidden)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((num_samples, num_features))
    teacher = rng.standard_normal(num_features)
    y = np.sin(x @ teacher) + 0.1 * rng.standard_normal(num_samples)
    w1 = rng.standard_normal((num_features, hidden)) / np.sqrt(num_features)
    w2 = rng.standard_normal(hidden) / np.sqrt(hidden)
    params = np.concatenate([w1.ravel(), np.zeros(hidden), w2, [0.0]])
    return Problem(x=x, y=y, params=params, num_features=num_features, hidden=hidden, seed=seed)


def _unpack(params: np.ndarray, num_features: int, hidden: int):
    d, k = num_features, hidden
    w1 = params[: d * k].reshape(d, k)
    b1 = params[d * k : d * k + k]
    w2 = params[d * k + k : d * k + 2 * k]
    return w1, b1, w2, params[-1]


def loss_and_grad(
    params: np.ndarray, x: np.ndarray, y: np.ndarray, *, num_features: int, hidden: int
) -> tuple[float, np.ndarray]:
    """Mean squared error 1/n Σ ½(ŷ−y)² of ŷ = tanh(xW1+b1)·w2 + b2, and its gradient by hand."""
    w1, b1, w2, b2 = _unpack(params, num_features, hidden)
    a = np.tanh(x @ w1 + b1)
    err = a @ w2 + b2 - y
    r = err / len(y)  # d loss / d ŷ
    dz = np.outer(r, w2) * (1.0 - a * a)  # tanh' = 1 − tanh²
    grad = np.concatenate([(x.T @ dz).ravel(), dz.sum(axis=0), a.T @ r, [r.sum()]])
    return float(0.5 * np.mean(err * err)), grad


def shard_bounds(num_samples: int, shard_sizes: tuple[int, ...]) -> list[tuple[int, int]]:
    """[start, stop) of each rank's contiguous slice of the batch, after checking the sizes."""
    if any(int(s) != s or s < 1 for s in shard_sizes):
        raise ValueError(
            f"shard_sizes={list(shard_sizes)}: every rank needs ≥ 1 sample; "
            "give each rank a positive whole number of samples"
        )
    if sum(shard_sizes) != num_samples:
        raise ValueError(
            f"shard_sizes sum to {sum(shard_sizes)} but the batch has {num_samples} "
            f"samples: the shards must cover the batch exactly; make them sum to "
            f"{num_samples}"
        )
    edges = np.concatenate([[0], np.cumsum(shard_sizes)]).astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def equal_shards(num_samples: int, num_ranks: int) -> tuple[int, ...]:
    """Split a batch into num_ranks equal shards (the DistributedSampler case)."""
    num_ranks = whole_number("num_ranks", num_ranks, fix="use e.g. 8")
    check_divides("num_ranks", num_ranks, num_samples, "samples", "equal shards split the batch")
    return (num_samples // num_ranks,) * num_ranks


def skewed_shards(num_samples: int, num_ranks: int) -> tuple[int, ...]:
    """Unequal shards growing with the rank (rank r ∝ r+1, ≥ 1 sample each) that cover the batch.

    Stands in for ranks whose local losses average over different counts (variable-length
    sequences, an uneven last batch); largest-remainder rounding keeps the sum exact.
    """
    if isinstance(num_ranks, bool) or int(num_ranks) != num_ranks or num_ranks < 2:
        raise ValueError(f"num_ranks={num_ranks!r}: unequal shards need ≥ 2 ranks; use e.g. 4")
    if int(num_samples) != num_samples or num_samples <= num_ranks:
        raise ValueError(
            f"a batch of {num_samples} samples over {num_ranks} ranks leaves at most one "
            "sample per rank, so shards cannot differ: unequal shards need more samples "
            f"than ranks; use ≥ {num_ranks + 1} samples (≥ 2 per rank)"
        )
    n, extra = int(num_ranks), int(num_samples) - int(num_ranks)
    share = extra * np.arange(1, n + 1) / (n * (n + 1) / 2)
    sizes = 1 + np.floor(share).astype(int)
    short = int(num_samples) - int(sizes.sum())
    sizes[np.argsort(-(share - np.floor(share)), kind="stable")[:short]] += 1
    if sizes.min() == sizes.max():  # rounding evened them out (e.g. 4 over 2): move one sample
        sizes[0], sizes[-1] = sizes[0] - 1, sizes[-1] + 1
    return tuple(int(v) for v in sizes)


def _local_grads(problem: Problem, params: np.ndarray, shard_sizes: tuple[int, ...]) -> np.ndarray:
    """(ranks, params) matrix: row r = gradient of the mean loss over rank r's shard."""
    bounds = shard_bounds(len(problem.y), shard_sizes)
    return np.stack(
        [
            loss_and_grad(
                params,
                problem.x[a:b],
                problem.y[a:b],
                num_features=problem.num_features,
                hidden=problem.hidden,
            )[1]
            for a, b in bounds
        ]
    )


def _ring_mean(rows: np.ndarray, divisor: float) -> np.ndarray:
    """All ranks' rows summed by the ring all-reduce simulator, divided; returns rank 0's copy."""
    return np.asarray(ring_all_reduce(rows).outputs)[0] / divisor


@dataclass(frozen=True, kw_only=True)
class DpProof:
    """Full-batch gradient vs the data-parallel ones, each with its max |difference|."""

    shard_sizes: tuple[int, ...]
    full_grad: np.ndarray  # gradient of the mean loss over the whole batch
    local_grads: np.ndarray  # (ranks, params): each rank's mean gradient over its shard
    ring_grad: np.ndarray  # ring all-reduce sum of local means / N  (DDP's average)
    weighted_grad: np.ndarray  # ring sum of n_r × local mean / Σ n_r   (the unequal-shard fix)
    ring_max_abs_diff: float
    weighted_max_abs_diff: float
    ring_copies_max_abs_diff: float  # how far ranks' copies of the sum differ (should be ~0)
    equal_shards: bool
    ring_steps: int


def prove_data_parallel(problem: Problem, shard_sizes: tuple[int, ...]) -> DpProof:
    """Compute per-rank gradients, all-reduce them with the ring simulator, compare with full
    batch.
    """
    shard_sizes = tuple(int(s) for s in shard_sizes)
    full = loss_and_grad(
        problem.params,
        problem.x,
        problem.y,
        num_features=problem.num_features,
        hidden=problem.hidden,
    )[1]
    local = _local_grads(problem, problem.params, shard_sizes)
    n = len(shard_sizes)
    trace = ring_all_reduce(local)
    outputs = np.asarray(trace.outputs)
    ring = outputs[0] / n
    # Fix for unequal shards: weight each local mean by its sample count (= the local *sum*).
    weights = np.asarray(shard_sizes, dtype=float)[:, None]
    weighted = _ring_mean(local * weights, float(sum(shard_sizes)))
    return DpProof(
        shard_sizes=shard_sizes,
        full_grad=full,
        local_grads=local,
        ring_grad=ring,
        weighted_grad=weighted,
        ring_max_abs_diff=float(np.max(np.abs(ring - full))),
        weighted_max_abs_diff=float(np.max(np.abs(weighted - full))),
        ring_copies_max_abs_diff=float(np.max(np.abs(outputs - outputs[0]))),
        equal_shards=len(set(shard_sizes)) == 1,
        ring_steps=len(trace.steps),
    )


@dataclass(frozen=True, kw_only=True)
class SgdCurves:
    """Full-batch loss after each SGD step, for full-batch, ring-averaged and weighted updates."""

    steps: np.ndarray  # 0..num_steps
    full_batch_loss: np.ndarray
    ring_average_loss: (
        np.ndarray
    )  # plain average of shard means (DDP); equals full iff shards equal
    weighted_loss: np.ndarray  # sample-weighted average: always equals full batch
    max_abs_loss_diff_ring: float
    max_abs_loss_diff_weighted: float


def sgd_curves(
    problem: Problem,
    shard_sizes: tuple[int, ...],
    *,
    num_steps: int = 30,
    learning_rate: float = 0.2,
) -> SgdCurves:
    """Run a few plain SGD steps three ways from the same start and record the full-batch loss."""
    num_steps = whole_number("num_steps", num_steps, fix="use e.g. 30")
    positive("learning_rate", learning_rate, fix="use e.g. 0.2")
    shard_sizes = tuple(int(s) for s in shard_sizes)
    n, total = len(shard_sizes), float(sum(shard_sizes))
    weights = np.asarray(shard_sizes, dtype=float)[:, None]

    def full(p):
        return loss_and_grad(
            p, problem.x, problem.y, num_features=problem.num_features, hidden=problem.hidden
        )

    p_full, p_ring, p_weighted = (problem.params.copy() for _ in range(3))
    curves = {k: [full(problem.params)[0]] for k in ("full", "ring", "weighted")}
    size = problem.params.size
    for _ in range(num_steps):
        # One ring all-reduce per step carries both DP variants side by side: [means | n_r × means].
        rows = np.hstack(
            [
                _local_grads(problem, p_ring, shard_sizes),
                _local_grads(problem, p_weighted, shard_sizes) * weights,
            ]
        )
        summed = np.asarray(ring_all_reduce(rows).outputs)[0]
        p_full = p_full - learning_rate * full(p_full)[1]
        p_ring = p_ring - learning_rate * summed[:size] / n
        p_weighted = p_weighted - learning_rate * summed[size:] / total
        for k, p in (("full", p_full), ("ring", p_ring), ("weighted", p_weighted)):
            curves[k].append(full(p)[0])
    curves = {k: np.array(v) for k, v in curves.items()}
    return SgdCurves(
        steps=np.arange(num_steps + 1),
        full_batch_loss=curves["full"],
        ring_average_loss=curves["ring"],
        weighted_loss=curves["weighted"],
        max_abs_loss_diff_ring=float(np.max(np.abs(curves["ring"] - curves["full"]))),
        max_abs_loss_diff_weighted=float(np.max(np.abs(curves["weighted"] - curves["full"]))),
    )
