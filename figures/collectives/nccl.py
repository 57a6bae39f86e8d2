"""The 'what NCCL would pick' readout: the tuner's choice for this tensor, beside the options."""

from __future__ import annotations

from core.collectives import Choice, nccl_choice, nccl_cluster
from core.hardware import Cluster
from core.units import format_bandwidth, format_bytes, format_seconds


def nccl_readout(
    c: Choice, *, byte_system: str = "binary", bandwidth_system: str = "decimal"
) -> str:
    """One markdown paragraph: the pick, its latency and bandwidth, and the runners-up."""
    o = c.chosen
    ranked = sorted(c.options, key=lambda x: x.time_s)
    others = ", ".join(f"{x.label} {format_seconds(x.time_s)}" for x in ranked[1:4])
    where = f"{c.num_ranks} GPUs" + (f" on {c.num_nodes} nodes" if c.num_nodes > 1 else "")
    return (
        f"**What NCCL would pick** for S = {format_bytes(c.message_bytes, byte_system)} on "
        f"{where}: "
        f"**{o.label}**, {format_seconds(o.time_s)} = {format_seconds(o.latency_s)} latency + "
        f"bytes at {format_bandwidth(o.algbw_bytes_per_s, bandwidth_system)} algbw. Next: "
        f"{others}. NCCL's own cost model (NVIDIA/nccl src/graph/tuning.cc): its per-hop "
        "latencies per protocol (not the α above), links at the app's achievable efficiency; LL "
        "wins tiny messages, the double binary tree (latency ∝ lg nodes) medium ones across "
        "nodes, ring/Simple large ones."
    )


def nccl_pick_markdown(
    num_ranks: int,
    message_bytes: float,
    link_name: str,
    cluster: Cluster | None,
    byte_system: str = "binary",
    bandwidth_system: str = "decimal",
) -> str:
    """The readout for the collectives page's ranks (its two-tier cluster, or N on one link)."""
    ranks = nccl_cluster(num_ranks, link_name, cluster)
    c = nccl_choice("all_reduce", message_bytes, ranks)
    return nccl_readout(c, byte_system=byte_system, bandwidth_system=bandwidth_system)
