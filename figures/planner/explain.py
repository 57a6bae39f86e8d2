"""The planner page's formulas, metrics and sentences, with this layout's numbers."""

from __future__ import annotations

from collections import Counter

from core.memory import budget
from core.planner import Evaluation, SearchResult
from core.units import format_bytes, format_count, format_flops, format_seconds


def _row(label: str, formula: str, seconds: float, ev: Evaluation) -> str:
    return f"| {label} | {formula} | {format_seconds(seconds)} | {seconds / ev.step_time_s:.1%} |"


def how_computed_markdown(ev: Evaluation, units: str = "binary") -> str:
    """FLOP conventions, MFU vs HFU and every breakdown term, with this layout's numbers beside
    them.
    """
    m, c, t, lay, st, bd = ev.model, ev.cluster, ev.training, ev.layout, ev.stage, ev.breakdown
    s, B, n, mb, M = t.seq_len, t.global_batch, c.num_gpus, lay.micro_batch, ev.num_microbatches
    peak, L = c.gpu.bf16_flops_per_s, m.num_layers
    attn = 12 * L * m.q_width * s
    spans = ev.spans
    lines = [
        "**FLOPs (PaLM App. B).** Model FLOPs per token = 6N + 12·L·(a·d_head)·s, N = "
        f"{m.matmul_params:,} matmul weights: 6N = {format_flops(6 * m.matmul_params)}, "
        f"attention 12·{L}·{m.q_width}·{s:,} = {format_flops(attn)}; × B·s = {B:,} × {s:,} "
        f"tokens → **F_model = {format_flops(ev.model_flops)}** per step.",
        f"Hardware FLOPs add the recompute ({t.recompute}): **F_hw = "
        f"{format_flops(ev.hardware_flops)}** (×{ev.hardware_flops / ev.model_flops:.3f}; full "
        "recompute of a GPT shape is Narayanan et al. 2021 Eq. 3, the 96 B s l h² form, versus "
        "72 without).",
        "",
        f"**MFU** = F_model / (GPUs × dense peak × step) = {format_flops(ev.model_flops)} / "
        f"({n:,} × {format_flops(peak)}/s × {format_seconds(ev.step_time_s)}) = "
        f"**{ev.mfu:.1%}**; **HFU** uses F_hw: **{ev.hfu:.1%}**. MFU does not reward "
        "recomputation; HFU does.",
        "",
        f"**Step time** = simulated pipeline makespan of {M} micro-batches (B / (DP × mb) = "
        f"{B:,} / ({lay.dp} × {mb})) on the slowest stage + exposed DP sync + optimizer. Per "
        f"micro-batch t_F = {format_seconds(st.forward_s)}, t_B = "
        f"{format_seconds(st.backward_s)}.",
        "",
        "| part | how | value | share |",
        "|---|---|---|---|",
        _row(
            "compute",
            f"{M} × 3 × each GEMM's max(FLOPs / ({format_flops(peak)}/s × matmul eff. "
            f"{t.efficiency.matmul}), bytes / HBM) + 5.5 µs (a roofline per GEMM shape)",
            bd.compute_s,
            ev,
        ),
        _row(
            "memory-bound ops",
            f"{M} × norm/dropout/softmax/GeLU bytes / (HBM × {t.efficiency.hbm})",
            bd.memory_bound_s,
            ev,
        ),
        _row(
            "recompute",
            f"{M} × the forward work {t.recompute} recompute repeats",
            bd.recompute_s,
            ev,
        ),
        _row(
            "exposed TP",
            f"{M} × {st.layers} layers × all-reduces of b·s·h·2 B = "
            f"{format_bytes(mb * s * m.hidden_size * 2, units)} over TP={lay.tp} on "
            f"{spans['tp'].link} (ring: 2(t−1)/t × bytes / bw)",
            bd.tp_s,
            ev,
        ),
        _row(
            "PP p2p",
            f"{M} × 2 × v={lay.num_chunks} sends of b·s·h·2 B / TP on {spans['pp'].link}",
            bd.pp_p2p_s,
            ev,
        ),
        _row(
            "PP bubble",
            f"simulated makespan − {M}(t_F + t_B); closed form (p−1)(t_F + t_B)/v = "
            f"{format_seconds((lay.pp - 1) * (st.forward_s + st.backward_s) / lay.num_chunks)}",
            bd.pp_bubble_s,
            ev,
        ),
        _row(
            "ZeRO-3 gathers",
            "per-layer parameter all-gathers not hidden behind that layer's compute",
            bd.zero_gather_s,
            ev,
        ),
        _row(
            "exposed DP",
            f"per-layer buckets on their own stream: c + (n − 1)·max(0, c − b) per stage, less "
            f"the drain; sync = {format_seconds(ev.dp_sync_s)} over DP={lay.dp} on "
            f"{spans['dp'].link}",
            bd.dp_s,
            ev,
        ),
        _row(
            "optimizer",
            "params on the GPU × (2·optimizer + grad + param bytes) / HBM",
            bd.optimizer_s,
            ev,
        ),
        f"| **total** | | **{format_seconds(ev.step_time_s)}** | 100% |",
    ]
    # Rows that cannot apply at a degree of 1 (no TP group, no pipeline, no DP replicas) go.
    idle = {"exposed TP": lay.tp == 1, "PP p2p": lay.pp == 1, "PP bubble": lay.pp == 1}
    idle |= {"exposed DP": lay.dp == 1, "ZeRO-3 gathers": lay.zero_stage != 3}
    return "\n".join(
        x for x in lines if not any(x.startswith(f"| {k} |") for k, v in idle.items() if v)
    )


