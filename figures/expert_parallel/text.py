"""The expert-parallel page's words: captions, metric rows, the guided walk, takeaway, "How this
is computed" and self-checks (plain strings; numbers come from core.expert_parallel)."""

from __future__ import annotations

import math

from core import expert_parallel as ep
from core.units import format_bytes, format_count, format_flops, format_seconds

QUESTION = (
    "How does a mixture-of-experts layer send each token to its experts across GPUs, and what "
    "do imbalance, placement and memory cost?"
)
LAYER_CAPTION = (
    "Real numbers: tokens with 8 features and a seeded router (logits = x·W + skew × a fixed "
    "popularity per expert, the imbalance of an untrained router); softmax top-k, weights "
    "renormalised (Mixtral). EP rank j starts with tokens [j·T/R, (j+1)·T/R) and owns experts "
    "[j·E/R, (j+1)·E/R). The dispatch all-to-all sends one row per (token, expert) pair, each "
    "expert (a small SiLU MLP) runs on its rows, the combine all-to-all brings the outputs home."
)
CAPACITY = {"none": "dropless", "1.0": "1.0", "1.25": "1.25", "1.5": "1.5", "2.0": "2.0"}

TAKEAWAY = (
    "An MoE layer is two all-to-alls around a set of small MLPs: every token row travels to the "
    "rank of each chosen expert and back, and the result equals the layer on one device. The "
    "step waits for the busiest rank, so imbalance costs time (or tokens, when a capacity drops "
    "the overflow); a bias nudged after every step evens the load without an auxiliary loss. "
    "Across nodes the NIC carries most of the rows, which is why DeepSeek-V3 limits each token to "
    "4 nodes. EP shards the experts' weights, so total parameters can grow while the FLOPs per "
    "token follow the active ones."
)
# The projected slide's headline (the laptop page keeps the whole lesson above).
TAKEAWAY_SHORT = (
    "An MoE layer is two all-to-alls around small MLPs: "
    "the busiest rank sets the step, the NIC the cross-node cost."
)


def takeaway(presenting: bool) -> str:
    """The page's lesson: whole on a laptop, one line on the presenter slide."""
    return TAKEAWAY_SHORT if presenting else TAKEAWAY


def layer_metrics(lay: dict) -> list[dict]:
    r = lay["result"]
    rows = r.traffic_rows
    return [
        dict(
            label="max |EP − one device|",
            value=f"{r.max_abs_error:.1e}",
            border=True,
            help="Often exactly 0: each expert does the same multiplications on another rank; "
            "only the order in which a token's k weighted outputs are added may differ.",
        ),
        dict(label="rows crossing ranks", value=f"{1 - rows.trace() / max(rows.sum(), 1):.0%}"),
        dict(
            label="dropped pairs",
            value=f"{r.dropped:,}",
            help="None when dropless" if r.capacity is None else f"capacity {r.capacity}",
        ),
        dict(label="busiest rank ÷ mean", value=f"{r.slowdown:.2f}×"),
    ]


def placement_metrics(pl: dict, units: str) -> list[dict]:
    return [
        dict(
            label="dispatch buffer per GPU",
            value=format_bytes(pl["buffer"], units),
            help="4,096 tokens × top-8 × 7,168 × 1 byte (FP8)",
        ),
        dict(label="all-to-all, EP=8 in one node", value=format_seconds(pl["inside"].time_s)),
        dict(label="all-to-all, EP=64 over 8 nodes", value=format_seconds(pl["across"].time_s)),
        dict(
            label=f"NIC bytes per GPU, ≤ {pl['limited'].node_limit} nodes",
            value=format_bytes(pl["nic_limited"], units),
            delta=f"{pl['nic_limited'] / pl['nic_free'] - 1:+.0%} vs unlimited",
            delta_color="inverse",
        ),
    ]


def model_metrics(mm: dict, units: str) -> list[dict]:
    c, m = mm["counts"], mm["mem"]
    return [
        dict(
            label="total parameters",
            value=format_count(c.total),
            help=f"published: {format_count(mm['cfg'].published_total)}",
        ),
        dict(
            label="active per token",
            value=format_count(c.active),
            help=f"published: {format_count(mm['cfg'].published_active)}",
        ),
        dict(
            label="training FLOPs per token",
            value=format_flops(mm["flops"]),
            help="6 × active parameters",
        ),
        dict(label="expert params per GPU", value=format_count(m.expert_params_per_gpu)),
    ]


def how_computed(lay: dict) -> list[tuple[str, str]]:
    r = lay["result"]
    return [
        (
            "markdown",
            "**Router** — top-k of softmax(x·W); combine weights renormalised over "
            "the k chosen. **Capacity** — ⌈T·k/E · CF⌉ rows per expert; later tokens "
            "past it are dropped (they skip the layer through the residual).",
        ),
        (
            "caption",
            f"measured: {r.tokens:,} tokens × top-{r.top_k} = {r.tokens * r.top_k:,} "
            f"pairs, {r.dropped:,} dropped, capacity "
            f"{'none' if r.capacity is None else r.capacity}.",
        ),
        (
            "markdown",
            "**All-to-all** — pairwise exchange, p − 1 steps; time (p − 1)·α + S·(p − "
            "1)/p / B; nccl-tests busbw = S/t·(p − 1)/p. Across nodes the NIC leg "
            "carries S·(p − g)/p at the node's NIC rate shared by its g GPUs.",
        ),
        (
            "markdown",
            "**Parameters** — every tensor of the config summed (attention, router, "
            "E experts × 3·h·f, shared experts, norms, embeddings, head); active = total "
            "− (E − k)·3·h·f per MoE layer. **Memory** — 2 + 2 bytes per parameter, "
            "12 optimizer bytes sharded over DP (dense) and EDP = DP/(EP·ETP) (experts); each "
            "expert's matrices split ETP ways.",
        ),
    ]


def self_checks() -> list[dict]:
    mixtral = ep.counts(ep.moe_preset("Mixtral 8x7B"))
    expect = 8 * (1 - math.comb(256 - 32, 8) / math.comb(256, 8))
    return [
        dict(
            question="Mixtral 8x7B routes each token to 2 of 8 experts. Active parameters per "
            "token, in billions",
            answer=mixtral.active / 1e9,
            key="q1",
            explanation="Total 46.70B minus 32 layers × 6 unused experts × 3 × 4,096 × 14,336.",
        ),
        dict(
            question="Capacity per expert for T = 4,096 tokens, top-2, E = 64 experts and "
            "capacity factor 1.25 (rows)",
            answer=ep.capacity(4096, 64, 2, 1.25),
            key="q2",
            rel_tol=0.0,
            explanation="⌈4,096 × 2 / 64 × 1.25⌉ = 160.",
        ),
        dict(
            question="DeepSeek-V3: 256 experts on 8 nodes, top-8 with no node limit and uniform "
            "routing. Expected nodes a token reaches",
            answer=expect,
            key="q3",
            explanation="8 × (1 − C(224, 8)/C(256, 8)) ≈ 5.29; the node limit caps it at 4.",
        ),
    ]
