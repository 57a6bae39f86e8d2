"""Walks of the scale pages: pipeline, memory, reliability."""

from __future__ import annotations

from functools import cache

from core import memory as cm
from core import pipeline as pl
from core import reliability as rel
from core.hardware import GPU_PRESETS
from core.model import MODEL_PRESETS
from core.training import RECIPES
from core.units import format_bytes, format_seconds
from figures.memory.run import Run, Split, configs, model_of
from figures.memory.text import RESERVE_PCT
from figures.walks.step import WalkStep
from figures.walks.step import steps as _steps


@cache  # pure, so computed once (the data-parallel walk costs ~0.3 s)
def pipeline() -> tuple[WalkStep, ...]:
    """More micro-batches shrink the bubble; GPipe vs 1F1B memory; interleaving; zero bubble."""

    def sim(sched: str, m: int, v: int = 1) -> pl.PipelineResult:
        return pl.simulate(sched, 4, m, num_chunks=v)  # t_F = 1 s, t_B = 2 s: the page's default

    one, eight, many = sim("1f1b", 1), sim("1f1b", 8), sim("1f1b", 32)
    gpipe, inter, zb = sim("gpipe", 8), sim("interleaved_1f1b", 8, 2), sim("zb_h1", 8)
    labels = {k: info.short_label for k, info in pl.SCHEDULES.items()}
    base = dict(p=4, m=8, sched=labels["1f1b"], v=2, f=1.0, b=2.0, i=1.0, w=1.0, lat=0.0)
    base |= dict(cmp=False, sched2=labels["zb_h1"])
    return _steps(
        base,
        (
            f"One micro-batch through P = 4 stages: each rank works "
            f"{one.makespan_s - max(one.idle_s):g} s of a "
            f"{one.makespan_s:g} s step and waits the rest, a {one.bubble_fraction:.0%} bubble.",
            {"m": 1},
        ),
        (
            f"8 micro-batches: each rank still idles {max(eight.idle_s):g} s (P − 1 = 3 "
            f"stage-times of fill and drain), now only {eight.bubble_fraction:.1%} of the "
            f"{eight.makespan_s:g} s step.",
            {},
        ),
        (
            f"32 micro-batches: the same idle time is {many.bubble_fraction:.1%} of the step. "
            "More micro-batches per step shrink the bubble's share.",
            {"m": 32},
        ),
        (
            f"GPipe has the same {gpipe.bubble_fraction:.1%} bubble at M = 8 but holds "
            f"{max(gpipe.peak_activations)} micro-batches' activations on a rank; 1F1B holds at "
            f"most {max(eight.peak_activations)} (P − r on rank r).",
            {"sched": labels["gpipe"], "cmp": True, "sched2": labels["1f1b"]},
        ),
        (
            f"Interleaved 1F1B with v = 2 chunks per rank cuts the bubble to "
            f"{inter.bubble_fraction:.1%}, for twice the sends between ranks.",
            {"sched": labels["interleaved_1f1b"]},
        ),
        (
            f"ZB-H1 splits the backward and fills the drain with deferred weight gradients: "
            f"{zb.bubble_fraction:.1%}. Takeaway: the bubble is the pipe filling and draining; "
            "more micro-batches and smarter schedules shrink its share.",
            {"sched": labels["zb_h1"]},
        ),
    )


@cache  # pure, so computed once (the data-parallel walk costs ~0.3 s)
def memory(units: str = "binary") -> tuple[WalkStep, ...]:
    """Llama-2 13B on 8 H100s: ZeRO 0 → 1 → 3 shards the states; long sequences need recompute."""
    run = Run(
        model="Llama-2 13B",
        seq=4096,
        recipe="mixed_adam",
        flash=True,
        gpu="H100 SXM",
        reserve_pct=RESERVE_PCT,
        units=units,
    )
    hbm = GPU_PRESETS["H100 SXM"].hbm_bytes

    def per_gpu(zero: str, seq: int = 4096, rc: str = "none") -> cm.MemoryResult:
        r = Run(**{**run.__dict__, "seq": seq})
        split = Split(dp=8, tp=1, pp=1, zero=zero, mb=1, rc=rc, sp=False)
        return cm.memory_per_gpu(model_of(r), *configs(r, split))

    def gb(num_bytes: float) -> str:
        return format_bytes(num_bytes, units)

    def headline(m: cm.MemoryResult) -> str:
        """The page's headline: what a GPU needs with the reserve kept free, and the verdict."""
        b = cm.budget(m.total_bytes, hbm, RESERVE_PCT / 100)
        return f"{gb(b.used_bytes)} per GPU with the {RESERVE_PCT}% reserve: " + (
            "it fits" if b.fits else "out of memory"
        )

    z0, z1, z3 = per_gpu("0"), per_gpu("1"), per_gpu("3")
    long, rc = per_gpu("3", 32768), per_gpu("3", 32768, "full")
    params = z0.params_on_gpu / 1e9
    base = dict(model="Llama-2 13B", dp=8, tp=1, pp=1, zero="0", mb=1, seq=4096, rc="none")
    base |= dict(
        recipe=RECIPES["mixed_adam"].label,
        gpu="H100 SXM",
        reserve=RESERVE_PCT,
        sp=False,
        flash=True,
    )
    return _steps(
        base,
        (
            f"Without ZeRO each of the 8 GPUs keeps the weights, gradients and Adam states of "
            f"all {params:.1f}B parameters: {gb(z0.states_bytes)}, against an H100's "
            f"{gb(hbm)}.",
            {},
        ),
        (
            f"ZeRO-1 shards the Adam states 8 ways: {gb(z1.states_bytes)} of states, "
            f"{headline(z1)}.",
            {"zero": "1"},
        ),
        (
            f"ZeRO-3 shards weights and gradients too: {gb(z3.states_bytes)} of states, "
            f"{headline(z3)}.",
            {"zero": "3"},
        ),
        (
            f"At 32,768 tokens per sequence the activations alone are "
            f"{gb(long.activations_bytes)} per GPU, which ZeRO does not touch: {headline(long)}.",
            {"zero": "3", "seq": 32768},
        ),
        (
            f"Full recompute keeps only each layer's input: activations fall to "
            f"{gb(rc.activations_bytes)}; {headline(rc)}. Takeaway: ZeRO divides "
            "the model states by DP; recompute, TP and sequence parallel divide the activations.",
            {"zero": "3", "seq": 32768, "rc": "full"},
        ),
    )


