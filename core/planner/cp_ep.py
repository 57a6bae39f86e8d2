"""Context and expert parallelism in the planner: where their groups sit on the nodes, and the
seconds their traffic adds to one layer.

Rank grid (docs/notes/planner.md §2): the layout's order over TP, PP and DP with CP right after
TP, as Megatron-Core's default order "tp-cp-ep-dp-pp" keeps it (`NVIDIA/Megatron-LM
megatron/core/parallel_state.py`, initialize_model_parallel). The data-parallel group of a CP
layout is DP × CP (Megatron's "dp_cp" group: CP ranks hold the same weights and reduce their
gradients together). Experts fold into the same GPUs of a pipeline stage ("parallel folding",
`NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md`): an EP group is EP consecutive
members of a DP × CP group (ETP = TP innermost, as core.memory counts the expert weights),
so TP × EP ≤ GPUs per node keeps the all-to-all on NVLink.

Costs per layer and micro-batch on one GPU:
- CP, ring attention: C − 1 K/V hops forward, each of B_kv = 2 b (S/C) (h_kv/t) d β bytes
  (core.context_parallel.cp_traffic), overlapped with one block of attention (1/C of the rank's
  attention core); exposed = (C − 1) max(0, hop − block). Backward sends K/V and their gradients
  (2 B_kv per hop) behind twice the block compute (arXiv:2310.01889 §3; TransformerEngine's
  AttnFuncWithCPAndKVP2P sends dK/dV around the ring in backward).
- EP: a dispatch and a combine all-to-all forward, the same two backward (Megatron's
  MoEAlltoAllTokenDispatcher), each a uniform all-to-all of the routed tokens' hidden states:
  S = tokens × top-k × h × β per GPU, priced by core.collectives.two_tier_all_to_all on the EP
  group's GPUs (NVLink leg and NIC leg); no overlap with compute (DeepSeek-V3's DualPipe hides it;
  Megatron's default 1F1B does not).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from core.collectives import two_tier_all_to_all
from core.context_parallel import cp_traffic
from core.hardware import Cluster
from core.memory.per_gpu import check_cp_ep
from core.parallel import GroupSpan, Layout, group_span
from core.planner.grid import RankGrid, grid_spans, rank_grid
from core.training import Efficiency

ACT_BYTES = 2  # bf16 activations, K/V blocks and dispatched tokens


_Grid = RankGrid  # the grid moved to core.planner.grid (GridPlacement draws the same one)


def layout_spans(lay: Layout, cluster: Cluster) -> dict[str, GroupSpan]:
    """GroupSpan of each kind of group: tp, cp, pp, ep and dp (the DP × CP gradient group)."""
    cp, ep = getattr(lay, "cp", 1), getattr(lay, "ep", 1)
    if cp == 1 and ep == 1:  # the 3-D grid as before
        spans = {d: group_span(lay.dims, d, cluster) for d in ("dp", "pp", "tp")}
        one = replace(spans["tp"], dim="cp", size=1, crossing_groups=0, nodes_per_group=1)
        return spans | {"cp": one, "ep": replace(one, dim="ep")}
    return grid_spans(rank_grid(lay), cluster)


# Context parallelism pays off only for long sequences: tried from 16K tokens on, while every
# rank keeps ≥ 4K tokens (Llama 3 used CP 16 for 128K, none at 8K: arXiv:2407.21783 §3.3.2).
CP_FROM_SEQ, CP_MIN_TOKENS, CP_MAX = 16384, 4096, 32


def cp_degrees(seq_len: int, num_gpus: int) -> tuple[int, ...]:
    """The CP degrees the search tries by default: 1, and powers of two up to 32 for long
    sequences."""
    out = [1]
    while (c := 2 * out[-1]) <= CP_MAX and seq_len >= CP_FROM_SEQ and seq_len // c >= CP_MIN_TOKENS:
        if num_gpus % c:
            break
        out.append(c)
    return tuple(out)


def ep_degrees(model, dpcp: int, tp: int = 1, gpus_per_node: int = 8) -> tuple[int, ...]:
    """EP degrees the search tries for an MoE model ((1,) for a dense one), among the divisors
    of its experts that divide DP × CP (EP folds into them, ETP = TP): 1, the largest whose
    group stays in a node (TP × EP ≤ GPUs per node), and the next two beyond it. Inside a node
    a larger EP only saves memory (the all-to-all moves (EP − 1)/EP of the same bytes over
    NVLink), so the smaller in-node ones are dominated; across nodes each step doubles the
    NIC traffic's reach, so the search stops two steps out (bounds the search, issue 17)."""
    e = getattr(model, "num_experts", 0)
    ok = [d for d in range(1, e + 1) if e % d == 0 and dpcp % d == 0] if e else [1]
    inside = [d for d in ok if d * tp <= gpus_per_node]
    beyond = [d for d in ok if d * tp > gpus_per_node][:2]
    return tuple(sorted({1, max(inside, default=1), *beyond}))


