"""What the benchmark measures: page cases (URL state) with their budgets, and core timings."""
from __future__ import annotations

# (page file, case label, URL params, budgets: rerun p50 ms, slider-to-chart p50 ms, payload bytes)
PAGE_CASES = [
    ("pages/collectives.py", "defaults (N=8)", {}, dict(rerun_ms=60, latency_ms=200, payload=500_000)),
    ("pages/collectives.py", "N=32", {"n": "32"}, dict(payload=3_000_000)),
    ("pages/data_parallel.py", "defaults", {}, dict(rerun_ms=80, latency_ms=200)),
    ("pages/tensor_parallel.py", "defaults", {}, dict(rerun_ms=80, latency_ms=200)),
    ("pages/pipeline.py", "defaults (P=4, M=8)", {}, dict(rerun_ms=80, latency_ms=250,
                                                         payload=1_000_000)),
    ("pages/pipeline.py", "P=32, M=128", {"p": "32", "m": "128"}, dict(latency_ms=1000)),
    ("pages/memory.py", "defaults", {}, dict(rerun_ms=60, latency_ms=200)),
    ("pages/planner.py", "defaults", {}, dict(rerun_ms=150, latency_ms=300)),
]


def _ring():
    import numpy as np

    from core.collectives import ring_all_reduce

    x = np.random.default_rng(0).standard_normal((256, 1_048_576), dtype=np.float32)
    return lambda: ring_all_reduce(x)


def _pipeline():
    from core.pipeline import simulate

    return lambda: simulate("interleaved_1f1b", 64, 1024, num_chunks=2)


# (label, factory returning a zero-argument callable, budget seconds)
CORE_CASES = [
    ("ring_all_reduce N=256, 1,048,576 float32", _ring, 1.0),
    ('simulate("interleaved_1f1b", 64, 1024, num_chunks=2)', _pipeline, 1.0),
]
