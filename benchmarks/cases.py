"""What the benchmark measures: page cases (URL state) with their budgets, and core timings."""

from __future__ import annotations

# (page file, case label, URL params, budgets: rerun p50 ms, slider-to-chart p50 ms, payload bytes)
PAGE_CASES = [
    (
        "app_pages/collectives.py",
        "defaults (N=8)",
        {},
        dict(rerun_ms=60, latency_ms=200, payload=500_000),
    ),
    ("app_pages/collectives.py", "N=32", {"n": "32"}, dict(payload=3_000_000)),
    ("app_pages/data_parallel.py", "defaults", {}, dict(rerun_ms=80, latency_ms=200)),
    ("app_pages/tensor_parallel.py", "defaults", {}, dict(rerun_ms=80, latency_ms=200)),
    (
        "app_pages/pipeline.py",
        "defaults (P=4, M=8)",
        {},
        dict(rerun_ms=80, latency_ms=250, payload=1_000_000),
    ),
    ("app_pages/pipeline.py", "P=32, M=128", {"p": "32", "m": "128"}, dict(latency_ms=1000)),
    ("app_pages/memory.py", "defaults", {}, dict(rerun_ms=60, latency_ms=200)),
    ("app_pages/planner.py", "defaults", {}, dict(rerun_ms=150, latency_ms=300)),
    ("app_pages/reliability.py", "defaults", {}, dict(rerun_ms=100, latency_ms=250)),
    ("app_pages/scenarios.py", "defaults (Size 70B)", {}, dict(rerun_ms=100, latency_ms=250)),
    (
        "app_pages/scenarios.py",
        "GPipe vs 1F1B",
        {"sc": "GPipe vs 1F1B"},
        dict(rerun_ms=100, latency_ms=250),
    ),
    ("app_pages/self_check.py", "defaults (seed 1)", {}, dict(rerun_ms=100, latency_ms=250)),
    (
        "app_pages/self_check.py",
        "all answered",
        {
            "seed": "1",
            "steps": "16",
            "sent": "1.78",
            "weight": "0.2",
            "split": "row-parallel B",
            "msg": "192",
            "bubble": "27.5",
            "fix": "more micro-batches",
            "saved": "2445",
        },
        dict(rerun_ms=100, latency_ms=250),
    ),
]


def _ring():
    import numpy as np

    from core.collectives import ring_all_reduce

    x = np.random.default_rng(0).standard_normal((256, 1_048_576), dtype=np.float32)
    return lambda: ring_all_reduce(x)


def _pipeline():
    from core.pipeline import simulate

    return lambda: simulate("interleaved_1f1b", 64, 1024, num_chunks=2)


def _search(num_nodes: int, model: str, global_batch: int, seq_len: int, recompute: str):
    """A cold planner search over every layout of num_nodes x 8 H100 (the pipeline-makespan cache
    cleared).
    """
    from core.hardware import make_cluster
    from core.model import preset
    from core.planner import Training, clear_caches, search

    args = (
        preset(model),
        make_cluster(num_nodes=num_nodes, gpus_per_node=8),
        Training(global_batch=global_batch, seq_len=seq_len, recompute=recompute),
    )

    def run():
        clear_caches()
        return search(*args)

    return run


# (label, factory returning a zero-argument callable, budget seconds)
CORE_CASES = [
    ("ring_all_reduce N=256, 1,048,576 float32", _ring, 1.0),
    ('simulate("interleaved_1f1b", 64, 1024, num_chunks=2)', _pipeline, 1.0),
    # GPT-3 175B as trained (B = 1,536, s = 2,048), full recompute: 1,417 layouts run, 1,330
    # rejected.
    (
        "planner search, 1,024 GPUs (128 x 8 H100), GPT-3 175B, B=1536",
        lambda: _search(128, "GPT-3 175B", 1536, 2048, "full"),
        2.0,
    ),
    # 16,384 GPUs: B = 16,384 so DP can reach every power of two; 1,131 run, 781 rejected.
    (
        "planner search, 16,384 GPUs (2,048 x 8 H100), GPT-3 175B, B=16384",
        lambda: _search(2048, "GPT-3 175B", 16384, 2048, "full"),
        10.0,
    ),
    # Llama 3 405B's own run (16,384 H100, 2,048 x 8,192 tokens): few layouts fit, so it is quick.
    (
        "planner search, 16,384 GPUs (2,048 x 8 H100), Llama-3.1 405B, B=2048, s=8192",
        lambda: _search(2048, "Llama-3.1 405B", 2048, 8192, "full"),
        10.0,
    ),
]


# Issue 17 (context and expert parallelism), appended: the two pages and the MoE layer.
def _moe_layer():
    from core.expert_parallel import moe_layer

    return lambda: moe_layer(tokens=8192, experts=64, top_k=8, ep=8)


PAGE_CASES += [
    ("app_pages/context_parallel.py", "defaults (C=4)", {}, dict(rerun_ms=100, latency_ms=200)),
    ("app_pages/expert_parallel.py", "defaults (E=64)", {}, dict(rerun_ms=100, latency_ms=200)),
]
CORE_CASES += [("MoE layer: 8,192 tokens, 64 experts, top-8, EP=8", _moe_layer, 0.5)]

# Issue 14 (the training step drawn), appended: issue 18's budgets for a page at its defaults.
PAGE_CASES += [
    (
        "app_pages/training_step.py",
        "defaults (planner's pick)",
        {},
        dict(rerun_ms=100, latency_ms=150),
    )
]
