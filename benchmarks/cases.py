"""What the benchmark measures: page cases (URL state) with their budgets, and core timings."""

from __future__ import annotations

# Issue 18's budgets (p50 ms): slider → first chart redrawn, slider → every chart drawn (a glide's
# frames after that are timed apart: benchmarks/__main__.py).
DEFAULTS = dict(first_ms=150, settled_ms=250)  # every page at its defaults
AT_MAX = dict(first_ms=1000, settled_ms=1000)  # the same page at its heaviest settings


def _case(page: str, label: str, params: dict, **budget) -> tuple[str, str, dict, dict]:
    """(page file, case label, URL params, budgets). Budgets: first_ms, settled_ms (browser),
    rerun_ms (the whole script under AppTest), payload (bytes of chart JSON); `slider` = the user
    key of the slider the browser moves (default: the first visible one in the main area)."""
    return (f"app_pages/{page}.py", label, params, (AT_MAX if params else DEFAULTS) | budget)


PAGE_CASES = [
    _case("collectives", "defaults (N=8)", {}, rerun_ms=60, payload=500_000),
    _case("collectives", "max (N=32, 256 elements)", {"n": "32", "elems": "256"}),
    _case("data_parallel", "defaults", {}, rerun_ms=80),
    _case("data_parallel", "max (N=16, 32 samples)", {"n": "16", "b": "32"}),
    _case("tensor_parallel", "defaults", {}, rerun_ms=80),
    # At TP=8 the first slider's only move is to TP=7, which divides no model's heads: the page
    # answers with the rule and the valid degrees instead of charts, so b is the slider moved.
    _case(
        "tensor_parallel",
        "max (TP=8, b=16, s=32768; b moved)",
        {"tp": "8", "mb": "16", "seq": "32768"},
        slider="mb",
    ),
    _case("pipeline", "defaults (P=4, M=8)", {}, rerun_ms=80, payload=1_000_000),
    _case("pipeline", "max (P=32, M=128)", {"p": "32", "m": "128"}),
    _case("memory", "defaults", {}, rerun_ms=60),
    _case("memory", "max (DP=1024, b=64, s=131072)", {"dp": "1024", "mb": "64", "seq": "131072"}),
    _case("context_parallel", "defaults (C=4)", {}, rerun_ms=100),
    _case("context_parallel", "max (C=16)", {"c": "16", "tp": "8", "pp": "16"}),
    _case("expert_parallel", "defaults (E=64)", {}, rerun_ms=100),
    _case("expert_parallel", "max (top-8, skew 2, PP=16)", {"k": "8", "skew": "2.0", "mpp": "16"}),
    _case("planner", "defaults", {}, rerun_ms=150),
    _case("planner", "max (128 nodes)", {"nodes": "128"}),
    _case("training_step", "defaults (planner's pick)", {}, rerun_ms=100),
    _case("training_step", "max (128 nodes)", {"nodes": "128"}),
    _case("reliability", "defaults", {}, rerun_ms=100),
    _case("reliability", "max (32,768 GPUs, 90 days)", {"gpus": "32768", "days": "90"}),
    _case("trace", "defaults (a100 demo, 2 ranks)", {}),
    _case("trace", "max (16 plan ranks)", {"n": "16"}),
    _case("scenarios", "defaults (Size 70B)", {}, rerun_ms=100),
    _case("scenarios", "GPipe vs 1F1B", {"sc": "GPipe vs 1F1B"}, rerun_ms=100, **DEFAULTS),
    _case("self_check", "defaults (seed 1)", {}, rerun_ms=100),
    _case(
        "self_check",
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
        rerun_ms=100,
        **DEFAULTS,
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


CORE_CASES += [("MoE layer: 8,192 tokens, 64 experts, top-8, EP=8", _moe_layer, 0.5)]
