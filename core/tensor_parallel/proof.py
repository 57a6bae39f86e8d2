"""What every tensor-parallel proof shares: the TP checks, the ring all-reduce of partial results,
and the record of max |sharded − unsharded| differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.checks import check_divides, whole_number
from core.collectives import ring_all_reduce

REPLICATED = -1  # ownership value for a tensor every TP rank holds whole


def check_tp(tp: int, **divisible: int) -> int:
    """TP as an int ≥ 1 dividing every named size (keyword = the size's noun), else a ValueError."""
    tp = whole_number("TP", tp, fix="use e.g. 1, 2, 4 or 8")
    for noun, size in divisible.items():
        check_divides("TP", tp, size, noun, "each GPU must hold a whole share of them")
    return tp


def check_dims(**dims: int) -> tuple[int, ...]:
    """The named layer dimensions as ints, in order, each a whole number ≥ 1, else a ValueError."""
    return tuple(whole_number(name, v, fix="use e.g. 8") for name, v in dims.items())


def all_reduce_partials(partials: list[np.ndarray]) -> np.ndarray:
    """Sum per-rank partial tensors with the ring simulator; returns every rank's copy (t, ...)."""
    shape = partials[0].shape
    out = np.asarray(ring_all_reduce(np.stack([p.ravel() for p in partials])).outputs)
    return out.reshape((len(partials),) + shape)


@dataclass(frozen=True, kw_only=True)
class TpProof:
    """Max |sharded − unsharded| for the output and every gradient, over all TP ranks' copies."""

    layer: str  # "mlp", "attention" or "mlp + sequence parallel"
    tp: int
    max_abs_diff: dict[str, float]  # "Y", "dX", "dW1", ... -> max |difference|
    forward_collectives: tuple[str, ...] = ("all-reduce",)  # g: sum the partial outputs
    backward_collectives: tuple[str, ...] = ("all-reduce",)  # f: sum the partial input gradients

    @property
    def worst(self) -> float:
        return max(self.max_abs_diff.values())

    @property
    def forward_max_abs_diff(self) -> float:
        """The output Y."""
        return self.max_abs_diff["Y"]

    @property
    def backward_max_abs_diff(self) -> float:
        """Every gradient: dX and the weight (and bias) gradients."""
        return max(v for k, v in self.max_abs_diff.items() if k != "Y")


def max_abs_difference(a, b) -> float:
    """Largest |a − b| over all elements."""
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
