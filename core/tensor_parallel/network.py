"""TP communication time per layer on real links: each collective priced as NCCL's tuner runs
it (core.collectives.nccl_choice) at the app's one set of achievable efficiencies
(core.training.Efficiency, the planner's), per link type and per TP degree across the node
boundary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.collectives import nccl_choice, nccl_cluster
from core.data_parallel import AllReduceKind, all_reduce_s, cluster_for
from core.hardware import Cluster, GpuSpec, LinkSpec, link
from core.model import ModelSpec
from core.tensor_parallel.comm import TpCommPlan, layer_compute_s, tp_comm_plan
from core.training import Efficiency

LINKS_COMPARED = ("NVLink 4", "PCIe 5 x16", "InfiniBand NDR")
TP_DEGREES = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True, kw_only=True)
class LayerComm:
    """One layer's TP collectives on one group: total time, its latency part, what NCCL ran."""

    time_s: float
    latency_s: float
    algorithms: str  # e.g. "Ring / Simple"


def layer_comm(plan: TpCommPlan, group: Cluster, efficiency: Efficiency | None = None) -> LayerComm:
    """Every collective of one layer per micro-batch (plan.forward + plan.backward) on `group`.

    Message sizes follow NCCL's own convention: all-reduce, each rank's buffer M = b·s·h·2 B;
    reduce-scatter / all-gather, the whole vector, the same M.
    """
    if plan.tp == 1:
        return LayerComm(time_s=0.0, latency_s=0.0, algorithms="none (TP = 1)")
    total = latency = 0.0
    ran: dict[str, None] = {}
    for counts in (plan.forward, plan.backward):
        for kind, n in counts.items():
            o = nccl_choice(kind, plan.message_bytes, group, efficiency=efficiency).chosen
            total, latency = total + n * o.time_s, latency + n * o.latency_s
            ran[o.label] = None
    return LayerComm(time_s=total, latency_s=latency, algorithms="; ".join(ran))


@dataclass(frozen=True, kw_only=True)
class LinkTime:
    """TP communication of one layer on one link type, beside the layer's compute."""

    link: LinkSpec
    comm_s: float
    compute_s: float
    latency_s: float = 0.0
    algorithms: str = ""
    efficiency: float = 1.0  # the achievable share of the link's bandwidth applied

    @property
    def comm_to_compute(self) -> float:
        return self.comm_s / self.compute_s


def link_comparison(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    tp: int,
    micro_batch: int,
    seq_len: int,
    mfu: float = 0.5,
    links: tuple[str, ...] = LINKS_COMPARED,
    sequence_parallel: bool = False,
    full_recompute: bool = False,
    efficiency: Efficiency | None = None,
) -> tuple[LinkTime, ...]:
    """Per-layer TP comm time if the TP group ran over each link type: a scale-up link (NVLink,
    PCIe) as one node of t GPUs; a network link as t nodes of one GPU, one NIC each."""
    eff = Efficiency() if efficiency is None else efficiency
    plan = tp_comm_plan(
        model,
        tp=tp,
        micro_batch=micro_batch,
        seq_len=seq_len,
        sequence_parallel=sequence_parallel,
        full_recompute=full_recompute,
    )
    compute = layer_compute_s(
        model,
        gpu,
        tp=tp,
        micro_batch=micro_batch,
        seq_len=seq_len,
        mfu=mfu,
        full_recompute=full_recompute,
    )
    out = []
    for name in links:
        group = nccl_cluster(tp, name, gpu_name=gpu.name)
        c = layer_comm(plan, group, eff)
        share = eff.inter_link if group.num_nodes > 1 else eff.intra_link
        out.append(
            LinkTime(
                link=link(name),
                compute_s=compute,
                comm_s=c.time_s,
                latency_s=c.latency_s,
                algorithms=c.algorithms,
                efficiency=share,
            )
        )
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class TpPoint:
    """One TP degree on a cluster: valid or why not, which link, comm vs compute per layer."""

    tp: int
    valid: bool
    reason: str  # "" when valid
    crosses_node: bool
    link_label: str
    comm_s: float  # NaN when invalid
    compute_s: float
    latency_s: float = math.nan  # the per-call latency part of comm_s
    algorithms: str = ""

    @property
    def comm_to_compute(self) -> float:
        return self.comm_s / self.compute_s if self.valid else math.nan


def _check_degree(t: int, cluster: Cluster) -> None:
    g = cluster.gpus_per_node
    if t > cluster.num_gpus:
        raise ValueError(
            f"TP={t} needs {t} GPUs but the cluster has {cluster.num_gpus}: a TP group cannot "
            f"exceed the cluster; add nodes or use TP ≤ {cluster.num_gpus}"
        )
    if t > g and t % g:
        raise ValueError(
            f"TP={t} spans a partial node of {g} GPUs: a TP group must fill whole nodes once it "
            f"leaves one; use a multiple of {g}"
        )


def tp_sweep(
    model: ModelSpec,
    cluster: Cluster,
    *,
    micro_batch: int,
    seq_len: int,
    mfu: float = 0.5,
    degrees: tuple[int, ...] = TP_DEGREES,
    all_reduce: AllReduceKind = AllReduceKind.NCCL,
    efficiency: Efficiency | None = None,
) -> tuple[TpPoint, ...]:
    """Per-layer comm and compute for each TP degree; a group larger than a node rides the NICs
    (all of the node's NICs: a TP group that fills its nodes owns them)."""
    g, out = cluster.gpus_per_node, []
    for t in degrees:
        try:
            plan = tp_comm_plan(model, tp=t, micro_batch=micro_batch, seq_len=seq_len)
            _check_degree(t, cluster)
        except ValueError as err:
            out.append(
                TpPoint(
                    tp=t,
                    valid=False,
                    reason=str(err),
                    crosses_node=t > g,
                    link_label="",
                    comm_s=math.nan,
                    compute_s=math.nan,
                )
            )
            continue
        group = cluster_for(cluster, t)
        if AllReduceKind(all_reduce) is AllReduceKind.NCCL:
            c = layer_comm(plan, group, efficiency)
        else:
            n_ar = sum(plan.forward.values()) + sum(plan.backward.values())
            one = all_reduce_s(group, plan.message_bytes, all_reduce)
            bare = all_reduce_s(group, plan.message_bytes, all_reduce, with_latency=False)
            c = LayerComm(time_s=n_ar * one, latency_s=n_ar * (one - bare), algorithms="")
        label = (
            cluster.intra_link.name
            if t <= g
            else f"{cluster.nics_per_node}× {cluster.inter_link.name} per node ({t // g} nodes)"
        )
        out.append(
            TpPoint(
                tp=t,
                valid=True,
                reason="",
                crosses_node=t > g,
                link_label=label,
                comm_s=c.time_s,
                compute_s=layer_compute_s(
                    model, cluster.gpu, tp=t, micro_batch=micro_batch, seq_len=seq_len, mfu=mfu
                ),
                latency_s=c.latency_s,
                algorithms=c.algorithms,
            )
        )
    return tuple(out)
