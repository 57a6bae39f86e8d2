"""What NCCL's tuner would pick: algorithm (ring, double binary tree) × protocol (LL, LL128,
Simple), each with its own latency and bandwidth, the cheapest one chosen per message and scale.

Constants and formulas follow NCCL's cost model (NVIDIA/nccl src/graph/tuning.cc,
ncclTopoTuneModel and ncclTopoGetAlgoTime, v2.2x; the values are listed in docs/notes/collectives.md
§6). time = latency + bytes / algbw, the latency a per-call constant, algbw = bus bandwidth ×
the protocol's factor × the algorithm's bus-to-algorithm ratio (ring n/(2(n−1)), tree 1/2).

What the model takes from the cluster instead of NCCL's topology search: the bus bandwidth of a
ring/Simple all-reduce is the slowest tier (NVLink per GPU, or the node's NICs) at the app's
achievable efficiency (core.training.Efficiency, measured ring/Simple busbw); NCCL's per-channel
caps are left out (channel counts are not modelled). NVLS (NVLink SHARP) and CollNet (in-network
reduction) are not modelled: they need NVSwitch multicast or SHARP switches; see the note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.checks import check_choice
from core.collectives.busbw import check_positive
from core.collectives.nccl_constants import (
    ASSUMED_CHANNELS,
    BASE_LATENCY_S,
    GENERATION,
    HOP_LATENCY_S,
    LL_MAX_MULTI_NODE_BYTES_PER_S,
    LL_MAX_ONE_NODE_BYTES_PER_S,
    NET_OVERHEAD_S,
    RING_PLATEAU,
    TREE_CORRECTION,
)
from core.hardware import Cluster
from core.training import Efficiency

OPS = ("all_reduce", "reduce_scatter", "all_gather")
ALGORITHMS_BY_OP = {
    "all_reduce": ("ring", "tree"),
    "reduce_scatter": ("ring",),
    "all_gather": ("ring",),
}
PROTOCOLS = ("LL", "LL128", "Simple")
ALGORITHM_LABELS = {"ring": "Ring", "tree": "Tree (double binary)"}


@dataclass(frozen=True, kw_only=True)
class Option:
    """One algorithm/protocol pair priced for one message."""

    algorithm: str
    protocol: str
    latency_s: float
    algbw_bytes_per_s: float
    time_s: float

    @property
    def label(self) -> str:
        return f"{ALGORITHM_LABELS[self.algorithm]} / {self.protocol}"

    @property
    def bandwidth_s(self) -> float:
        return self.time_s - self.latency_s


@dataclass(frozen=True, kw_only=True)
class Choice:
    """The tuner's pick (the cheapest enabled option) and every option it compared."""

    op: str
    message_bytes: float
    num_ranks: int
    num_nodes: int
    chosen: Option
    options: tuple[Option, ...]

    @property
    def time_s(self) -> float:
        return self.chosen.time_s

    @property
    def label(self) -> str:
        return self.chosen.label

    def option(self, algorithm: str, protocol: str) -> Option:
        """The option of one algorithm/protocol pair (e.g. to force NCCL_ALGO=Ring)."""
        for o in self.options:
            if (o.algorithm, o.protocol) == (algorithm, protocol):
                return o
        raise ValueError(
            f"{algorithm}/{protocol} is not available for {self.op} here (LL128 needs NVLink "
            f"inside the node; tree is all-reduce only); available: "
            + ", ".join(f"{o.algorithm}/{o.protocol}" for o in self.options)
        )


def hop_kind(cluster: Cluster) -> str:
    """NCCL's intra-node hardware class: 'nvlink' (NVLink, xGMI) or 'pci'."""
    return "pci" if cluster.intra_link.name.startswith("PCIe") else "nvlink"


def bus_bandwidths_bytes_per_s(cluster: Cluster, efficiency: Efficiency) -> dict[str, float]:
    """Ring and tree bus bandwidth: the slowest tier at the achievable efficiency.

    Ring: min(NVLink per GPU, the node's NICs). A double binary tree on exactly 2 nodes sends half
    as much over the network as a ring (NVIDIA/nccl issue #946), so its network cap doubles there.
    """
    intra = cluster.intra_link.bandwidth_bytes_per_s * efficiency.intra_link
    if cluster.num_nodes == 1:
        return {"ring": intra, "tree": intra}
    net = cluster.node_injection_bytes_per_s * efficiency.inter_link
    tree_net = 2 * net if cluster.num_nodes == 2 else net
    return {"ring": min(intra, net), "tree": min(intra, tree_net)}


def _ll_cap(cluster: Cluster) -> float:
    if cluster.num_nodes == 1:
        return LL_MAX_ONE_NODE_BYTES_PER_S[GENERATION.get(cluster.gpu.name, "hopper")]
    return LL_MAX_MULTI_NODE_BYTES_PER_S[min(cluster.num_nodes, 3)]


def _algbw(algo: str, proto: str, op: str, bus: float, cluster: Cluster) -> float:
    p, m = cluster.num_gpus, cluster.num_nodes
    if algo == "ring":
        bw = {"LL": min(_ll_cap(cluster), bus * 0.5), "LL128": bus * 0.92, "Simple": bus}[proto]
        steps = 2 * (p - 1) if op == "all_reduce" else p - 1
        return bw * p / steps
    base = bus * 0.92
    bw = {
        "LL": min(base / 3.8, _ll_cap(cluster)),
        "LL128": base * (7 / 9 if m == 1 else 120 / 128),
        "Simple": base,
    }[proto]
    return bw * 0.5


