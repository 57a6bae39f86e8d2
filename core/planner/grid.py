"""The planner's rank grid with context and expert parallelism, and its placement on the nodes:
the one grid the planner costs (core.planner.cp_ep layout_spans) and every page draws.

Grid (docs/notes/planner.md §2): the layout's order over TP, PP and DP with CP right after TP, as
Megatron-Core's default order "tp-cp-ep-dp-pp" keeps it (`NVIDIA/Megatron-LM
megatron/core/parallel_state.py`, initialize_model_parallel). The gradient group of a CP layout
is DP × CP (Megatron's "dp_cp" group); an EP group is EP consecutive members of a DP × CP group
(experts fold as ETP × EP × EDP with ETP = TP innermost, `NVIDIA/Megatron-LM
megatron/core/transformer/moe/README.md`, "parallel folding").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from core.hardware import Cluster
from core.parallel import GroupSpan, Layout, Placement, group_span

AXES = ("tp", "cp", "pp", "dp")


@dataclass(frozen=True)
class RankGrid:
    """The 4-D rank grid (TP, CP, PP, DP in the layout's order, CP after TP) as group_span needs:
    groups(dim) gives one row of ranks per group (dim: tp, cp, pp, dp, dp_cp or ep)."""

    tp: int
    cp: int
    pp: int
    dp: int
    ep: int
    order: str

    @property
    def world_size(self) -> int:
        return self.tp * self.cp * self.pp * self.dp

    @functools.cached_property
    def grid(self) -> np.ndarray:
        """Ranks indexed [tp, cp, pp, dp]."""
        names = self.order.split("-")
        names.insert(names.index("tp") + 1, "cp")
        size = {d: getattr(self, d) for d in names}
        stride, step = {}, 1
        for d in names:
            stride[d], step = step, step * size[d]
        axes = np.ix_(*(np.arange(size[d]) for d in AXES))
        return sum(a * stride[d] for a, d in zip(axes, AXES))

    def groups(self, dim: str) -> np.ndarray:
        g = self.grid
        if dim in AXES:
            axis = AXES.index(dim)
            return np.moveaxis(g, axis, -1).reshape(-1, g.shape[axis])
        if dim not in ("dp_cp", "ep"):
            raise ValueError(f"dim={dim!r} is not a group of the grid: use {AXES}, dp_cp or ep")
        # dp_cp: ranks sharing (tp, pp), in rank order; ep: EP consecutive members of one
        dpcp = np.sort(np.moveaxis(g, (1, 3), (-2, -1)).reshape(-1, self.cp * self.dp), axis=1)
        return dpcp.reshape(-1, self.ep) if dim == "ep" else dpcp


def rank_grid(lay: Layout) -> RankGrid:
    return RankGrid(tp=lay.tp, cp=lay.cp, pp=lay.pp, dp=lay.dp, ep=lay.ep, order=lay.order)


@dataclass(frozen=True, kw_only=True, eq=False)
class GridPlacement(Placement):
    """Every rank's node, local GPU and (tp, cp, pp, dp, ep) coordinates on the planner's grid,
    and the span of each kind of group (dp = the DP × CP gradient group, as the planner costs it).
    core.parallel.Placement's ranks, nodes, crossing ranks and table, with CP and EP."""

    dims: RankGrid
    cluster: Cluster
    TABLE_DIMS = ("dp", "pp", "tp", "cp")

    @functools.cached_property
    def _coords(self) -> dict[str, np.ndarray]:
        out = {}
        for axis, d in enumerate(AXES):
            c = np.empty(self.dims.world_size, dtype=int)
            idx = np.indices(self.dims.grid.shape)[axis]
            c[self.dims.grid.ravel()] = idx.ravel()
            out[d] = c
        ep = np.empty(self.dims.world_size, dtype=int)  # position inside its EP group
        g = self.dims.groups("ep")
        ep[g.ravel()] = np.tile(np.arange(g.shape[1]), len(g))
        return out | {"ep": ep}

    def coord(self, dim: str) -> np.ndarray:
        """Coordinate along dim (tp, cp, pp, dp; ep: rank inside its EP group) of every rank."""
        return self._coords[dim]

    @staticmethod
    def group_dim(dim: str) -> str:
        """The grid's group behind a span name: "dp" is the DP × CP gradient group."""
        return "dp_cp" if dim == "dp" else dim

    @functools.cached_property
    def spans(self) -> dict[str, GroupSpan]:
        return grid_spans(self.dims, self.cluster)


@functools.lru_cache(maxsize=4096)
def _grid_spans(grid: RankGrid, cluster: Cluster) -> dict[str, GroupSpan]:
    out = {d: group_span(grid, d, cluster) for d in ("tp", "cp", "pp", "ep")}
    dp = group_span(grid, "dp_cp", cluster)
    return out | {"dp": GroupSpan(**{**vars(dp), "dim": "dp"})}


def grid_spans(grid: RankGrid, cluster: Cluster) -> dict[str, GroupSpan]:
    """GroupSpan of tp, cp, pp, ep and dp (the DP × CP gradient group) on the grid."""
    return dict(_grid_spans(grid, cluster))


def grid_placement(lay: Layout, cluster: Cluster) -> GridPlacement:
    """The layout's grid on the cluster; raises unless DP × TP × PP × CP uses every GPU once."""
    grid = rank_grid(lay)
    if grid.world_size != cluster.num_gpus:
        lay.check(cluster.num_gpus, lay.dp * lay.micro_batch)  # the layout's own wording
    return GridPlacement(dims=grid, cluster=cluster)
