"""The two scenarios beyond the four cuts: train at 128K context (7) and an MoE on two nodes (8).

7 · Llama-3.1 70B at 131,072 tokens on H100s with TP 8 in the node and PP 4: activations per GPU
do not shrink with PP (1F1B's first stage holds PP micro-batches of L/PP layers), so only cutting
the sequence helps; context parallelism C divides them by C (core.memory, the memory page's). The
Llama 3 paper trained its 128K stage with CP 16 (Dubey et al. 2024, arXiv:2407.21783, Table 4: TP
8, CP 16, PP 16, DP 4 on 16,384 H100s for the 405B model).
8 · Mixtral 8x7B on 2 × 8 H100 with DP 16 and EP experts folded in (core.expert_parallel): model
states per GPU vs EP, and the token all-to-all of an EP group inside one node (NVLink only) vs
spread over both (half the peers behind the NICs), priced by core.planner.cp_ep.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.context_parallel import cp_traffic, overlap_threshold_local_tokens, step_times
from core.expert_parallel import counts, ep_memory, moe_preset
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.memory import activation_bytes_per_layer, budget, memory_per_gpu
from core.model import preset
from core.parallel import ZERO_STAGES, GroupSpan, Layout, group_span
from core.planner.cp_ep import EpLayer, ep_layer
from core.scenarios.common import GPU, RESERVE, Link, link
from core.training import Efficiency, Training

CPS = (1, 2, 4, 8, 16, 32)
LLAMA3_128K = dict(tp=8, cp=16, pp=16, dp=4, gpus=16384, seq_len=131072)  # Table 4, 405B
LLAMA3_SOURCE = "Dubey et al. 2024, The Llama 3 Herd of Models, arXiv:2407.21783, Table 4"


@dataclass(frozen=True, kw_only=True)
class CpRow:
    cp: int
    gpus: int  # TP × PP × CP (DP 1)
    activations_bytes: float
    states_bytes: float
    fits: bool


@dataclass(frozen=True, kw_only=True)
class LongContext:
    """7 · 128K tokens: memory per GPU vs CP, and the price of the ring at the chosen CP."""

    model: str
    seq_len: int
    tp: int
    pp: int
    cp: int
    rows: tuple[CpRow, ...]
    capacity_bytes: float
    reserve_bytes: float
    kv_block_bytes: float  # one ring hop, one layer, forward
    ring_bytes: float  # (C − 1) hops
    block_compute_s: float  # one ring step's attention (causal, balanced)
    hop_s: dict[str, float]  # link name -> one hop's transfer
    threshold_tokens: dict[str, float]  # link name -> S/C needed to hide the hop
    cp_link: str  # the link CP traffic takes (TP fills the node, so CP crosses nodes)
    nvlink: str  # the GPU's scale-up link, for comparison
    links: tuple[Link, ...]

    @property
    def row(self) -> CpRow:
        return next(r for r in self.rows if r.cp == self.cp)

    @property
    def smallest_fit(self) -> int | None:
        return next((r.cp for r in self.rows if r.fits), None)

    @property
    def hidden(self) -> bool:
        return self.block_compute_s >= self.hop_s[self.cp_link]


def long_context(
    cp: int = 8, model: str = "Llama-3.1 70B", seq_len: int = 131072, tp: int = 8, pp: int = 4
) -> LongContext:
    """Llama-3.1 70B at 128K with TP 8, PP 4 (micro-batch 1, SP, selective recompute, flash)."""
    if cp not in CPS:
        raise ValueError(f"CP={cp} is not one of {list(CPS)}: pick one of them")
    spec, gpu = preset(model), GPU_PRESETS[GPU]
    cap = gpu.hbm_bytes
    rows = []
    for c in CPS:  # the memory page's numbers: its fullest stage, PP micro-batches in flight
        lay = Layout(dp=1, tp=tp, pp=pp, cp=c, zero_stage=1, sequence_parallel=True)
        tr = Training(global_batch=pp, seq_len=seq_len, recompute="selective")
        m = memory_per_gpu(spec, lay, tr)
        ok = budget(m.total_bytes, cap, RESERVE).fits
        rows.append(
            CpRow(
                cp=c,
                gpus=tp * pp * c,
                activations_bytes=m.activations_bytes,
                states_bytes=m.states_bytes,
                fits=ok,
            )
        )
    tr = cp_traffic(spec, seq_len=seq_len, cp=cp, tp=tp)
    nets = {n: LINK_PRESETS[n] for n in (gpu.scale_up_link, "InfiniBand NDR")}
    steps = {n: step_times(spec, gpu, lk, seq_len=seq_len, cp=cp, tp=tp) for n, lk in nets.items()}
    # TP = 8 fills an 8-GPU node: the C ranks of a CP group sit on C different nodes.
    cp_link = "InfiniBand NDR" if cp > 1 else gpu.scale_up_link
    nodes = -(-tp * pp * cp // 8)
    return LongContext(
        model=model,
        seq_len=seq_len,
        tp=tp,
        pp=pp,
        cp=cp,
        rows=tuple(rows),
        capacity_bytes=cap,
        reserve_bytes=RESERVE * cap,
        kv_block_bytes=tr.kv_block_bytes,
        ring_bytes=tr.ring_bytes,
        block_compute_s=steps[cp_link].compute_s,
        hop_s={n: p.transfer_s for n, p in steps.items()},
        threshold_tokens={
            n: overlap_threshold_local_tokens(spec, gpu, lk) for n, lk in nets.items()
        },
        cp_link=cp_link,
        nvlink=gpu.scale_up_link,
        links=(
            link(
                "context_parallel",
                f"Context parallelism: {model} at {seq_len:,} tokens, TP {tp}, PP {pp}, CP {cp}",
                model=model,
                seq=f"{seq_len // 1024}K",
                tp=tp,
                pp=pp,
                lcp=max(cp, 2),
            ),
            link(
                "memory",
                f"Memory page: {model}, {seq_len:,} tokens, TP {tp} × PP {pp} × CP {cp}",
                model=model,
                seq=seq_len,
                tp=tp,
                pp=pp,
                cp=cp,
                dp=1,
                sp="true",
                rc="selective",
                zero="1",
            ),
            link(
                "planner",
                f"Planner: {model} at {seq_len:,} tokens on {nodes} nodes, CP {cp} drawn",
                model=model,
                seq=seq_len,
                nodes=nodes,
                gb=16,
                rc="selective",
                sp="true",
                pick="custom",
                dp=1,
                tp=tp,
                pp=pp,
                cp=cp,
                ep=1,
                zero=ZERO_STAGES[1].label,
                mb=1,
            ),
        ),
    )


class _Groups:  # fixed group membership for core.parallel.group_span (rows = groups of ranks)
    def __init__(self, rows) -> None:
        self.rows = np.asarray(rows)

    def groups(self, dim: str) -> np.ndarray:
        return self.rows


@dataclass(frozen=True, kw_only=True)
class EpRow:
    ep: int
    states_bytes: float
    fits: bool


@dataclass(frozen=True, kw_only=True)
class MoeTwoNodes:
    """8 · Mixtral 8x7B on 16 H100: states vs EP; the all-to-all inside vs across nodes."""

    model: str
    total_params: int
    active_params: int
    experts: int
    top_k: int
    nodes: int
    gpus_per_node: int
    ep: int
    seq_len: int
    rows: tuple[EpRow, ...]
    activations_bytes: float  # full recompute: the layer inputs, 2 s h bytes per layer
    capacity_bytes: float
    reserve_bytes: float
    moe_layers: int
    inside: EpLayer  # EP group = ep GPUs of one node
    across: EpLayer  # EP group = ep / 2 GPUs on each of the two nodes
    expert_compute_s: float  # one MoE layer's expert GEMMs, forward + backward, one micro-batch
    links: tuple[Link, ...]

    @property
    def row(self) -> EpRow:
        return next(r for r in self.rows if r.ep == self.ep)

    def overhead(self, layer: EpLayer) -> float:
        """All-to-all seconds over expert compute seconds, per MoE layer (forward + backward)."""
        return (layer.forward_s + layer.backward_s) / self.expert_compute_s


EPS = (1, 2, 4, 8)


def moe_two_nodes(ep: int = 8, model: str = "Mixtral 8x7B", seq_len: int = 4096) -> MoeTwoNodes:
    """DP 16 (TP 1, PP 1, ZeRO-1), micro-batch 1, full recompute; EP in {1, 2, 4, 8}."""
    if ep not in EPS:
        raise ValueError(f"EP={ep} is not one of {list(EPS)}: pick one of them")
    cfg, gpu = moe_preset(model), GPU_PRESETS[GPU]
    cluster, cap, dp = make_cluster(num_nodes=2, gpus_per_node=8), gpu.hbm_bytes, 16
    acts = cfg.layers * activation_bytes_per_layer(
        seq_len, 1, cfg.hidden, cfg.heads, recompute="full"
    )
    rows = tuple(
        EpRow(
            ep=e,
            states_bytes=(s := ep_memory(cfg, ep=e, dp=dp).total_bytes),
            fits=budget(s + acts, cap, RESERVE).fits,
        )
        for e in EPS
    )
    half = ep // 2 if ep > 1 else 1
    spans: dict[str, GroupSpan] = {
        "inside": group_span(_Groups(np.arange(16).reshape(-1, ep)), "ep", cluster),
        "across": group_span(
            _Groups([[*range(i, i + half), *range(8 + i, 8 + i + half)] for i in range(0, 8, half)])
            if ep > 1
            else _Groups(np.arange(16).reshape(-1, 1)),
            "ep",
            cluster,
        ),
    }
    eff = Efficiency()
    kw = dict(tokens=seq_len, top_k=cfg.top_k, hidden=cfg.hidden, eff=eff, full_recompute=True)
    layers = {k: ep_layer(cluster, sp, **kw) for k, sp in spans.items()}
    # Expert GEMMs: top-k experts × 3 matrices of h × f, 2 FLOPs per MAC, × 3 for forward +
    # backward, plus the recomputed forward (full recompute): 4 × 2 × 3 h f k per token.
    flops = 4 * 2 * 3 * cfg.hidden * cfg.expert_ffn * cfg.top_k * seq_len
    c = counts(cfg)
    return MoeTwoNodes(
        model=model,
        total_params=c.total,
        active_params=c.active,
        experts=cfg.experts,
        top_k=cfg.top_k,
        nodes=2,
        gpus_per_node=8,
        ep=ep,
        seq_len=seq_len,
        rows=rows,
        activations_bytes=acts,
        capacity_bytes=cap,
        reserve_bytes=RESERVE * cap,
        moe_layers=c.moe_layers,
        inside=layers["inside"],
        across=layers["across"],
        expert_compute_s=flops / (gpu.bf16_flops_per_s * eff.matmul),
        links=(
            link(
                "expert_parallel",
                f"Expert parallelism: {model}, EP {ep}, DP {dp}",
                moe=model,
                mep=ep,
                mdp=dp,
                mpp=1,
                etp=1,
            ),
            link(
                "planner",
                f"Planner: {model} on 2 × 8 H100, EP {ep} drawn",
                model=model,
                nodes=2,
                gb=64,
                rc="full",
                pick="custom",
                dp=dp,
                tp=1,
                pp=1,
                cp=1,
                ep=ep,
                zero=ZERO_STAGES[1].label,
                mb=1,
            ),
        ),
    )
