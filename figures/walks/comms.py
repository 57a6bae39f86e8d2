"""Walks of the communication pages: collectives, data parallel, tensor parallel."""

from __future__ import annotations

from functools import cache

from core import collectives as coll
from core import data_parallel as dp
from core import tensor_parallel as tc
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.model import preset
from core.training import Efficiency
from core.units import format_bytes, format_seconds
from figures.tensor_parallel.text import TOY
from figures.walks.step import WalkStep
from figures.walks.step import steps as _steps


@cache  # pure, so computed once (the data-parallel walk costs ~0.3 s)
def collectives() -> tuple[WalkStep, ...]:
    """The ring all-reduce on 4 GPUs step by step, then N = 32, then small vs large messages."""
    link = LINK_PRESETS["NVLink 4"]
    bw, alpha = link.bandwidth_bytes_per_s, link.latency_s
    trace = coll.ring_all_reduce(coll.example_inputs(4, 4))
    last = trace.num_steps  # 2(N − 1)
    full = trace.contribution_counts[last // 2] == 4  # elements holding all 4 GPUs' numbers
    share = full.sum(axis=1)[0] / full.shape[1]  # the fraction of the sum each GPU owns
    sent = float(trace.bytes_sent.max() / trace.message_bytes)  # × S: 2(N−1)/N
    ring32 = coll.ring_all_reduce(coll.example_inputs(32, 32))
    sent32 = float(ring32.bytes_sent.max() / ring32.message_bytes)

    def t(alg: str, n: int, size: float) -> str:
        return format_seconds(coll.all_reduce_time_s(alg, n, size, bw, alpha))

    base = dict(n=4, elems=4, step=0, size="1 GB", link="NVLink 4", cmp=False)
    cmp = dict(n=32, elems=32, cmp=True, alg_a="Ring", alg_b="Binomial tree")
    return _steps(
        base,
        (
            f"Four GPUs each hold their own 4 numbers. The ring sums them in 2(N−1) = {last} "
            "steps, each GPU only ever sending to its right-hand neighbour.",
            {},
        ),
        (
            f"After N−1 = {last // 2} reduce-scatter steps every GPU owns {share:.0%} of the "
            "answer: one chunk that has met all four GPUs' numbers.",
            {"step": last // 2},
        ),
        (
            f"{last - last // 2} all-gather steps later every GPU holds the whole sum. Each sent "
            f"{sent:g}·S = {format_bytes(sent * 1e9, 'decimal')} for its 1 GB tensor.",
            {"step": last},
        ),
        (
            f"At N = 32 each GPU still sends only {sent32:.3g}·S: the bytes per GPU hardly grow "
            f"with N. On NVLink 4 the 1 GB all-reduce takes {t('ring', 32, 1e9)}.",
            {"n": 32, "elems": 32},
        ),
        (
            f"At 64 kB the ring's {ring32.num_steps} steps of α = {format_seconds(alpha)} "
            f"dominate: ring {t('ring', 32, 64e3)} vs binomial tree {t('tree', 32, 64e3)}. "
            "Small messages are latency-bound.",
            cmp | {"size": "64 kB"},
        ),
        (
            f"Back at 1 GB the ring wins, {t('ring', 32, 1e9)} vs {t('tree', 32, 1e9)}. "
            "Takeaway: the ring sends about 2·S per GPU whatever N is, so the link sets its "
            "speed, but its 2(N−1) latency steps hand small messages to tree-like algorithms.",
            cmp,
        ),
    )


DP_COUNTS = (8, 16, 32, 64, 128, 256, 512)  # the data-parallel page's scaling sweep


def _dp_efficiency(kt: int, kind: str) -> tuple[float, float]:
    """Weak-scaling efficiency at 64 and 512 GPUs, as the page computes it at its defaults
    (7B, H100 SXM nodes of 8, 8 × InfiniBand NDR, 25 MiB buckets overlapped)."""
    base = make_cluster(
        num_nodes=1,
        gpus_per_node=8,
        gpu_name="H100 SXM",
        inter_link_name="InfiniBand NDR",
        nics_per_node=8,
    )
    job = dp.DpJob(
        num_params=7e9,
        tokens_per_gpu=kt * 1024,
        bucket_bytes=25 * 2**20,
        all_reduce=kind,
        efficiency=Efficiency(),  # the page runs every kind at the app's achievable efficiency
    )
    eff = dp.scaling_curve(job, base, DP_COUNTS, scaling="weak").column("efficiency")
    return float(eff[DP_COUNTS.index(64)]), float(eff[-1])


@cache  # pure, so computed once (the data-parallel walk costs ~0.3 s)
def data_parallel() -> tuple[WalkStep, ...]:
    """The proof (equal, then unequal shards), then scaling: the NIC, hierarchy, more tokens."""
    equal = dp.prove_data_parallel(dp.make_problem(num_samples=48), dp.equal_shards(48, 4))
    skew = dp.skewed_shards(48, 4)
    unequal = dp.prove_data_parallel(dp.make_problem(num_samples=48), skew)
    flat4, hier4 = _dp_efficiency(4, "flat ring"), _dp_efficiency(4, "hierarchical")
    flat32 = _dp_efficiency(32, "flat ring")
    base = dict(n=4, b=12, uneq=False, size="7B", kt=4, ar="flat ring", scale="weak", at="64")
    return _steps(
        base,
        (
            "4 ranks × 12 samples: the mean of the 4 per-rank gradients equals the gradient of "
            f"all 48 samples to {equal.ring_max_abs_diff:.0e}, float rounding.",
            {},
        ),
        (
            f"Unequal shards {', '.join(map(str, skew))}: the plain mean of per-rank means is off "
            f"by {unequal.ring_max_abs_diff:.1e}; weighting each by its sample count brings the "
            f"error back to {unequal.weighted_max_abs_diff:.0e}.",
            {"uneq": True},
        ),
        (
            f"Scaling a 7B model at 4k tokens per GPU with a flat ring: efficiency is "
            f"{flat4[0]:.0%} at 64 GPUs and {flat4[1]:.0%} at 512, as the ring leaves the node "
            "and the NIC sets its pace.",
            {},
        ),
        (
            f"A hierarchical all-reduce (NVLink inside the node, then the NICs) lifts that to "
            f"{hier4[0]:.0%} at 64 and {hier4[1]:.0%} at 512 GPUs.",
            {"ar": "hierarchical"},
        ),
        (
            f"8× more tokens per GPU (32k) gives even the flat ring a longer backward to hide "
            f"behind: {flat32[1]:.0%} at 512 GPUs. Takeaway: averaging gradients is one big "
            "batch; scaling stops when the all-reduce outgrows the backward it hides behind.",
            {"kt": 32, "at": "512"},
        ),
    )


@cache  # pure, so computed once (the data-parallel walk costs ~0.3 s)
def tensor_parallel(units: str = "binary") -> tuple[WalkStep, ...]:
    """The split proved on the toy layer, then GPT-3's traffic per layer and the node boundary."""
    toy = dict(tokens=TOY["tokens"], hidden=TOY["hidden"], ffn=TOY["ffn"])
    diff = max(tc.prove_tp_mlp(tp=2, **toy).max_abs_diff.values())
    gpt3, shape = preset("GPT-3 175B"), dict(micro_batch=1, seq_len=2048)
    plan = tc.tp_comm_plan(gpt3, tp=8, **shape)
    sp = tc.tp_comm_plan(gpt3, tp=8, sequence_parallel=True, **shape)
    links = ("NVLink 4", "InfiniBand NDR")
    times = tc.link_comparison(gpt3, GPU_PRESETS["H100 SXM"], links=links, mfu=0.5, tp=8, **shape)
    nv, ib = times
    fwd, bwd = plan.forward["all_reduce"], plan.backward["all_reduce"]
    calls = sum(plan.forward.values()) + sum(plan.backward.values())

    def gb(num_bytes: float) -> str:
        return format_bytes(num_bytes, units)

    base = dict(tp=2, model="GPT-3 175B", mb=1, seq=2048, gpu="H100 SXM", sp=False)
    return _steps(
        base,
        (
            "TP = 2: X is copied to both GPUs, A is split by columns and B by rows, so each GPU "
            "computes its own slice and one all-reduce sums the partial outputs. The split layer "
            f"equals the whole one to {diff:.0e}.",
            {},
        ),
        (
            f"TP = 8 on GPT-3 175B (b = 1, s = 2048): every layer runs {calls} all-reduces "
            f"({fwd} forward, {bwd} backward) of b·s·h·2 B = "
            f"{format_bytes(plan.message_bytes, units)} each.",
            {"tp": 8},
        ),
        (
            "Sequence parallel turns each all-reduce into a reduce-scatter plus an all-gather: "
            f"the same {gb(sp.bytes_sent_per_gpu_per_layer)} sent per GPU per layer, but the "
            f"layer input each GPU keeps shrinks from {gb(plan.layer_input_bytes_per_gpu)} to "
            f"{gb(sp.layer_input_bytes_per_gpu)}.",
            {"tp": 8, "sp": True},
        ),
        (
            f"On NVLink 4 a layer's TP traffic takes {format_seconds(nv.comm_s)} beside "
            f"{format_seconds(nv.compute_s)} of compute; over InfiniBand NDR it would take "
            f"{format_seconds(ib.comm_s)}. Takeaway: the split is exact, but its all-reduces sit "
            "on the critical path, so TP stays inside the node.",
            {"tp": 8},
        ),
    )
