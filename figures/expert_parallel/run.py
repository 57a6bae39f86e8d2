"""The expert-parallel page's computations, one cached call per section (plain values in/out)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import expert_parallel as ep
from core.collectives import two_tier_all_to_all
from core.hardware import gpu as gpu_spec
from core.hardware import make_cluster
from figures.expert_parallel.curves import balance_figure, fit_figure, placement_figure
from figures.expert_parallel.layer import expert_load_figure, traffic_matrix_figure

# DeepSeek-V3's routed layer for the placement section (arXiv:2412.19437 §2.1.2, §3.2.2, §4.2):
# 256 experts on 8 nodes of 8 GPUs, top-8, 4,096 tokens per GPU, hidden 7,168, FP8 dispatch.
DSV3 = dict(experts=256, nodes=8, k=8, tokens_per_gpu=4096, hidden=7168, bytes_per_element=1)


@dataclass(frozen=True, kw_only=True)
class LayerView:
    """What the page shows of a MoeLayerResult: small, so a cache hit unpickles little."""

    tokens: int
    top_k: int
    capacity: int | None
    dropped: int
    slowdown: float
    max_abs_error: float
    traffic_rows: np.ndarray  # [EP, EP]
    routed: np.ndarray  # [E] pairs routed to each expert
    processed: np.ndarray  # [E] pairs computed within capacity


def layer(tokens: int, experts: int, k: int, ranks: int, cf: float | None, skew: float) -> dict:
    r = ep.moe_layer(
        tokens=tokens, experts=experts, top_k=k, ep=ranks, capacity_factor=cf, skew=skew
    )
    view = LayerView(
        tokens=r.tokens,
        top_k=r.top_k,
        capacity=r.capacity,
        dropped=r.dropped,
        slowdown=r.slowdown,
        max_abs_error=r.max_abs_error,
        traffic_rows=r.traffic_rows,
        routed=r.routed,
        processed=r.processed,
    )
    return dict(result=view, matrix=traffic_matrix_figure(r), load=expert_load_figure(r))


LAYER_TOKENS = 1024  # tokens in the page's real-data layer
BALANCE = dict(tokens=2048, steps=40, gamma=0.01, skew=1.0)  # the balancing run: skewed router


def balancing(experts: int, k: int) -> dict:
    run = ep.bias_balancing(experts=experts, top_k=k, **BALANCE)
    return dict(run=run, fig=balance_figure(run))


def placement(limit: int) -> dict:
    d = DSV3
    free = ep.node_traffic(tokens=4096, experts=d["experts"], top_k=d["k"], nodes=d["nodes"])
    lim = ep.node_traffic(
        tokens=4096, experts=d["experts"], top_k=d["k"], nodes=d["nodes"], node_limit=limit
    )
    rows = [
        dict(label="a copy per remote expert", copies=free.remote_experts_per_token),
        dict(label="a copy per remote node", copies=free.remote_nodes_per_token),
        dict(label=f"per node, at most {limit} nodes", copies=lim.remote_nodes_per_token),
    ]
    kw = dict(tokens_per_gpu=d["tokens_per_gpu"], hidden=d["hidden"], bytes_per_element=1)
    buffer = d["tokens_per_gpu"] * d["k"] * d["hidden"] * d["bytes_per_element"]
    inside = two_tier_all_to_all(buffer, make_cluster(num_nodes=1, gpus_per_node=8))
    across = two_tier_all_to_all(buffer, make_cluster(num_nodes=d["nodes"], gpus_per_node=8))
    return dict(
        free=free,
        limited=lim,
        nic_free=ep.nic_bytes_per_gpu(free, **kw),
        nic_limited=ep.nic_bytes_per_gpu(lim, **kw),
        buffer=buffer,
        inside=inside,
        across=across,
        fig=placement_figure(rows, nodes=d["nodes"], experts=d["experts"], k=d["k"]),
    )


def model_memory(
    name: str, ranks: int, pp: int, dp: int, units: str, gpu: str, *, etp: int = 1
) -> dict:
    """Counts, FLOPs and model states per GPU: dense part over DP (TP = 1 here), experts over
    EP × ETP with EDP = DP / (EP × ETP) replicas."""
    cfg = ep.moe_preset(name)
    mem = ep.ep_memory(cfg, ep=ranks, etp=etp, pp=pp, dp=dp)
    g = gpu_spec(gpu)
    return dict(
        cfg=cfg,
        counts=ep.counts(cfg),
        mem=mem,
        flops=ep.flops_per_token(cfg),
        fig=fit_figure(
            mem, hbm_bytes=g.hbm_bytes, units=units, label=f"EP={ranks} ETP={etp} PP={pp}"
        ),
    )
