"""Which GPUs a step drawing shows (at most a few dozen), and the links each kind of traffic uses
between them: rings inside TP, CP and DP groups, sends between neighbouring pipeline stages,
every pair of an EP group (all-to-all); on core.parallel's 3-D placement or the planner's
CP-aware one (core.planner.grid GridPlacement).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.parallel import Placement
from core.stepplan.cpep import pair_links

MAX_DRAWN = 64  # GPUs one picture shows; bigger jobs show representative replicas and stages
MAX_NODES = 16


@dataclass(frozen=True, kw_only=True)
class Drawn:
    """The ranks drawn (sorted), the nodes holding them, and how much of each axis they cover."""

    ranks: tuple[int, ...]
    nodes: tuple[int, ...]
    dp: int  # replicas drawn (of layout.dp)
    pp: int  # stages drawn
    tp: int  # TP ranks drawn
    cp: int = 1  # CP ranks drawn (of each ring)

    @property
    def count(self) -> int:
        return len(self.ranks)


def _whole_groups(placement) -> tuple[int, int]:
    """(CP coordinates, DP replicas) a picture shows so one CP ring and one EP group are whole
    and, without them, two DP replicas (so DP links show)."""
    d = placement.dims
    cp, ep = getattr(d, "cp", 1), getattr(d, "ep", 1)
    k_dp = min(d.dp, 2) if cp == 1 and ep == 1 else 1
    k_cp = cp
    if ep > 1:  # the first EP group: the CP and DP coordinates its members take
        first = d.groups("ep")[0]
        k_cp = max(k_cp, int(placement.coord("cp")[first].max()) + 1)
        k_dp = max(k_dp, int(placement.coord("dp")[first].max()) + 1)
    return k_cp, k_dp


def drawn_ranks(placement: Placement, limit: int = MAX_DRAWN) -> Drawn:
    """Every GPU if they fit; else two DP replicas (so DP links show) or one whole CP ring and EP
    group, as many stages as fit."""
    d = placement.dims
    k_tp = min(d.tp, limit)
    k_cp, k_dp = _whole_groups(placement)
    k_pp = max(1, min(d.pp, limit // (k_tp * k_cp * k_dp)))
    if k_pp * k_tp * k_cp * k_dp > limit:  # TP alone fills the picture: one replica, one ring
        k_dp, k_cp = 1, max(1, min(k_cp, limit // k_tp))
    k_dp = max(k_dp, min(d.dp, limit // (k_tp * k_pp * k_cp)))  # more replicas while they fit
    keep = (
        (placement.coord("dp") < k_dp)
        & (placement.coord("pp") < k_pp)
        & (placement.coord("tp") < k_tp)
    )
    if k_cp < getattr(d, "cp", 1):
        keep &= placement.coord("cp") < k_cp
    ranks = np.flatnonzero(keep)
    nodes = np.unique(placement.node[ranks])
    if len(nodes) > MAX_NODES:  # ranks scattered by an unusual order: keep the first nodes
        nodes = nodes[:MAX_NODES]
        ranks = ranks[np.isin(placement.node[ranks], nodes)]
    return Drawn(
        ranks=tuple(int(r) for r in ranks),
        nodes=tuple(int(n) for n in nodes),
        dp=k_dp,
        pp=k_pp,
        tp=k_tp,
        cp=k_cp,
    )


def links(placement: Placement, kind: str, drawn: Drawn) -> tuple[tuple[int, int], ...]:
    """(sender, receiver) rank pairs of one traffic kind between drawn GPUs; DP traffic runs in
    the DP × CP gradient group (the planner's "dp" span) when there is CP."""
    shown = set(drawn.ranks)
    if kind in ("cp_ring", "ep_all_to_all"):
        return pair_links(kind, placement, shown)
    dim = {"tp": "tp", "pp_forward": "pp", "pp_backward": "pp"}.get(kind, "dp")
    if dim == "dp" and getattr(placement.dims, "cp", 1) > 1:
        dim = "dp_cp"
    out: list[tuple[int, int]] = []
    for row in placement.dims.groups(dim).tolist():
        members = [r for r in row if r in shown]
        if len(members) < 2:
            continue
        if dim == "pp":  # neighbouring stages: activations forward, gradients backward
            pairs = [(a, b) for a, b in zip(row, row[1:]) if a in shown and b in shown]
            out += pairs if kind == "pp_forward" else [(b, a) for a, b in pairs]
        elif len(members) == len(row):  # a whole ring: rank i sends to rank i + 1 (mod n)
            out += list(zip(members, members[1:] + members[:1]))
        else:  # part of a ring drawn: its drawn links only
            out += list(zip(members, members[1:]))
    return tuple(out)
