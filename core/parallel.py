"""Rank grid: place DP x PP x TP on a cluster's nodes, list each kind of group, find node
crossings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from itertools import permutations

import numpy as np

from core.hardware import Cluster

DIMS = ("dp", "pp", "tp")
# An order lists the dimensions innermost (adjacent ranks) first, as in Megatron-Core's
# initialize_model_parallel(order="tp-cp-ep-dp-pp"). Default (docs/notes/planner.md §2): TP
# innermost, in one NVLink domain; PP across nodes; DP outermost (Llama 3 paper Sec. 3.3.2).
ORDERS = tuple("-".join(p) for p in permutations(("tp", "pp", "dp")))
DEFAULT_ORDER = "tp-pp-dp"
ZERO_LABELS = {0: "DDP", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3"}
# The schedules core.memory can size (its SCHEDULES); the simulator knows more.
SCHEDULE_LABELS = {"1f1b": "1F1B", "gpipe": "GPipe", "interleaved_1f1b": "interleaved 1F1B"}


def _whole(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}={value!r} must be a whole number ≥ 1")
    return value


@dataclass(frozen=True, kw_only=True)
class ParallelDims:
    """DP x PP x TP degrees and the order ranks are laid out in (torchtitan's ParallelDims
    style).
    """

    dp: int = 1
    pp: int = 1
    tp: int = 1
    order: str = DEFAULT_ORDER

    def __post_init__(self) -> None:
        for d in DIMS:
            _whole(d, getattr(self, d))
        if self.order not in ORDERS:
            raise ValueError(
                f"order={self.order!r} is unknown: list tp, pp and dp innermost first, "
                f"one of {', '.join(ORDERS)}"
            )

    @property
    def world_size(self) -> int:
        return self.dp * self.pp * self.tp

    @property
    def strides(self) -> dict[str, int]:
        """Rank distance between neighbours along each dimension (innermost stride 1)."""
        out, step = {}, 1
        for d in self.order.split("-"):
            out[d] = step
            step *= getattr(self, d)
        return out

    def check_gpus(self, num_gpus: int) -> None:
        """Raise unless the grid uses every GPU exactly once."""
        if self.world_size != num_gpus:
            mp = self.tp * self.pp
            fix = (
                f"use DP = {num_gpus // mp}"
                if num_gpus % mp == 0
                else f"pick TP x PP dividing {num_gpus}"
            )
            raise ValueError(
                f"DP x PP x TP = {self.dp} x {self.pp} x {self.tp} = {self.world_size} "
                f"≠ {num_gpus} GPUs: the grid must use every GPU exactly once; {fix}"
            )

    def rank(self, *, dp: int, pp: int, tp: int) -> int:
        """Global rank of the GPU at grid coordinates (dp, pp, tp)."""
        st = self.strides
        for d, v in (("dp", dp), ("pp", pp), ("tp", tp)):
            if not 0 <= v < getattr(self, d):
                raise ValueError(f"{d} coordinate {v} is outside 0..{getattr(self, d) - 1}")
        return dp * st["dp"] + pp * st["pp"] + tp * st["tp"]

    def coords(self, rank: int) -> dict[str, int]:
        """(dp, pp, tp) coordinates of a global rank."""
        if not 0 <= rank < self.world_size:
            raise ValueError(f"rank {rank} is outside 0..{self.world_size - 1}")
        st = self.strides
        return {d: rank // st[d] % getattr(self, d) for d in DIMS}

    def grid(self) -> np.ndarray:
        """Ranks as an array indexed [dp, pp, tp]."""
        st = self.strides
        dp, pp, tp = np.ix_(np.arange(self.dp), np.arange(self.pp), np.arange(self.tp))
        return dp * st["dp"] + pp * st["pp"] + tp * st["tp"]

    def groups(self, dim: str) -> np.ndarray:
        """Ranks of every `dim` group, one row per group (row = ranks varying only along dim)."""
        if dim not in DIMS:
            raise ValueError(f"dim={dim!r} is unknown: use one of {', '.join(DIMS)}")
        axis = DIMS.index(dim)
        return np.moveaxis(self.grid(), axis, -1).reshape(-1, getattr(self, dim))


@dataclass(frozen=True, kw_only=True)
class GroupSpan:
    """How one kind of group sits on the nodes and which link carries its traffic."""

    dim: str
    size: int
    num_groups: int
    nodes_per_group: int  # most nodes any one group touches
    ranks_per_node: int  # fewest members any group has on one of its nodes
    crossing_groups: int  # groups touching more than one node
    even: bool  # every group has the same number of members on each of its nodes
    link: str  # e.g. "NVLink 4" or "NVLink 4 + InfiniBand NDR"

    @property
    def crosses_node(self) -> bool:
        return self.crossing_groups > 0


def group_span(dims: ParallelDims, dim: str, cluster: Cluster) -> GroupSpan:
    """Nodes each `dim` group spans (ranks are numbered node-major, gpus_per_node per node)."""
    nodes = np.sort(dims.groups(dim) // cluster.gpus_per_node, axis=1)
    new = np.diff(nodes, axis=1) != 0
    per_group = 1 + new.sum(axis=1)
    size = nodes.shape[1]
    # Run lengths of equal node ids in each sorted row: members per node.
    starts = np.concatenate([np.ones((len(nodes), 1), bool), new], axis=1)
    idx = np.flatnonzero(starts.ravel())
    runs = np.diff(np.append(idx, nodes.size))
    span = int(per_group.max())
    intra, inter = cluster.intra_link.name, cluster.inter_link.name
    link = intra if span == 1 else (inter if runs.min() == 1 else f"{intra} + {inter}")
    return GroupSpan(
        dim=dim,
        size=size,
        num_groups=len(nodes),
        nodes_per_group=span,
        ranks_per_node=int(runs.min()),
        crossing_groups=int((per_group > 1).sum()),
        even=bool(runs.min() == runs.max() and per_group.min() == span),
        link=link,
    )


@dataclass(frozen=True, kw_only=True, eq=False)
class Placement:
    """Every global rank's node, local GPU and (dp, pp, tp) coordinates, plus group spans."""

    dims: ParallelDims
    cluster: Cluster

    @cached_property
    def ranks(self) -> np.ndarray:
        return np.arange(self.dims.world_size)

    @property
    def node(self) -> np.ndarray:
        return self.ranks // self.cluster.gpus_per_node

    @property
    def local_gpu(self) -> np.ndarray:
        return self.ranks % self.cluster.gpus_per_node

    def coord(self, dim: str) -> np.ndarray:
        """Coordinate along dim of every rank (index = global rank)."""
        return self.ranks // self.dims.strides[dim] % getattr(self.dims, dim)

    @cached_property
    def spans(self) -> dict[str, GroupSpan]:
        return {d: group_span(self.dims, d, self.cluster) for d in DIMS}

    def crossing_ranks(self, dim: str) -> np.ndarray:
        """Boolean per rank: its `dim` group touches more than one node."""
        g = self.dims.groups(dim)
        n = g // self.cluster.gpus_per_node
        out = np.zeros(self.dims.world_size, bool)
        out[g.ravel()] = np.repeat(n.min(axis=1) != n.max(axis=1), g.shape[1])
        return out

    def table(self) -> list[dict]:
        """One row per rank: rank, node, local GPU, dp, pp, tp."""
        cols = {
            "rank": self.ranks,
            "node": self.node,
            "local_gpu": self.local_gpu,
            **{d: self.coord(d) for d in DIMS},
        }
        return [dict(zip(cols, map(int, row))) for row in zip(*cols.values())]


