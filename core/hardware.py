"""GPU and interconnect presets, and a validated Cluster value (nodes x GPUs per node)."""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import check_choice, whole_number


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """One accelerator: dense BF16 throughput, HBM size and bandwidth, its scale-up link."""

    name: str
    bf16_flops_per_s: float  # dense (NVIDIA tables print 2:4-sparse = 2x dense)
    hbm_bytes: float
    hbm_bandwidth_bytes_per_s: float
    scale_up_link: str  # key into LINK_PRESETS
    source: str


@dataclass(frozen=True, kw_only=True)
class LinkSpec:
    """One link type: bandwidth per direction (full duplex) and a per-message latency."""

    name: str
    bandwidth_bytes_per_s: float  # per direction, per GPU port (NVLink) or per NIC
    latency_s: float  # per-message alpha; a fitted constant, not a wire RTT
    source: str


# Bandwidths per direction; NVIDIA's "NVLink GB/s" figures are bidirectional totals
# (jax-ml/scaling-book gpus.md; NVIDIA A100 and H100 datasheets).
# Latencies: NCCL's default per-step hwLat for the Simple protocol (NVIDIA/nccl
# src/graph/tuning.cc):
# NVLink ring 3.4 us, PCI 5.7 us, NET 14 us; used as alpha-slider defaults only.
LINK_PRESETS: dict[str, LinkSpec] = {
    link.name: link
    for link in [
        LinkSpec(
            name="NVLink 3",
            bandwidth_bytes_per_s=300e9,
            latency_s=3.4e-6,
            source="A100: 12 links x 25 GB/s/dir = 300 GB/s/dir (600 bidir); NVIDIA A100 datasheet",
        ),
        LinkSpec(
            name="NVLink 4",
            bandwidth_bytes_per_s=450e9,
            latency_s=3.4e-6,
            source="H100/H200: 18 links x 25 GB/s/dir = 450 GB/s/dir (900 bidir); H100 datasheet",
        ),
        LinkSpec(
            name="NVLink 5",
            bandwidth_bytes_per_s=900e9,
            latency_s=3.4e-6,
            source="B200/GB200: 18 links x 50 GB/s/dir = 900 GB/s/dir (1,800 bidir)",
        ),
        LinkSpec(
            name="Infinity Fabric",
            bandwidth_bytes_per_s=448e9,
            latency_s=3.4e-6,
            source="MI300X: 7 xGMI links x 64 GB/s/dir = 448 GB/s/dir; AMD ROCm blog 2025-03-02",
        ),
        LinkSpec(
            name="PCIe 4 x16",
            bandwidth_bytes_per_s=32e9,
            latency_s=5.7e-6,
            source="PCIe Gen4 x16: 64 GB/s bidir ~ 32 GB/s/dir",
        ),
        LinkSpec(
            name="PCIe 5 x16",
            bandwidth_bytes_per_s=64e9,
            latency_s=5.7e-6,
            source="PCIe Gen5 x16: 128 GB/s bidir ~ 64 GB/s/dir",
        ),
        LinkSpec(
            name="InfiniBand HDR",
            bandwidth_bytes_per_s=25e9,
            latency_s=14e-6,
            source="HDR 200 Gb/s per direction = 25 GB/s",
        ),
        LinkSpec(
            name="InfiniBand NDR",
            bandwidth_bytes_per_s=50e9,
            latency_s=14e-6,
            source="NDR 400 Gb/s per direction = 50 GB/s",
        ),
        LinkSpec(
            name="InfiniBand XDR",
            bandwidth_bytes_per_s=100e9,
            latency_s=14e-6,
            source="XDR 800 Gb/s per direction = 100 GB/s (ConnectX-8)",
        ),
        LinkSpec(
            name="100 GbE",
            bandwidth_bytes_per_s=12.5e9,
            latency_s=14e-6,
            source="100 Gb/s per direction = 12.5 GB/s",
        ),
        LinkSpec(
            name="400 GbE",
            bandwidth_bytes_per_s=50e9,
            latency_s=14e-6,
            source="400 Gb/s per direction = 50 GB/s (RoCE)",
        ),
    ]
}

