"""How the memory page's numbers are computed, and the sizing questions with their answers."""

from __future__ import annotations

from core.hardware import GPU_PRESETS
from core.memory import (
    MemoryResult,
    ZeroComm,
    block_of,
    budget,
    layer_allgather_bytes,
    memory_per_gpu,
    model_state_bytes_per_gpu,
    shard_degrees,
    zero_comm_bytes_per_gpu,
)
from core.model import preset
from core.parallel import ZERO_STAGES, Layout
from core.training import RESERVE_FRACTION, Training, get_recipe
from core.units import format_bytes
from figures.memory.labels import activation_formula, pytorch_name
from figures.memory.stacks import exact_bytes


def how_computed_markdown(
    results: list[MemoryResult],
    chosen: MemoryResult,
    comm: tuple[ZeroComm, ZeroComm],
    gather_bytes: int | None,
    label: str,
    units: str = "binary",
    model=None,
) -> str:
    """The formulas behind the bars, each with this run's numbers beside it (markdown with
    KaTeX).
    """
    return "\n\n".join(
        how_computed_blocks(results, chosen, comm, gather_bytes, label, units, model)
    )


def how_computed_blocks(
    results: list[MemoryResult],
    chosen: MemoryResult,
    comm: tuple[ZeroComm, ZeroComm],
    gather_bytes: int | None,
    label: str,
    units: str = "binary",
    model=None,
) -> list[str]:
    """`how_computed_markdown` as separate markdown blocks: the KaTeX formula gets a block of its
    own,
    so a control it does not depend on (DP, ZeRO) leaves it, and its costly browser render,
    untouched."""

    def b(x):
        return format_bytes(x, units)

    rec = get_recipe(chosen.training.recipe)
    w, g, o = rec.param_bytes, rec.grad_bytes, rec.optimizer_bytes
    forms = {
        0: f"{w + g + o} Ψ",
        1: f"{w + g} Ψ + {o} Ψ / N_d",
        2: f"{w} Ψ + {g + o} Ψ / N_d",
        3: f"{w + g + o} Ψ / N_d",
    }
    n_d = shard_degrees(chosen.layout)[0]
    text = [
        f"**Model states** (ZeRO paper, Sec. 5; recipe {rec.label} = {w} weights + "
        f"{g} gradients + {o} optimizer bytes per parameter). Ψ = parameters on the fullest GPU "
        "after TP and PP (Megatron: layers / PP, weight matrices / TP, embedding on the first "
        f"stage, head on the last); N_d = sharding degree = {n_d:,}.",
        "",
        "| stage | PyTorch | model states per GPU | Ψ | = this run |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        z = r.layout.zero_stage
        states = r.states_bytes
        text.append(
            f"| {ZERO_STAGES[z].label} | {pytorch_name(z)} | {forms[z]} | {r.params_on_gpu:,} "
            f"| {exact_bytes(states, units)} |"
        )
    blocks = ["\n".join(text)]
    if chosen.layers_in_flight:
        tr, par = chosen.training, chosen.layout
        block = block_of(model) if model is not None and not model.dropout else None
        form = activation_formula(
            tr.recompute,
            tr.flash_attention,
            par.sequence_parallel,
            block,
            block and model.hidden_size,
        )
        source = (
            "Korthikanti et al. 2022, Table 2: 2-byte values, 1-byte dropout masks"
            if block is None
            else "a dropout-free block with its own widths — GQA K, V and SwiGLU's 6f: "
            "docs/notes/memory.md §3"
        )
        blocks += [
            f"**Activations** per layer and micro-batch ({source}; s = {tr.seq_len:,}, "
            f"b = {par.micro_batch}, "
            + (f"h = {model.hidden_size:,}, a = {model.num_heads}, " if model is not None else "")
            + f"t = {par.tp}"
            + (", flash attention drops the s² term):" if tr.flash_attention else "):"),
            f"$$ {form} = {f'{chosen.layer_activation_bytes:,.0f}'.replace(',', '{,}')}\\ "
            f"\\text{{B}} $$",
            f"× {chosen.layers_in_flight:g} layers in flight on stage {chosen.stage} (1F1B: (PP "
            f"− r) micro-batches × L / PP layers) + {chosen.extra_activation_bytes:,.0f} B of "
            f"embedding / logits = **{b(chosen.activations_bytes)}**.",
        ]
    d, z3 = comm
    ratio = f" = {z3.total_bytes / d.total_bytes:.2g}× DDP" if d.total_bytes else ""
    traffic = (
        "**Traffic per GPU per step** (ZeRO paper Sec. 7; a ring sends (N−1)/N of each tensor): "
        f"DDP all-reduces gradients, {b(d.total_bytes)} (2Ψ elements); {label} sends "
        f"{b(z3.total_bytes)}{ratio}."
    )
    if gather_bytes:
        traffic += (
            "\nZeRO-3 / FULL_SHARD pays by all-gathering each layer's weights "
            f"({b(gather_bytes)}) before its forward and again before its backward (3Ψ elements "
            "per step)."
        )
    return blocks + [traffic]


def sizing_questions(
    units: str = "binary",
    gpu: str = "H100 SXM",
    reserve_fraction: float = RESERVE_FRACTION,
    seq_len: int = 4096,
) -> list[tuple[str, str]]:
    """(question, answer computed by the core) for the seeds' three sizing questions."""

    def b(x):
        return format_bytes(x, units)

    cap = GPU_PRESETS[gpu].hbm_bytes
    reserve, card = reserve_fraction * cap, f"{gpu} ({format_bytes(cap, units)})"

    def verdict(r):
        bud = budget(r.total_bytes, cap, reserve_fraction)
        return (
            f"{b(bud.used_bytes)} of {b(cap)}: **{'fits' if bud.fits else 'OOM'}** "
            f"({b(abs(bud.margin_bytes))} {'to spare' if bud.fits else 'over'})"
        )

    m70, m13 = preset("Llama-2 70B"), preset("Llama-2 13B")
    tr16, tr8 = (Training(global_batch=n, seq_len=seq_len, flash_attention=True) for n in (16, 8))
    full = Training(global_batch=16, seq_len=seq_len, flash_attention=True, recompute="full")
    z3_16 = Layout(dp=16, zero_stage=3)
    r70, r70_none = memory_per_gpu(m70, z3_16, full), memory_per_gpu(m70, z3_16, tr16)
    ddp13, z3_13 = (memory_per_gpu(m13, Layout(dp=8, zero_stage=z), tr8) for z in (0, 3))
    c0, c3 = (zero_comm_bytes_per_gpu(m13.num_params, 8, z) for z in (0, 3))
    return [
        (
            "How much memory do a 70B model's states need at 16 bytes/param?",
            f"70e9 × 16 B = **{b(model_state_bytes_per_gpu(70e9, 1, 0).total_bytes)}**; "
            f"Llama-2 70B's exact {m70.num_params:,} parameters × 16 B = "
            f"**{b(model_state_bytes_per_gpu(m70.num_params, 1, 0).total_bytes)}**, before "
            "activations, buffers and fragmentation.",
        ),
        (
            f"Does ZeRO-3 over 16 × {card} fit Llama-2 70B?",
            f"16 Ψ / 16 = Ψ bytes = **{b(r70.states_bytes)}** of model states per GPU, "
            f"{r70.states_bytes / cap:.0%} of the card. FULL_SHARD also holds the gathered and "
            f"prefetched layer with its gradients ({b(r70.gathered_bytes)}); full recompute at "
            f"{seq_len:,} tokens adds {b(r70.activations_bytes)} of activations; the "
            f"{reserve_fraction:.0%} reserve {b(reserve)}: {verdict(r70)}. **Borderline**: it "
            f"fits only with a reserve under {1 - r70.total_bytes / cap:.1%} of the card — the "
            f'seed\'s "just barely". Without recompute (flash attention still on): '
            f"{verdict(r70_none)}.",
        ),
        (
            f"Does a 13B model train on {card} cards under DDP, and under FULL_SHARD?",
            f"DDP: 16 Ψ = {b(ddp13.states_bytes)} of states per GPU → {verdict(ddp13)}. "
            f"FULL_SHARD over 8: {b(z3_13.states_bytes)} of states → {verdict(z3_13)}. The "
            f"price: before each of the {m13.num_layers} layers' forward, and again before its "
            "backward, every GPU all-gathers that layer's weights "
            f"({b(layer_allgather_bytes(m13))}), so each GPU sends {b(c3.total_bytes)} per step "
            f"instead of DDP's {b(c0.total_bytes)} ({c3.total_bytes / c0.total_bytes:.2g}×).",
        ),
    ]
