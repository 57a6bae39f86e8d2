"""Context and expert parallelism in a step drawing: the bytes one GPU sends for them per forward
and backward, as the planner costs them (core.planner.cp_ep: cp_layer's K/V hop, ep_layer's
all-to-all bytes on the NVLink and NIC legs of the EP group), on the groups of the planner's own
grid (core.planner.grid: CP right after TP, EP groups inside DP × CP).

Per GPU, per forward of one planner op (one micro-batch of b sequences, S/C tokens each on a CP
rank) of a stage of n layers, m of them MoE layers:
- CP ring: n (C − 1) hops of one K/V block, 2 b (S/C) (h_kv/t) d β bytes (arXiv:2310.01889
  Algorithm 1); the backward sends the blocks and their gradients, twice that;
- EP: m dispatch + combine all-to-alls, each sending (E_p − 1)/E_p of the buffer tokens × top-k ×
  h × β (tokens = b S / (C t): each TP rank dispatches its slice, as core.planner.stage_work
  does); the backward the same two (four with full recompute).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.planner.cp_ep import cp_layer, ep_layer
from core.planner.stage_work import _moe_layers


@dataclass(frozen=True, kw_only=True)
class CpEpBytes:
    """Bytes one GPU of each stage sends per forward and per backward of one planner op; the
    EP bytes also split into their NVLink and NIC legs (per forward)."""

    cp_forward: tuple[float, ...]
    cp_backward: tuple[float, ...]
    ep_forward: tuple[float, ...]
    ep_backward: tuple[float, ...]
    ep_nvlink_forward: tuple[float, ...]
    ep_nic_forward: tuple[float, ...]


def cp_ep_bytes(model, ev) -> CpEpBytes:
    """Per stage, from the planner's cp_layer and ep_layer on the evaluation's own group spans."""
    lay, tr, spans, cl = ev.layout, ev.training, ev.spans, ev.cluster
    stages = lay.stage_layers(model.num_layers)
    zero = tuple(0.0 for _ in stages)
    cp_f = ep_f = nv_f = nic_f = zero
    full = tr.recompute == "full"
    if lay.cp > 1:
        ring = cp_layer(
            model, cl, spans["cp"], seq_len=tr.seq_len, micro_batch=lay.micro_batch, tp=lay.tp,
            attention_s=0.0, eff=tr.efficiency,
        )  # fmt: skip
        cp_f = tuple((lay.cp - 1) * ring.hop_bytes * n for n in stages)
    if lay.ep > 1 and getattr(model, "num_experts", 0):
        tokens = lay.micro_batch * tr.seq_len // lay.cp / lay.tp
        a2a = ep_layer(
            cl, spans["ep"], tokens=tokens, top_k=model.top_k, hidden=model.hidden_size,
            eff=tr.efficiency, full_recompute=full,
        )  # fmt: skip
        moe = [_moe_layers(model, r, n) for r, n in enumerate(stages)]
        nv_f = tuple(2 * a2a.nvlink_bytes * m for m in moe)  # dispatch + combine
        nic_f = tuple(2 * a2a.nic_bytes * m for m in moe)
        ep_f = tuple(a + b for a, b in zip(nv_f, nic_f))
    k = 2 if full else 1  # full recompute repeats the forward's all-to-alls in the backward
    return CpEpBytes(
        cp_forward=cp_f,
        cp_backward=tuple(2 * x for x in cp_f),
        ep_forward=ep_f,
        ep_backward=tuple(k * x for x in ep_f),
        ep_nvlink_forward=nv_f,
        ep_nic_forward=nic_f,
    )


def ring_pairs(members: list[int], whole: bool) -> list[tuple[int, int]]:
    """Rank i sends to rank i + 1 (mod n) around a whole ring; the drawn part's links otherwise."""
    if len(members) < 2:
        return []
    if whole:
        return list(zip(members, members[1:] + members[:1]))
    return list(zip(members, members[1:]))


def pair_links(kind: str, placement, shown: set[int]) -> tuple[tuple[int, int], ...]:
    """(sender, receiver) pairs between drawn GPUs: CP ring neighbours, or every EP pair."""
    d = placement.dims
    if getattr(d, "cp" if kind == "cp_ring" else "ep", 1) == 1:
        return ()
    out = []
    if kind == "cp_ring":
        for g in d.groups("cp").tolist():
            members = [r for r in g if r in shown]
            out += ring_pairs(members, len(members) == len(g))
        return tuple(out)
    for g in d.groups("ep").tolist():
        members = [r for r in g if r in shown]
        out += [(a, b) for a in members for b in members if a != b]
    return tuple(out)
