"""Words of the memory page: question, captions, the sizing questions' links, takeaway and
self-check (strings; no Streamlit here).
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from core import memory as cm
from core.model import preset
from core.parallel import ZERO_STAGES
from core.training import RECOMPUTE_MODES
from core.units import bytes_in, format_bytes, gib_or_gb

QUESTION = (
    "Will this model train on these GPUs, and what does each choice — DP, TP, "
    "PP, ZeRO stage, recompute, micro-batch — save?"
)
ZERO = {"0": "0", "1": "1", "2": "2", "3": "3", "hsdp": "HSDP"}  # URL value zero=3 etc.
RC = {m: m for m in RECOMPUTE_MODES}
HELP = {
    "zero": "HSDP = HYBRID_SHARD: ZeRO-3 inside an 8-GPU node (8/TP ranks), replicated across.",
    "reserve": "Temporaries, CUDA context, communication buffers, allocator fragmentation.",
    "flash": "Never stores the s² scores.",
    "cmp": "A second layout of the same run, side by side.",
}
ZERO_CAPTION = "ZeRO stage ↔ PyTorch: " + " · ".join(
    [f"0 = {ZERO_STAGES[0].label} / FSDP {ZERO_STAGES[0].pytorch}"]
    + [f"{z} = {ZERO_STAGES[z].pytorch}" for z in (1, 2, 3)]
    + ["HSDP = HYBRID_SHARD (ZeRO-3 inside a node, replicated across nodes)"]
)
SHAPE = [
    ("Layers", "L", 32),
    ("Hidden", "h", 4096),
    ("Heads", "a", 32),
    ("KV heads", "kv", 32),
    ("FFN", "f", 11008),
    ("Vocab", "V", 32000),
]  # custom shape defaults: Llama-2 7B
SEEDS = [
    {"model": "N parameters", "n": 70, "dp": 1, "zero": 0},  # the sizing questions' settings
    {"model": "Llama-2 70B", "dp": 16, "zero": 3, "rc": "full"},
    {"model": "Llama-2 13B", "dp": 8, "zero": 3},
]
STAGES_CAPTION = (
    "1F1B: stage r holds PP − r micro-batches in flight, so the first stage stores the most "
    "activations; the last also holds the output head and the logits."
)


def compare_caption(query: dict[str, str]) -> str:
    """What B shares with A, and a link (the page's URL now, B set to TP 2 × DP 4) to try."""
    here = {**query, "cmp": "true", "b_dp": "4", "b_tp": "2", "b_zero": "1"}
    return (
        "B shares A's model, recipe, GPU, reserve, sequence length and flash attention: one run, "
        "two layouts. B starts at DP 8 with ZeRO-1 (A's default layout, the other ZeRO stage): "
        "no weight all-gathers, but every GPU keeps whole weights and gradients. [Try B = TP 2 × "
        f"DP 4, ZeRO-1 with this A](memory?{urlencode(here, quote_via=quote)}): TP halves the "
        "weights per GPU instead."
    )


def single_stage(label: str) -> str:
    return (
        f"PP = 1: a single stage, the {label} bar above. Set PP > 1 to split the layers into "
        "stages."
    )


def sizing_lines(questions: list[tuple[str, str]], settings: dict[str, str]) -> list[str]:
    """Each sizing question with its computed answer and a link opening its setting; `settings`
    are the URL parameters of the global settings (units, presenter mode) the link keeps.
    """
    return [
        f"**{question}** {answer} [Open this setting "
        f"↗](memory?{urlencode(q | settings, quote_via=quote)})"
        for (question, answer), q in zip(questions, SEEDS)
    ]


def takeaway(out: dict, units: str) -> str:
    """What sharding saves here, and what it cannot: the activations."""

    def b(x):
        return format_bytes(x, units)

    return (
        f"Sharding cuts the model states per GPU from {b(out['states'][0])} (DDP) to "
        f"{b(out['states'][3])} (ZeRO-3 over {out['nd']:,}), and TP × PP divide them too. The "
        f"{b(out['ch'].activations_bytes)} of activations do not shrink with DP at all: only TP "
        "+ sequence parallel, PP, recompute, flash attention and a smaller micro-batch cut them."
    )


def self_check(units: str) -> dict:
    """Model states per GPU of Llama-2 7B under ZeRO-2 at DP 8 (common.self_check's arguments)."""
    n7, (unit, _) = preset("Llama-2 7B").num_params, gib_or_gb(units)
    return dict(
        question=f"Llama-2 7B ({n7:,} parameters), 16 B/param mixed Adam, ZeRO-2 at DP = 8: model "
        "states per GPU",
        answer=bytes_in(cm.model_state_bytes_per_gpu(n7, 8, 2).total_bytes, unit),
        key="q",
        unit=unit,
        explanation="2Ψ + 14Ψ/8 = 3.75 Ψ bytes.",
    )
