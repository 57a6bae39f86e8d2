"""The expert-parallel page's guided walk: five steps that set its controls (widget keys, select
labels as in the URL) and say one true thing each, every number computed with the core for the
values that step sets (app_pages/common/walk.py plays it)."""

from __future__ import annotations

from core import expert_parallel as ep
from core.units import format_bytes, format_count, format_seconds
from figures.expert_parallel.run import BALANCE, LAYER_TOKENS, placement
from figures.walks.step import WalkStep, steps

BASE = dict(
    skew=0.5,
    k=2,
    e="64",
    ep="8",
    cf="dropless",
    m=4,
    moe="Mixtral 8x7B",
    gpu="H100 SXM",
    mep="8",
    etp="1",
    mpp=2,
    mdp="8",
)


def walk(units: str = "decimal") -> tuple[WalkStep, ...]:
    calm = ep.moe_layer(tokens=LAYER_TOKENS, experts=64, top_k=2, ep=8, skew=0.5)
    rows = calm.traffic_rows
    hot = ep.moe_layer(tokens=LAYER_TOKENS, experts=64, top_k=2, ep=8, skew=1.0)
    capped = ep.moe_layer(
        tokens=LAYER_TOKENS, experts=64, top_k=2, ep=8, skew=1.0, capacity_factor=1.0
    )
    bal = ep.bias_balancing(experts=64, top_k=2, **BALANCE)
    pl = placement(4)
    mix = ep.moe_preset("Mixtral 8x7B")
    n = ep.counts(mix)
    mem = {pp: ep.ep_memory(mix, ep=8, pp=pp, dp=8).total_bytes for pp in (1, 2)}

    def b(x: float) -> str:
        return format_bytes(x, units)

    return steps(
        BASE,
        (
            f"{LAYER_TOKENS:,} tokens pick 2 of 64 experts; the dispatch all-to-all sends each "
            "(token, expert) row to the rank owning the expert: "
            f"{1 - rows.trace() / rows.sum():.0%} of the rows leave their rank. The combine "
            "brings them back, and the output equals the layer on one device "
            f"({calm.max_abs_error:.0e}).",
            {},
        ),
        (
            f"A more skewed router (skew 1.0): the busiest rank computes {hot.slowdown:.2f}× the "
            "mean, and the step waits for it. Capacity factor 1.0 caps each expert at "
            f"{capped.capacity} rows and drops {capped.dropped:,} pairs.",
            {"skew": 1.0, "cf": "1.0"},
        ),
        (
            "DeepSeek-V3's fix, without an auxiliary loss: add a bias to each expert's score only "
            "to choose the top-k, and move it by γ after every step. Busiest ÷ mean falls from "
            f"{bal.plain[-1]:.2f} to {bal.balanced[-5:].mean():.2f} in 40 steps (chart 2).",
            {"skew": 1.0},
        ),
        (
            f"Placement: the same {b(pl['buffer'])} dispatch per GPU takes "
            f"{format_seconds(pl['inside'].time_s)} inside one node and "
            f"{format_seconds(pl['across'].time_s)} across 8 nodes, where the NIC limits it. "
            "At most 4 nodes per token cuts NIC copies from "
            f"{pl['free'].remote_nodes_per_token:.2f} to "
            f"{pl['limited'].remote_nodes_per_token:.2f} per token.",
            {"m": 4},
        ),
        (
            f"Mixtral 8x7B holds {format_count(n.total)} parameters; a token uses "
            f"{format_count(n.active)}. EP 8 shards the experts: with PP 1 the model states need "
            f"{b(mem[1])} per GPU, with PP 2 (set now) {b(mem[2])}.",
            {"mpp": 2},
        ),
    )
