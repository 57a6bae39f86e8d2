"""Words of the memory page: question, captions, the sizing questions' links, takeaway and
self-check (strings; no Streamlit here).
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from core import memory as cm
from core.model import preset
from core.parallel import ZERO_STAGES
from core.training import RECOMPUTE_MODES, RESERVE_FRACTION, RESERVE_PARTS
from core.units import bytes_in, format_bytes, gib_or_gb

QUESTION = (
    "Will this model train on these GPUs, and what does each choice — DP, TP, "
    "PP, ZeRO stage, recompute, micro-batch — save?"
)
ZERO = {"0": "0", "1": "1", "2": "2", "3": "3", "hsdp": "HSDP"}  # URL value zero=3 etc.
RC = {m: m for m in RECOMPUTE_MODES}
RESERVE_PCT = round(100 * RESERVE_FRACTION)  # the one reserve of every page (core.training)
HELP = {
    "zero": "HSDP = HYBRID_SHARD: ZeRO-3 inside an 8-GPU node (8/TP ranks), replicated across.",
    "reserve": f"{RESERVE_PARTS}. {RESERVE_PCT} % is the app's one default: the planner and the "
    "scenarios keep the same.",
    "flash": "Never stores the s² scores.",
    "cmp": "A second layout of the same run, side by side.",
    "dp": "Data-parallel ranks: replicas of the model, each on its own share of the batch. "
    "Keys ← / → halve / double it.",
    "tp": "Tensor-parallel ranks: each layer's weight matrices split across GPUs. Keys ↓ / ↑ "
    "halve / double it.",
    "pp": "Pipeline stages: the layers split into consecutive stages.",
    "cp": "Context parallelism: each rank holds S / CP tokens of every activation and a replica "
    "of the weights; ZeRO shards over DP × CP (Megatron-Core's dp_cp group). Zig-zag ring "
    "attention needs 2·CP to divide the sequence.",
    "ep": "Expert parallelism: each rank holds E / EP of every MoE layer's experts (÷ TP too, "
    "ETP = TP); their ZeRO shards over DP × CP / EP ranks. EP must divide the experts and "
    "DP × CP.",
    "ep_dense": "Off: this model has no experts to split. Pick an MoE model (Mixtral 8x7B, "
    "DeepSeek-V3, Qwen3-30B-A3B, Qwen3-235B-A22B) to use EP.",
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
    "1F1B: stage r holds PP − r micro-batches in flight, each of L/PP layers, so the first stage "
    "stores PP × L/PP = L layers' worth of activations — as many as with no pipeline at all. PP "
    "divides the weights, not the first stage's activations; the interleaved schedule holds "
    "more, L (1 + (PP − 1)/(PP·v)). The last stage also holds the output head and the logits."
)


def pipeline_activations(ch, units: str) -> str:
    """The first and last stage's activations in numbers: the proof that PP does not cut the
    first stage's (ch: the page's MemoryResult).
    """
    first, last = ch.stages[0], ch.stages[-1]
    lay, b = ch.layout, (lambda x: format_bytes(x, units))
    return (
        f"Here (PP = {lay.pp}, {lay.schedule}): stage 0 holds {first.layers_in_flight:g} layers' "
        f"worth of activations, **{b(first.activations_bytes)}**; stage {last.stage} holds "
        f"{last.layers_in_flight:g}, {b(last.activations_bytes)} (with the logits). PP = 1 "
        "would hold all L layers of one micro-batch: the same as stage 0 here. Interleaved 1F1B "
        f"with v = 2 chunks (and ≥ 2·PP micro-batches) holds L (1 + (PP − 1)/(2·PP)) = "
        f"{first.layers_in_flight * (1 + (lay.pp - 1) / (2 * lay.pp)):g} layers' worth on stage 0:"
        " worse."
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


def step_link_note(link: str, gpus: int, nodes: int, per_node: int, layout, batch: int) -> str:
    """The "Draw this step" link and the cluster and batch it assumes (this page has neither)."""
    partial = (
        f" ({gpus:,} is not a multiple of {per_node}: the step page names the mismatch)"
        if gpus % per_node
        else ""
    )
    return (
        f"{link} — on {nodes:,} node(s) × {per_node} GPUs = ⌈{gpus:,} / {per_node}⌉ nodes"
        f"{partial}; global batch = DP {layout.dp} × micro-batch {layout.micro_batch} × "
        f"{batch // (layout.dp * layout.micro_batch)} micro-batches (PP, what this page's 1F1B "
        f"assumes) = {batch:,} sequences."
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


def takeaway(out: dict, units: str, presenting: bool = False) -> str:
    """What sharding saves here, and what it cannot: the activations (one line on the slide)."""

    def b(x):
        return format_bytes(x, units)

    ch = out["ch"]
    first = ch.stages[0]
    if presenting:  # the slide's headline; the chart must fit under it at 1280×720
        return (
            f"ZeRO-3 cuts the model states from {b(out['states'][0])} to {b(out['states'][3])} a "
            f"GPU; the {b(ch.activations_bytes)} of activations need TP, recompute or a smaller "
            "batch."
        )
    return (
        f"Sharding cuts the model states per GPU from {b(out['states'][0])} (DDP) to "
        f"{b(out['states'][3])} (ZeRO-3 over {out['nd']:,}), and TP × PP divide them too. The "
        f"{b(ch.activations_bytes)} of activations do not shrink with DP at all: TP + sequence "
        "parallel, recompute, flash attention and a smaller micro-batch cut them. PP does not cut "
        "them on the first stage: under 1F1B it holds PP micro-batches × L/PP layers = L layers' "
        f"worth (here stage 0: {first.layers_in_flight:g} layers, "
        f"{b(first.activations_bytes)}), and interleaving holds more."
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