def cp_ep_problem(model, tp, pp, cp, ep, dp, seq_len: int) -> tuple[str, str] | None:
    """check_5d's rule (core.memory.check_cp_ep): CP divides the sequence, EP the experts."""
    try:
        check_cp_ep(model, Layout(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep), seq_len)
    except ValueError as e:
        return "CP/EP", str(e)
    return None


def _tier(span: GroupSpan, cluster: Cluster, eff: Efficiency) -> tuple[float, float]:
    """(bandwidth, latency) of one hop of a ring over the group: NIC share off-node, NVLink in."""
    if span.nodes_per_group > 1:
        bw = cluster.inter_bandwidth_per_gpu_bytes_per_s * eff.inter_link
        return bw, cluster.inter_link.latency_s
    return cluster.intra_link.bandwidth_bytes_per_s * eff.intra_link, cluster.intra_link.latency_s


@dataclass(frozen=True, kw_only=True)
class CpLayer:
    """One layer's ring attention on one GPU, one micro-batch."""

    hop_bytes: float  # one K/V block (forward)
    hop_s: float
    block_s: float  # attention on one block, forward
    forward_s: float  # exposed
    backward_s: float  # exposed


def cp_layer(
    model,
    cluster: Cluster,
    span: GroupSpan,
    *,
    seq_len: int,
    micro_batch: int,
    tp: int,
    attention_s: float,
    eff: Efficiency,
) -> CpLayer:
    """Exposed ring-attention seconds of one layer; attention_s = the rank's forward attention
    core (QKᵀ and AV over its S/C queries and all S keys)."""
    c = span.size
    if c == 1:
        return CpLayer(hop_bytes=0.0, hop_s=0.0, block_s=attention_s, forward_s=0.0, backward_s=0.0)
    tr = cp_traffic(model, seq_len=seq_len, cp=c, tp=tp, micro_batch=micro_batch)
    bw, lat = _tier(span, cluster, eff)
    hop, block = lat + tr.kv_block_bytes / bw, attention_s / c
    hop_b = lat + 2 * tr.kv_block_bytes / bw  # K/V and their gradients
    return CpLayer(
        hop_bytes=tr.kv_block_bytes,
        hop_s=hop,
        block_s=block,
        forward_s=(c - 1) * max(0.0, hop - block),
        backward_s=(c - 1) * max(0.0, hop_b - 2 * block),
    )


@functools.lru_cache(maxsize=4096)
def _a2a_cluster(size: int, g: int, cluster: Cluster, eff: Efficiency) -> Cluster:
    """The EP group's GPUs as a cluster at the achievable link rates: size / g nodes of g GPUs,
    each GPU keeping its NIC share (every GPU of a real node runs its own group's all-to-all at
    once)."""
    intra, inter = cluster.intra_link, cluster.inter_link
    nic = cluster.inter_bandwidth_per_gpu_bytes_per_s * eff.inter_link
    return replace(
        cluster,
        num_nodes=size // g,
        gpus_per_node=g,
        nics_per_node=g,
        intra_link=replace(
            intra, bandwidth_bytes_per_s=intra.bandwidth_bytes_per_s * eff.intra_link
        ),
        inter_link=replace(inter, bandwidth_bytes_per_s=nic),
    )


@dataclass(frozen=True, kw_only=True)
class EpLayer:
    """One MoE layer's all-to-alls on one GPU, one micro-batch."""

    buffer_bytes: float  # S: the routed copies of this GPU's tokens, own block included
    nvlink_bytes: float  # per all-to-all, to peers in the node
    nic_bytes: float  # per all-to-all, to peers on other nodes
    all_to_all_s: float  # one all-to-all
    forward_s: float  # dispatch + combine
    backward_s: float  # the same two, backward (plus both again with full recompute)


def ep_layer(
    cluster: Cluster,
    span: GroupSpan,
    *,
    tokens: float,
    top_k: int,
    hidden: int,
    eff: Efficiency,
    full_recompute: bool = False,
) -> EpLayer:
    """All-to-all seconds of one MoE layer for `tokens` tokens dispatched by this GPU."""
    s = tokens * top_k * hidden * ACT_BYTES
    if span.size == 1:
        return EpLayer(
            buffer_bytes=s,
            nvlink_bytes=0.0,
            nic_bytes=0.0,
            all_to_all_s=0.0,
            forward_s=0.0,
            backward_s=0.0,
        )
    g = span.size if span.nodes_per_group == 1 else span.ranks_per_node
    a2a = two_tier_all_to_all(s, _a2a_cluster(span.size, g, cluster, eff))
    t = a2a.time_s
    return EpLayer(
        buffer_bytes=s,
        nvlink_bytes=a2a.intra_bytes_per_gpu,
        nic_bytes=a2a.inter_bytes_per_gpu,
        all_to_all_s=t,
        forward_s=2 * t,
        backward_s=(4 if full_recompute else 2) * t,
    )
