"""NCCL's tuner constants, as NVIDIA/nccl src/graph/tuning.cc (v2.2x) sets them by default; the
values and what each does are listed in docs/notes/collectives.md §6."""

from __future__ import annotations

_US = 1e-6
# baseLat (µs): Tree {LL, LL128, Simple}, Ring {LL, LL128, Simple}.
BASE_LATENCY_S = {
    ("tree", "LL"): 6.8 * _US,
    ("tree", "LL128"): 14.0 * _US,
    ("tree", "Simple"): 8.4 * _US,
    ("ring", "LL"): 6.6 * _US,
    ("ring", "LL128"): 14.0 * _US,
    ("ring", "Simple"): 8.4 * _US,
}
# hwLat (µs) per hop: [NVLink | PCI | NET][algorithm][protocol].
HOP_LATENCY_S = {
    "nvlink": {
        ("tree", "LL"): 0.6 * _US,
        ("tree", "LL128"): 1.25 * _US,
        ("tree", "Simple"): 4.0 * _US,
        ("ring", "LL"): 0.6 * _US,
        ("ring", "LL128"): 1.9 * _US,
        ("ring", "Simple"): 3.4 * _US,
    },
    "pci": {
        ("tree", "LL"): 1.0 * _US,
        ("tree", "LL128"): 1.9 * _US,
        ("tree", "Simple"): 4.0 * _US,
        ("ring", "LL"): 1.0 * _US,
        ("ring", "LL128"): 2.5 * _US,
        ("ring", "Simple"): 5.7 * _US,
    },
    "net": {
        ("tree", "LL"): 5.0 * _US,
        ("tree", "LL128"): 8.5 * _US,
        ("tree", "Simple"): 14.0 * _US,
        ("ring", "LL"): 2.7 * _US,
        ("ring", "LL128"): 4.0 * _US,
        ("ring", "Simple"): 14.0 * _US,
    },
}
# getNetOverhead: 1 µs per network post on an Intel x86 host (2 on AMD), ×3 for Simple; an
# inter-node ring's intra-node steps cost at least that. Intel assumed.
NET_OVERHEAD_S = 1.0 * _US
# llMaxBws (GB/s): LL's bus-bandwidth ceiling. One node: by GPU generation; 2 and > 2 nodes: by
# host CPU (Intel row assumed).
LL_MAX_ONE_NODE_BYTES_PER_S = {"ampere": 87.7e9, "hopper": 141.0e9, "blackwell": 282.0e9}
LL_MAX_MULTI_NODE_BYTES_PER_S = {2: 39.0e9, 3: 20.4e9}  # key 3 = more than two nodes
GENERATION = {
    "A100 40GB": "ampere",
    "A100 80GB": "ampere",
    "H100 SXM": "hopper",
    "H100 PCIe": "hopper",
    "H200": "hopper",
    "B200": "blackwell",
    "GB200": "blackwell",
}
# treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B .. 256 MiB: the tree misses its model at
# medium sizes.
TREE_CORRECTION = {
    "LL": (1, 1, 1, 1, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    + (1, 1, 1, 1),
    "LL128": (1, 1, 1, 1, 1, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9)
    + (0.9, 0.9, 0.9, 1, 1),
    "Simple": (0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6)
    + (0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9),
}
RING_PLATEAU = 1.4  # multi-node ring/Simple all-reduce latency ×1.4 (compute capability ≥ 8.0)
ASSUMED_CHANNELS = 16  # only for the plateau's size test (bytes per channel per rank ≥ 64)