def exercise_markdown(good: Evaluation, bad: Evaluation, link: str) -> str:
    """The seeds' 8 x 8 exercise: TP inside NVLink vs across nodes, with both computed step
    times.
    """
    t = good.training
    return (
        f"{good.model.name}, batch {t.global_batch}, {t.recompute} recompute, "
        f"{good.cluster.gpu.name}. [**TP = {good.layout.tp} inside each node's "
        f"{good.spans['tp'].link}, PP = {good.layout.pp} across**]({link}): step "
        f"{format_seconds(good.step_time_s)}, exposed TP {format_seconds(good.breakdown.tp_s)}. "
        "[**Same layout, TP across nodes** (order "
        f"{bad.layout.order})]({link}&order={bad.layout.order}): step "
        f"{format_seconds(bad.step_time_s)}, exposed TP {format_seconds(bad.breakdown.tp_s)} — "
        f"{bad.step_time_s / good.step_time_s:.2f}× the step, because every layer's all-reduces "
        f"now cross {bad.spans['tp'].link}. Each link opens both breakdowns side by side."
    )


def headline_metrics(
    ev: Evaluation, units: str = "binary"
) -> list[tuple[str, str, str | None, str | None]]:
    """(label, value, delta, help) of the drawn layout: step, tokens/s, MFU, GPUs, fullest-GPU
    memory.
    """
    b, lay = (lambda x: format_bytes(x, units)), ev.layout
    return [
        (
            "Step time",
            format_seconds(ev.step_time_s),
            None,
            f"{ev.num_microbatches} micro-batches per pipeline",
        ),
        ("Tokens / s", format_count(ev.tokens_per_s), None, None),
        (
            "MFU",
            f"{ev.mfu:.1%}",
            None,
            f"HFU (recompute counted) {ev.hfu:.1%}; {ev.tflops_per_gpu:.0f} model TFLOP/s per GPU",
        ),
        ("GPUs", f"{ev.cluster.num_gpus:,}", f"DP {lay.dp} × TP {lay.tp} × PP {lay.pp}", None),
        (
            "Memory per GPU (fullest)",
            b(
                budget(
                    ev.memory.total_bytes, ev.capacity_bytes, ev.training.memory_headroom
                ).used_bytes
            ),
            f"{'fits' if ev.fits else 'OVER'} {b(ev.capacity_bytes)}",
            f"Training + the {ev.training.memory_headroom:.0%} reserve of HBM kept free for CUDA "
            "context, NCCL buffers and fragmentation (the bar's top)",
        ),
    ]


def no_layout_message(result: SearchResult, num_gpus: int, model_name: str) -> str:
    """Why the search found nothing to run: how many layouts each rule rejected, and the usual
    fixes.
    """
    counts = Counter(r.rule for r in result.rejected)
    rules = ", ".join(f"{rule} ({n:,})" for rule, n in counts.most_common())
    return (
        f"No layout of {num_gpus:,} GPUs runs {model_name}: every one breaks a rule — {rules}; "
        "the table below gives each reason. Memory: add nodes, recompute, shard with ZeRO or "
        "shrink the micro-batch. Splits: choose a GPU count of DP × TP × PP with DP dividing the "
        "batch, TP the heads, and PP at most the layers (stages may be uneven)."
    )


def takeaway_text(result: SearchResult) -> str:
    """The placement rule of thumb, and how far its "boring" layout lands from the search's
    fastest.
    """
    rule, best, boring = (
        "Minimum TP/PP that fits, then DP; TP in the node, PP across, DP outermost. ",
        result.fastest,
        result.boring,
    )
    if best is None:
        return rule + "Here nothing fits: first find more memory per GPU, or more GPUs."
    if boring is best:
        return rule + f"Here that rule gives **{boring.layout.label}**, which is also the fastest."
    return rule + (
        f"Here that rule gives **{boring.layout.label}**, {result.boring_slowdown:.0%} slower "
        f"than the fastest, **{best.layout.label}**: the search earns its keep."
    )
