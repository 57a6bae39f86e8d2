"""Rank grid: place DP x PP x TP on a cluster's nodes, list each kind of group, find crossings."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import permutations

import numpy as np

from core.checks import check_choice, check_divides, whole_number
from core.hardware import Cluster
from core.schedule_names import SCHEDULES, check_chunks
from core.zero_stages import ZERO_STAGES, ZeroStage  # noqa: F401 (re-exported)

DIMS = ("dp", "pp", "tp")
# An order lists the dimensions innermost (adjacent ranks) first, as in Megatron-Core's
# initialize_model_parallel(order="tp-cp-ep-dp-pp"). Default (docs/notes/planner.md §2): TP
# innermost, in one NVLink domain; PP across nodes; DP outermost (Llama 3 paper Sec. 3.3.2).
ORDERS = tuple("-".join(p) for p in permutations(("tp", "pp", "dp")))
DEFAULT_ORDER = "tp-pp-dp"


@dataclass(frozen=True, kw_only=True)
class ParallelDims:
    """DP x PP x TP degrees and the order ranks are laid out in (torchtitan's ParallelDims)."""

    dp: int = 1
    pp: int = 1
    tp: int = 1
    order: str = DEFAULT_ORDER

    def __post_init__(self) -> None:
        for d in DIMS:  # store ints even when given integral floats
            object.__setattr__(self, d, whole_number(d, getattr(self, d)))
        check_choice("order", self.order, ORDERS, rule="list tp, pp and dp innermost first")

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
        check_choice("dim", dim, DIMS)
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
    TABLE_DIMS = DIMS  # table()'s coordinates (core.planner.grid.GridPlacement adds cp)

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
        g = self.dims.groups(getattr(self, "group_dim", str)(dim))  # GridPlacement: dp → dp_cp
        n = g // self.cluster.gpus_per_node
        out = np.zeros(self.dims.world_size, bool)
        out[g.ravel()] = np.repeat(n.min(axis=1) != n.max(axis=1), g.shape[1])
        return out

    def table(self) -> list[dict]:
        """One row per rank: rank, node, local GPU and its TABLE_DIMS coordinates."""
        cols = {"rank": self.ranks, "node": self.node, "local_gpu": self.local_gpu}
        cols |= {d: self.coord(d) for d in self.TABLE_DIMS}
        return [dict(zip(cols, map(int, row))) for row in zip(*cols.values())]


def place(dims: ParallelDims, cluster: Cluster) -> Placement:
    """Map the grid onto the cluster; raises unless it uses every GPU exactly once."""
    dims.check_gpus(cluster.num_gpus)
    return Placement(dims=dims, cluster=cluster)


@dataclass(frozen=True, kw_only=True)
class Layout:
    """DP x TP x PP x CP, ZeRO, SP, micro-batch, schedule, order, per-stage layers, HSDP; EP folds
    in DP x CP (Megatron-Core's parallel state: experts use ETP x EP x EDP, ETP = TP here)."""

    dp: int
    tp: int = 1
    pp: int = 1
    cp: int = 1  # context parallel: ranks splitting each sequence
    ep: int = 1  # expert parallel: ranks splitting each MoE layer's experts
    cp_kind: str = "zigzag"  # core.expert_parallel.CP_KINDS: ring, zigzag or ulysses
    zero_stage: int = 0
    sequence_parallel: bool = False
    micro_batch: int = 1
    schedule: str = "1f1b"
    num_chunks: int = 1  # v: model chunks per rank (interleaved schedules)
    order: str = DEFAULT_ORDER
    shard_degree: int | None = None  # None: shard over all DP ranks
    # Layers per stage, first to last; None = L / PP each (Megatron decoder_first_pipeline_...)
    layers_per_stage: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        for f in ("dp", "tp", "pp", "cp", "ep", "micro_batch", "num_chunks"):  # ints from 8.0
            object.__setattr__(self, f, whole_number(f, getattr(self, f)))
        zero = int(check_choice("zero_stage", self.zero_stage, ZERO_STAGES))
        object.__setattr__(self, "zero_stage", zero)
        check_chunks(self.schedule, self.num_chunks, name="num_chunks")
        check_choice("cp_kind", self.cp_kind, ("ring", "zigzag", "ulysses"))
        if (dpcp := self.dp * self.cp) % self.ep:  # check_5d's wording, with ETP = TP
            raise ValueError(
                f"EP × ETP = {self.ep * self.tp} does not divide TP × CP × DP = {self.tp * dpcp}: "
                "the expert layout folds into the same GPUs of a pipeline stage (ETP = TP here); "
                f"pick EP among the divisors of DP × CP = {dpcp}"
            )
        if self.shard_degree is not None:
            shard = whole_number("shard_degree", self.shard_degree)
            object.__setattr__(self, "shard_degree", shard)
            rule = "the DP ranks must split into whole shard groups"
            check_divides("shard_degree", shard, self.dp, "DP ranks", rule)
        _ = self.dims  # validates the order
        if self.layers_per_stage is not None:
            n = tuple(whole_number("layers per stage", x) for x in self.layers_per_stage)
            object.__setattr__(self, "layers_per_stage", n)
            if len(n) != self.pp or min(n) < self.num_chunks:
                raise ValueError(
                    f"layers_per_stage {list(n)[:3]}… lists {len(n)} stages for PP={self.pp}, "
                    f"v={self.num_chunks}: give one count per stage, each ≥ v (a layer per chunk)"
                )

    def stage_layers(self, num_layers: int) -> tuple[int, ...]:
        """Layers on each pipeline stage; raises unless they add up to the model's num_layers."""
        n = self.layers_per_stage or (num_layers // self.pp,) * self.pp
        if sum(n) != num_layers:
            raise ValueError(
                f"layers per stage {list(n)[:4]}… add up to {sum(n)}, not the model's "
                f"{num_layers}: every layer needs one stage; list counts summing to {num_layers}"
            )
        return n

    @property
    def dims(self) -> ParallelDims:  # 3-D grid; with CP: core.planner.grid.grid_placement
        return ParallelDims(dp=self.dp, pp=self.pp, tp=self.tp, order=self.order)

    @property
    def world_size(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def edp(self) -> int:
        """Expert data-parallel degree: replicas of each expert shard (DP x CP / EP)."""
        return self.dp * self.cp // self.ep

    def check_batch(self, global_batch: int) -> None:
        """Raise ValueError (numbers, rule, fix) unless DP x micro-batch divides the batch."""
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

    def check(self, num_gpus: int, global_batch: int) -> None:
        """Raise ValueError (numbers, rule, fix) unless the layout can run this batch here."""
        if self.cp == 1:
            return self.dims.check_gpus(num_gpus), self.check_batch(global_batch)
        if self.world_size != num_gpus:  # check_5d's wording
            raise ValueError(
                f"DP × TP × PP × CP = {self.dp} × {self.tp} × {self.pp} × {self.cp} = "
                f"{self.world_size} ≠ {num_gpus} GPUs: every GPU holds one (DP, TP, PP, CP) "
                f"coordinate (EP folds inside them); change a degree so the product is {num_gpus}"
            )
        self.check_batch(global_batch)

    @property
    def label(self) -> str:
        v = f" v={self.num_chunks}" if self.num_chunks > 1 else ""
        zero = ZERO_STAGES[self.zero_stage].label
        shard = "" if self.shard_degree is None else f" in groups of {self.shard_degree}"
        sp = ", SP" if self.sequence_parallel else ""
        order = "" if self.order == DEFAULT_ORDER else f", order {self.order}"
        n = self.layers_per_stage
        split = f" (layers {n[0]}/{n[1]}{'…/' + str(n[-1]) if len(n) > 2 else ''})" if n else ""
        cp = (f" × CP {self.cp}" if self.cp > 1 else "") + (f" (EP {self.ep})" * (self.ep > 1))
        return (
            f"DP {self.dp} × TP {self.tp} × PP {self.pp}{split}{cp}, {zero}{shard}{sp}, "
            f"mb {self.micro_batch}, {SCHEDULES[self.schedule].label}{v}{order}"
        )