# Scale-out links: the NICs between nodes, the presets at NCCL's NET latency (14 us; NVLink and
# PCIe sit at 3.4 and 5.7 us, NVIDIA/nccl src/graph/tuning.cc).
SCALE_OUT_LINKS: tuple[str, ...] = tuple(n for n, s in LINK_PRESETS.items() if s.latency_s >= 1e-5)

# Dense BF16 = half the sparse figure NVIDIA prints (H100 datasheet footnote).
# HBM: what the device reports, not the datasheet's round decimal figure. An "80 GB" H100 shows
# 81,559 MiB in nvidia-smi (85.5e9 B = 79.6 GiB), an A100 80GB 81,920 MiB, an A100 40GB 40,960 MiB
# (NVIDIA/nccl issue #1264; modal-labs/modal-client pull request #2797, which lists the totals
# nvidia-smi reports across a cloud's GPU types). H200 143,771 MiB, B200 183,359 MiB, GB200
# 189,471 MiB: nvidia-smi printouts of those cards; MI300X: rocm-smi's "VRAM Total Memory (B):
# 205822885888" = 196,288 MiB. docs/notes/memory.md §5 lists them with the GiB and GB values.
MIB = 2**20
GPU_PRESETS: dict[str, GpuSpec] = {
    g.name: g
    for g in [
        GpuSpec(
            name="A100 40GB",
            bf16_flops_per_s=312e12,
            hbm_bytes=40_960 * MIB,
            hbm_bandwidth_bytes_per_s=1555e9,
            scale_up_link="NVLink 3",
            source="NVIDIA A100 datasheet: 312 TFLOP/s dense BF16, 40 GB HBM2, 1,555 GB/s",
        ),
        GpuSpec(
            name="A100 80GB",
            bf16_flops_per_s=312e12,
            hbm_bytes=81_920 * MIB,
            hbm_bandwidth_bytes_per_s=2039e9,
            scale_up_link="NVLink 3",
            source="NVIDIA A100 datasheet: 312 TFLOP/s dense BF16, 80 GB HBM2e, 2,039 GB/s",
        ),
        GpuSpec(
            name="H100 SXM",
            bf16_flops_per_s=989.4e12,
            hbm_bytes=81_559 * MIB,
            hbm_bandwidth_bytes_per_s=3.35e12,
            scale_up_link="NVLink 4",
            source="NVIDIA H100 datasheet: 1,979 sparse = 989.4 dense TFLOP/s, 80 GB HBM3, 3.35 "
            "TB/s",
        ),
        GpuSpec(
            name="H100 PCIe",
            bf16_flops_per_s=756e12,
            hbm_bytes=81_559 * MIB,
            hbm_bandwidth_bytes_per_s=2.0e12,
            scale_up_link="PCIe 5 x16",
            source="NVIDIA H100 datasheet: 1,513 sparse = 756 dense TFLOP/s, 80 GB HBM2e, 2.0 TB/s",
        ),
        GpuSpec(
            name="H200",
            bf16_flops_per_s=989.4e12,
            hbm_bytes=143_771 * MIB,
            hbm_bandwidth_bytes_per_s=4.8e12,
            scale_up_link="NVLink 4",
            source="NVIDIA H200 spec: 989.4 dense TFLOP/s, 141 GB HBM3e, 4.8 TB/s",
        ),
        GpuSpec(
            name="B200",
            bf16_flops_per_s=2250e12,
            hbm_bytes=183_359 * MIB,
            hbm_bandwidth_bytes_per_s=8e12,
            scale_up_link="NVLink 5",
            source="HGX B200: 2,250 dense TFLOP/s, 180 GB HBM3e (192 announced), ~8 TB/s",
        ),
        GpuSpec(
            name="GB200",
            bf16_flops_per_s=2500e12,
            hbm_bytes=189_471 * MIB,
            hbm_bandwidth_bytes_per_s=8e12,
            scale_up_link="NVLink 5",
            source="GB200 NVL72: 2,500 dense TFLOP/s, 186 GB HBM3e, ~8 TB/s",
        ),
        GpuSpec(
            name="MI300X",
            bf16_flops_per_s=1307.4e12,
            hbm_bytes=196_288 * MIB,
            hbm_bandwidth_bytes_per_s=5.3e12,
            scale_up_link="Infinity Fabric",
            source="AMD MI300X spec: 1,307.4 dense TFLOP/s, 192 GB HBM3, 5.3 TB/s",
        ),
    ]
}