@cache  # pure, so computed once (the data-parallel walk costs ~0.3 s)
def reliability(bw_units: str = "decimal") -> tuple[WalkStep, ...]:
    """Failures grow with the GPU count; the checkpoint interval that maximises goodput."""
    gpu_mtbf_h = rel.LLAMA3_GPU_MTBF_S / rel.HOUR_S
    gb = 1e9 if bw_units == "decimal" else 2**30
    ck = rel.checkpoint(model=MODEL_PRESETS["Llama-3.1 405B"], write_bandwidth_bytes_per_s=100 * gb)

    def job(gpus: int) -> rel.Interruptions:
        return rel.interruptions(
            num_gpus=gpus, run_s=7 * rel.DAY_S, gpu_mtbf_s=rel.LLAMA3_GPU_MTBF_S
        )

    def plan(gpus: int, restart_min: int = 10) -> tuple[int, rel.Waste, rel.GoodputCurve]:
        kw = dict(
            checkpoint_s=ck.write_s, restart_s=restart_min * 60.0, mtbf_s=job(gpus).job_mtbf_s
        )
        best = rel.goodput_curve(**kw)
        tau = max(1, round(best.optimum.interval_s / 60))  # the slider moves in whole minutes
        return tau, rel.waste(interval_s=tau * 60.0, **kw), best

    def goodput(gpus: int, tau_min: int) -> float:
        kw = dict(checkpoint_s=ck.write_s, restart_s=600.0, mtbf_s=job(gpus).job_mtbf_s)
        return rel.waste(interval_s=tau_min * 60.0, **kw).goodput

    small, big = job(16_384), job(32_768)
    tau, at_tau, best = plan(16_384)
    tau2, at_tau2, _ = plan(32_768)
    tau3, at_tau3, _ = plan(32_768, 2)
    base = dict(gpus=16_384, mtbf=gpu_mtbf_h, days=7, restart=10, model="Llama-3.1 405B")
    base |= dict(recipe="mixed_adam", ckpt="weights+optimizer", wbw=100.0, tau=30)
    return _steps(
        base,
        (
            f"16,384 GPUs, each failing once in {gpu_mtbf_h:,.0f} h on average: the job is "
            f"interrupted every {format_seconds(small.job_mtbf_s)}, about "
            f"{small.expected_interruptions:.0f} times in a week.",
            {},
        ),
        (
            f"The {format_bytes(ck.size_bytes, 'decimal')} checkpoint takes "
            f"{format_seconds(ck.write_s)} to write. Saving every {tau} min, near the optimum "
            f"{format_seconds(best.optimum.interval_s)}, keeps goodput at {at_tau.goodput:.1%}.",
            {"tau": tau},
        ),
        (
            f"Saving only every 4 h loses half an interval of work per failure on average: "
            f"goodput falls to {goodput(16_384, 240):.1%}.",
            {"tau": 240},
        ),
        (
            f"Twice the GPUs halve the job MTBF to {format_seconds(big.job_mtbf_s)}; the best "
            f"interval shrinks to about {tau2} min and goodput to {at_tau2.goodput:.1%}.",
            {"gpus": 32_768, "tau": tau2},
        ),
        (
            f"A 2-min restart instead of 10 lifts it to {at_tau3.goodput:.1%} (every {tau3} min). "
            "Takeaway: failures grow with the GPU count, so checkpoint near √(2·δ·MTBF) and "
            "make restarts fast.",
            {"gpus": 32_768, "tau": tau3, "restart": 2},
        ),
    )
