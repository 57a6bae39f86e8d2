"""Context and expert parallelism in a step drawing: which GPUs form the CP rings and EP groups,
whether a layout may use them, and the bytes each GPU sends for them per forward and backward.

Rank placement follows Megatron-Core's order "tp-cp-ep-dp-pp" (`NVIDIA/Megatron-LM
megatron/core/parallel_state.py`, RankGenerator): CP and EP sit innermost in the data-parallel
axis, so the planner's DP degree counts DP × CP GPUs, a CP ring is `cp` consecutive DP
coordinates of one (TP, PP) position, and an EP group is `ep` consecutive ones (EP folds into
the DP × CP ranks of a stage for the expert layers; expert TP = TP). The rules are
core.expert_parallel.check_5d's.

Bytes (per GPU, per forward of one stage; the backward sends twice the CP bytes: K/V blocks and
their gradients, and the same all-to-alls again for the gradients):
- CP ring: (C − 1) K/V blocks of 2 b (S/C) (h_kv/t) d β per layer (core.context_parallel
  cp_traffic; arXiv:2310.01889 Algorithm 1);
- EP: a dispatch and a combine all-to-all per MoE layer, each rank sending (E_p − 1)/E_p of its
  buffer of tokens × top-k × h × β (core.collectives.all_to_all_time_s; uniform routing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.context_parallel import cp_traffic
from core.expert_parallel import MoeConfig, check_5d, counts
from core.model import ModelSpec
from core.parallel import Layout, Placement

CP_KIND = "zigzag"  # Megatron-Core's load-balanced causal split: 2·CP chunks


@dataclass(frozen=True, kw_only=True)
class Fold:
    """CP and EP degrees folded into the layout's DP axis; the MoE config when there is one."""

    cp: int = 1
    ep: int = 1
    moe: MoeConfig | None = None

    @property
    def active(self) -> bool:
        return self.cp > 1 or self.ep > 1


NONE = Fold()


def check_fold(fold: Fold, lay: Layout, model, seq_len: int, gpus: int) -> None:
    """ValueError naming the rule and the fix when CP and EP do not fit the layout on `gpus`."""
    cp, ep = fold.cp, fold.ep
    for name, v in (("CP", cp), ("EP", ep)):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}={v}: a degree is a whole number ≥ 1; use 1 to turn it off")
    if lay.dp % cp:
        ok = [d for d in range(1, lay.dp + 1) if lay.dp % d == 0]
        raise ValueError(
            f"CP={cp} does not divide the layout's {lay.dp} data-parallel GPUs: CP ranks are "
            f"taken from them (Megatron-Core order tp-cp-ep-dp-pp); use CP in {ok}"
        )
    experts = fold.moe.experts if fold.moe else 0
    if not fold.active:
        return
    check_5d(
        gpus=gpus,
        dp=lay.dp // cp,
        tp=lay.tp,
        pp=lay.pp,
        cp=cp,
        ep=ep,
        etp=lay.tp,
        seq_len=seq_len,
        heads=model.num_heads,
        kv_heads=model.num_kv_heads,
        layers=model.num_layers,
        experts=experts,
        cp_kind=CP_KIND,
    )


def _chunks(placement: Placement, size: int) -> list[list[int]]:
    """Groups of `size` consecutive DP coordinates at every (TP, PP) position."""
    out = []
    for row in placement.dims.groups("dp").tolist():
        out += [row[i : i + size] for i in range(0, len(row), size)]
    return out


def cp_groups(placement: Placement, fold: Fold) -> list[list[int]]:
    return _chunks(placement, fold.cp) if fold.cp > 1 else []


def ep_groups(placement: Placement, fold: Fold) -> list[list[int]]:
    return _chunks(placement, fold.ep) if fold.ep > 1 else []