MAX_GPUS_PER_NODE = 72  # GB200 NVL72 is the largest NVLink domain sold as one unit


def _lookup(table: dict, name: str, what: str):
    return table[check_choice(what, name, table)]


def gpu(name: str) -> GpuSpec:
    """GPU preset by name, with a clear error for unknown names."""
    return _lookup(GPU_PRESETS, name, "GPU")


def link(name: str) -> LinkSpec:
    """Link preset by name, with a clear error for unknown names."""
    return _lookup(LINK_PRESETS, name, "link")


@dataclass(frozen=True, kw_only=True)
class Cluster:
    """num_nodes x gpus_per_node GPUs; intra_link inside a node, inter_link NICs between nodes."""

    num_nodes: int
    gpus_per_node: int
    gpu: GpuSpec
    intra_link: LinkSpec
    inter_link: LinkSpec
    nics_per_node: int

    def __post_init__(self) -> None:
        for field in ("num_nodes", "gpus_per_node", "nics_per_node"):  # ints even from 8.0
            object.__setattr__(self, field, whole_number(field, getattr(self, field)))
        if self.gpus_per_node > MAX_GPUS_PER_NODE:
            raise ValueError(
                f"gpus_per_node={self.gpus_per_node} exceeds {MAX_GPUS_PER_NODE}, the "
                f"largest NVLink domain sold; use ≤ {MAX_GPUS_PER_NODE}"
            )
        if self.nics_per_node > self.gpus_per_node:
            raise ValueError(
                f"nics_per_node={self.nics_per_node} exceeds gpus_per_node="
                f"{self.gpus_per_node}: at most one NIC per GPU (rail-optimised); "
                f"use nics_per_node ≤ {self.gpus_per_node}"
            )

    @property
    def num_gpus(self) -> int:
        return self.num_nodes * self.gpus_per_node

    @property
    def node_injection_bytes_per_s(self) -> float:
        """Bytes/s one node can send to the network per direction (all its NICs)."""
        return self.nics_per_node * self.inter_link.bandwidth_bytes_per_s

    @property
    def inter_bandwidth_per_gpu_bytes_per_s(self) -> float:
        """Network bandwidth per GPU when every GPU of a node talks off-node at once."""
        return self.node_injection_bytes_per_s / self.gpus_per_node

    def node_of(self, rank: int) -> int:
        """Node index of a global rank (ranks are numbered node-major)."""
        if not 0 <= rank < self.num_gpus:
            raise ValueError(f"rank {rank} is outside 0..{self.num_gpus - 1}")
        return rank // self.gpus_per_node


def make_cluster(
    *,
    num_nodes: int,
    gpus_per_node: int = 8,
    gpu_name: str = "H100 SXM",
    intra_link_name: str | None = None,
    inter_link_name: str = "InfiniBand NDR",
    nics_per_node: int | None = None,
) -> Cluster:
    """Build a Cluster from preset names; defaults give a DGX-style node (one NIC per GPU)."""
    g = gpu(gpu_name)
    return Cluster(
        num_nodes=num_nodes,
        gpus_per_node=gpus_per_node,
        gpu=g,
        intra_link=link(intra_link_name or g.scale_up_link),
        inter_link=link(inter_link_name),
        nics_per_node=gpus_per_node if nics_per_node is None else nics_per_node,
    )