def place(dims: ParallelDims, cluster: Cluster) -> Placement:
    """Map the grid onto the cluster; raises unless it uses every GPU exactly once."""
    dims.check_gpus(cluster.num_gpus)
    return Placement(dims=dims, cluster=cluster)


@dataclass(frozen=True, kw_only=True)
class Layout:
    """DP x TP x PP degrees, ZeRO stage, micro-batch, schedule, chunks v, rank order."""

    dp: int
    tp: int = 1
    pp: int = 1
    zero_stage: int = 0
    micro_batch: int | None = None  # None: the Training's
    schedule: str | None = None  # None: the Training's
    num_chunks: int = 1
    order: str = DEFAULT_ORDER

    def __post_init__(self) -> None:
        for f in ("dp", "tp", "pp", "num_chunks"):
            _whole(f, getattr(self, f))
        if self.zero_stage not in ZERO_LABELS:
            raise ValueError(f"zero_stage={self.zero_stage!r} is unknown: use 0 (DDP), 1, 2 or 3")
        if self.micro_batch is not None:
            _whole("micro_batch", self.micro_batch)
        if self.schedule is not None and self.schedule not in SCHEDULE_LABELS:
            raise ValueError(
                f"schedule={self.schedule!r} is unknown: use one of {', '.join(SCHEDULE_LABELS)}"
            )
        _ = self.dims  # validates the order

    @property
    def dims(self) -> ParallelDims:
        return ParallelDims(dp=self.dp, pp=self.pp, tp=self.tp, order=self.order)

    def resolved(self, training) -> Layout:
        """This layout with micro-batch and schedule filled in from the training settings."""
        return replace(
            self,
            micro_batch=self.micro_batch or training.micro_batch,
            schedule=self.schedule or training.schedule,
        )

    def check(self, num_gpus: int, global_batch: int) -> None:
        """Raise ValueError (numbers, rule, fix) unless a resolved layout can run this batch."""
        self.dims.check_gpus(num_gpus)
        B, dp, b = global_batch, self.dp, self.micro_batch
        if B % (dp * b):
            fix = (
                f"use a micro-batch dividing {B // dp} ({B} / DP)"
                if B % dp == 0
                else f"use a DP degree dividing {B}, or a global batch that is a multiple of "
                f"{dp * b}"
            )
            raise ValueError(
                f"global batch {B} is not divisible by DP × micro-batch = {dp} × {b} = "
                f"{dp * b}: every DP rank needs the same whole number of micro-batches; {fix}"
            )
        if (self.num_chunks > 1) != (self.schedule == "interleaved_1f1b") or self.num_chunks > 8:
            raise ValueError(
                f"{self.num_chunks} model chunks per rank with schedule {self.schedule}: "
                "interleaved 1F1B needs 2 to 8 chunks, the others 1; use num_chunks=2 "
                "with interleaved_1f1b, else 1"
            )

    @property
    def label(self) -> str:
        v = f" v={self.num_chunks}" if self.num_chunks > 1 else ""
        sched = SCHEDULE_LABELS.get(self.schedule, "schedule unset") + v
        order = "" if self.order == DEFAULT_ORDER else f", order {self.order}"
        return (
            f"DP {self.dp} × TP {self.tp} × PP {self.pp}, {ZERO_LABELS[self.zero_stage]}, "
            f"mb {self.micro_batch}, {sched}{order}"
        )