def _latency_s(algo: str, proto: str, op: str, message_bytes: float, cluster: Cluster) -> float:
    p, m, g = cluster.num_gpus, cluster.num_nodes, cluster.gpus_per_node
    hop = HOP_LATENCY_S[hop_kind(cluster)][algo, proto]
    # With one GPU per node every step is a network step: NCCL then uses the tree's NET latency.
    net = HOP_LATENCY_S["net"]["tree" if g == 1 else algo, proto]
    base = BASE_LATENCY_S[algo, proto]
    if algo == "tree":
        return base + 2 * ((g - 1) * hop + int(math.log2(m)) * net)
    steps = 2 * (p - 1) if op == "all_reduce" else p - 1
    inter = 0 if m == 1 else (2 * (m - 1) if op == "all_reduce" else m - 1)
    if m > 1:
        hop = max(hop, NET_OVERHEAD_S * (3 if proto == "Simple" else 1))
    lat = base + (steps - inter) * hop + inter * net
    plateau = message_bytes / (ASSUMED_CHANNELS * p) >= 64
    if m > 1 and op == "all_reduce" and proto == "Simple" and plateau:
        lat *= RING_PLATEAU
    return lat


def _tree_correction(proto: str, message_bytes: float) -> float:
    k = int(message_bytes) >> 6
    log_size = k.bit_length() - 1 if k > 0 else -1
    factors = TREE_CORRECTION[proto]
    return factors[log_size] if 0 <= log_size < len(factors) else 1.0


def protocols_enabled(cluster: Cluster) -> tuple[str, ...]:
    """LL, Simple always; LL128 only with NVLink in the node: NVIDIA/nccl src/graph/tuning.cc
    enables it by default only up to NVLink/NVSwitch paths on NVIDIA GPUs."""
    nvidia_nvlink = cluster.intra_link.name.startswith("NVLink")
    return PROTOCOLS if nvidia_nvlink else ("LL", "Simple")


def nccl_options(
    op: str,
    message_bytes: float,
    cluster: Cluster,
    *,
    efficiency: Efficiency | None = None,
    algorithms: tuple[str, ...] | None = None,
    protocols: tuple[str, ...] | None = None,
) -> tuple[Option, ...]:
    """Every enabled algorithm/protocol for one collective over every GPU of `cluster`.

    message_bytes: all-reduce, each rank's buffer; reduce-scatter / all-gather, the whole vector
    (the nccl-tests convention, and NCCL's own nBytes for these). algorithms / protocols restrict
    the search as NCCL_ALGO / NCCL_PROTO do.
    """
    op = check_choice("op", op, OPS)
    n = check_positive(message_bytes, "message_bytes", "26214400 (25 MiB)")
    if cluster.num_gpus == 1:
        return (
            Option(
                algorithm="ring",
                protocol="Simple",
                latency_s=0.0,
                algbw_bytes_per_s=math.inf,
                time_s=0.0,
            ),
        )
    eff = Efficiency() if efficiency is None else efficiency
    bus = bus_bandwidths_bytes_per_s(cluster, eff)
    algos = ALGORITHMS_BY_OP[op] if algorithms is None else tuple(algorithms)
    enabled = protocols_enabled(cluster)
    protos = enabled if protocols is None else tuple(protocols)
    out = []
    for a in algos:
        if a not in ALGORITHMS_BY_OP[op]:
            continue
        for pr in protos:
            if pr not in enabled:
                continue
            bw = _algbw(a, pr, op, bus[a], cluster)
            if a == "tree":
                bw *= _tree_correction(pr, n)
            lat = _latency_s(a, pr, op, n, cluster)
            out.append(
                Option(
                    algorithm=a,
                    protocol=pr,
                    latency_s=lat,
                    algbw_bytes_per_s=bw,
                    time_s=lat + n / bw,
                )
            )
    if not out:
        raise ValueError(
            f"no NCCL algorithm/protocol left for {op} with algorithms={algos}, protocols="
            f"{protos}: {op} runs on {ALGORITHMS_BY_OP[op]} with {enabled} "
            "here; widen the choice"
        )
    return tuple(out)


def nccl_choice(
    op: str,
    message_bytes: float,
    cluster: Cluster,
    *,
    efficiency: Efficiency | None = None,
    algorithms: tuple[str, ...] | None = None,
    protocols: tuple[str, ...] | None = None,
) -> Choice:
    """The option NCCL's tuner picks for one collective: the one with the least modelled time."""
    options = nccl_options(
        op,
        message_bytes,
        cluster,
        efficiency=efficiency,
        algorithms=algorithms,
        protocols=protocols,
    )
    return Choice(
        op=op,
        message_bytes=float(message_bytes),
        num_ranks=cluster.num_gpus,
        num_nodes=cluster.num_nodes,
        chosen=min(options, key=lambda o: o.time_s),
        options=options,
    )


def nccl_time_s(
    op: str, message_bytes: float, cluster: Cluster, *, efficiency: Efficiency | None = None
) -> float:
    """Time of the tuner's pick (0 on one GPU)."""
    return nccl_choice(op, message_bytes, cluster, efficiency=efficiency).time_s