def coords(placement: Placement, fold: Fold, rank: int) -> dict[str, int]:
    """A rank's DP replica, CP rank and EP rank: the planner's DP coordinate, split."""
    d = int(placement.coord("dp")[rank])
    return {"dp": d // fold.cp, "cp": d % fold.cp, "ep": d % fold.ep}


def span(placement: Placement, groups: list[list[int]]) -> tuple[bool, str]:
    """(some group spans nodes, the link its traffic uses), as core.parallel.group_span says."""
    cl = placement.cluster
    nodes = [len({r // cl.gpus_per_node for r in g}) for g in groups]
    crosses = bool(groups) and max(nodes) > 1
    return crosses, cl.inter_link.name if crosses else cl.intra_link.name


def ring_pairs(members: list[int], whole: bool) -> list[tuple[int, int]]:
    """Rank i sends to rank i + 1 (mod n) around a whole ring; the drawn part's links otherwise."""
    if len(members) < 2:
        return []
    if whole:
        return list(zip(members, members[1:] + members[:1]))
    return list(zip(members, members[1:]))


def pair_links(kind: str, placement: Placement, fold: Fold, shown: set[int]):
    """(sender, receiver) pairs between drawn GPUs: CP ring neighbours, or every EP pair."""
    if kind == "cp_ring":
        out = []
        for g in cp_groups(placement, fold):
            members = [r for r in g if r in shown]
            out += ring_pairs(members, len(members) == len(g))
        return tuple(out)
    out = []
    for g in ep_groups(placement, fold):
        members = [r for r in g if r in shown]
        out += [(a, b) for a in members for b in members if a != b]
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class FoldBytes:
    """Bytes one GPU of each stage sends per forward and per backward of one planner op."""

    cp_forward: tuple[float, ...]
    cp_backward: tuple[float, ...]
    ep_forward: tuple[float, ...]
    ep_backward: tuple[float, ...]


def fold_bytes(fold: Fold, model, lay: Layout, seq_len: int, beta: float) -> FoldBytes:
    """Per stage. One planner op is a whole micro-batch of b sequences on one GPU, which under
    CP is C micro-batches of S/C tokens each: the same tokens, C times the ring's per-batch bytes.
    """
    stages = lay.stage_layers(model.num_layers)
    zero = tuple(0.0 for _ in stages)
    cp_f = ep_f = zero
    if fold.cp > 1:
        tr = cp_traffic(
            model, seq_len=seq_len, cp=fold.cp, tp=lay.tp, micro_batch=lay.micro_batch,
            bytes_per_element=beta,
        )  # fmt: skip
        cp_f = tuple(fold.cp * tr.ring_bytes * n for n in stages)
    if fold.ep > 1 and fold.moe:
        cfg, e = fold.moe, fold.ep
        tokens = lay.micro_batch * seq_len / (lay.tp if lay.sequence_parallel else 1)
        buffer = tokens * cfg.top_k * cfg.hidden * beta
        share = counts(cfg).moe_layers / cfg.layers  # MoE layers per layer (DeepSeek: 58 of 61)
        per_layer = 2 * buffer * (e - 1) / e  # dispatch + combine
        ep_f = tuple(per_layer * share * n for n in stages)
    return FoldBytes(
        cp_forward=cp_f, cp_backward=tuple(2 * x for x in cp_f), ep_forward=ep_f, ep_backward=ep_f
    )


def drawn_replicas(fold: Fold) -> int:
    """DP coordinates a picture must show so one CP ring and one EP group are whole."""
    return int(np.lcm(max(fold.cp, 1), max(fold.ep, 1))) if fold.active else 2


def active_path(cfg: MoeConfig) -> ModelSpec:
    """A dense stand-in the planner can time: the MoE model's attention and, per layer, an MLP of
    its top-k (+ shared) experts, i.e. the parameters one token uses (core.planner has no MoE)."""
    return ModelSpec(
        name=cfg.name,
        num_layers=cfg.layers,
        hidden_size=cfg.hidden,
        num_heads=cfg.heads,
        num_kv_heads=cfg.kv_heads,
        ffn_hidden_size=(cfg.top_k + cfg.shared_experts) * cfg.expert_ffn,
        gated_mlp=True,
        vocab_size=cfg.vocab,
        tied_embeddings=False,
        head_dim=cfg.head_dim,
        source=cfg.source,
    )
