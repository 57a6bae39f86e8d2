"""Names, metrics, captions and fit rows for the memory page (strings and rows; no Streamlit)."""

from __future__ import annotations

from core.expert_parallel.spec import ALL_PRESETS, MOE_MODEL_PRESETS
from core.memory import FitRow, MemoryResult, budget, model_state_bytes_per_gpu
from core.parallel import ZERO_STAGES
from core.training import RECIPES, RESERVE_PARTS
from core.units import format_bytes, format_count

# --- Labels, tables and formula text for the memory page (strings and rows; no Streamlit here) ---


def pytorch_name(zero_stage: int) -> str:
    """PyTorch's name for a ZeRO stage, as the what-fits and formula tables show it."""
    z = ZERO_STAGES[zero_stage]
    return f"{z.pytorch} ({z.label})" if zero_stage == 0 else z.pytorch


# Short, stable labels: Streamlit writes the label into the URL.
MODEL_LABELS = {n: n.split(" (")[0] for n in ALL_PRESETS} | {
    "custom": "custom shape",
    "params": "N parameters",
}


RECIPE_HELP = "\n\n".join(f"**{r.label}**: {r.source}" for r in RECIPES.values())


def headline_metrics(
    chosen: MemoryResult,
    capacity_bytes: float,
    reserve_bytes: float,
    label: str,
    num_params: int,
    recipe: str,
    gpu: str,
    units: str = "binary",
) -> list[dict]:
    """st.metric arguments for the fullest GPU: total with headroom, verdict, states, activations,
    whole model.
    """

    def b(x):
        return format_bytes(x, units)

    bud = budget(chosen.total_bytes, capacity_bytes, reserve_bytes / capacity_bytes)
    used, ok = bud.used_bytes, bud.fits
    whole = model_state_bytes_per_gpu(num_params, 1, 0, recipe).total_bytes
    states = chosen.states_bytes
    return [
        {
            "label": f"{label}, per GPU",
            "value": b(used),
            "border": True,
            "delta": f"{b(capacity_bytes - used)} free"
            if ok
            else f"-{b(used - capacity_bytes)} over",
            "help": "The fullest GPU: model states + activations (+ ZeRO-3's gathered layers) + "
            f"the reserve ({RESERVE_PARTS}); the top of its bar.",
        },
        {
            "label": "Verdict",
            "value": "fits" if ok else "OOM",
            "help": f"{gpu}: {b(capacity_bytes)} of HBM",
        },
        {
            "label": "States / GPU",
            "value": b(states),
            "help": "Parameters + gradients + optimizer states on the fullest GPU.",
        },
        {"label": "Activations / GPU", "value": b(chosen.activations_bytes)},
        {
            "label": "Whole model",
            "value": b(whole),
            "help": f"All model states: {num_params:,} parameters × {RECIPES[recipe].label}",
        },
    ]


def is_moe(model: str) -> bool:
    """A preset name of a mixture-of-experts model (the EP slider applies)."""
    return model in MOE_MODEL_PRESETS


def run_caption(
    dp: int, tp: int, pp: int, num_params: int, recipe: str, units: str = "binary", cp=1, ep=1,
    active: int | None = None,
) -> str:  # fmt: skip
    """The line under the headline metrics: GPU count, model size, recipe and the unit
    convention; an MoE adds its active parameters and how EP splits its experts.
    """
    moe = (
        f" ({format_count(active)} active per token; experts ÷ EP {ep} × TP {tp}, their ZeRO "
        f"over DP × CP / EP = {dp * cp // ep:,})"
        if active is not None and active != num_params
        else ""
    )
    return (
        f"{dp * tp * pp * cp:,} GPUs = DP {dp} × TP {tp} × PP {pp}"
        + (f" × CP {cp}" if cp > 1 else "")
        + f" · {format_count(num_params)} parameters{moe} · "
        f"recipe **{RECIPES[recipe].label}** · sizes in "
        f"{'GiB (2³⁰ B)' if units == 'binary' else 'GB (10⁹ B)'} (switch in the sidebar) · hover a "
        "bar "
        "for its formula and exact bytes."
    )


def fits_rows(
    rows: list[FitRow], dp: int, tp: int, pp: int, max_micro_batch: int = 4096, cp: int = 1
) -> list[dict]:
    """The what-fits table: per ZeRO stage, the fewest GPUs and the largest micro-batch that fit."""
    out = []
    for r in rows:
        gpus = (
            f"{r.min_gpus:,} = DP {r.min_dp:,} × TP {tp} × PP {pp}" + f" × CP {cp}" * (cp > 1)
            if r.min_dp
            else "none (DP does not help)"
            if r.zero_stage == 0
            else "none up to DP 65,536"
        )
        mb = r.max_micro_batch
        mb = (
            "— (no layer shape)"
            if mb is None
            else "none: 1 does not fit"
            if mb == 0
            else f"≥ {mb:,}"
            if mb >= max_micro_batch
            else f"{mb:,}"
        )
        out.append(
            {
                "ZeRO stage": ZERO_STAGES[r.zero_stage].label,
                "PyTorch": pytorch_name(r.zero_stage),
                "fewest GPUs that fit": gpus,
                f"largest micro-batch at DP={dp:,}": mb,
            }
        )
    return out


def activation_formula(
    recompute: str, flash_attention: bool, sequence_parallel: bool, block=None, hidden=None
) -> str:
    """LaTeX of the stored bytes per layer the core applies: Korthikanti et al. (2022) Table 2
    for the GPT block (block None), the same terms with the block's own widths otherwise.
    """
    if recompute == "full":
        return r"2\,sbh/t" if sequence_parallel else r"2\,sbh"
    whole, split, score = (10, 24, 5) if block is None else block.coefficients(hidden)
    if block is not None:
        whole, split = whole / hidden, split / hidden
    score_tex = (
        rf" + \frac{{{score:g}as}}{{ht}}" if recompute == "none" and not flash_attention else ""
    )
    return (
        rf"sbh\left(\frac{{{whole + split:g}}}{{t}}{score_tex}\right)"
        if sequence_parallel
        else rf"sbh\left({whole:g} + \frac{{{split:g}}}{{t}}{score_tex}\right)"
    )
