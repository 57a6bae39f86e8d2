"""The tensor-parallel page's words: the toy layer's caption, metric rows, the operator table,
takeaway, "How this is computed" blocks and self-checks (no streamlit).
"""

from __future__ import annotations

from core import tensor_parallel as tc
from core.model import preset
from core.units import bytes_in, format_bytes
from figures.tensor_parallel import how_computed_lines

# One toy layer for the proof and the heatmaps: 24 heads (so TP = 1, 2, 3, 4, 6 and 8 all get whole
# heads) of dimension 1, FFN = 4h, 24 tokens (sequence parallelism splits them too).
TOY = dict(hidden=24, heads=24, ffn=96, tokens=24)

TOY_CAPTION = (
    f"A toy layer: h = {TOY['hidden']}, {TOY['heads']} heads (whole heads for TP = 1, 2, 3, 4, 6, "
    f"8), FFN = {TOY['ffn']}, {TOY['tokens']} tokens. MLP: W1 split by columns, so GeLU runs "
    "locally; W2 by rows, so each GPU holds a partial Y and one all-reduce (g) sums them. "
    "Attention: each GPU owns whole heads (Wq, Wk, Wv by columns, Wo by rows). Partial sums go "
    "through the numpy ring all-reduce simulator."
)

OPERATORS = (
    "| operator | forward | backward | where |\n|---|---|---|---|\n"
    "| **f** | identity (X is already on every GPU) | all-reduce of dX "
    "| before attention and MLP |\n"
    "| **g** | all-reduce of the partial Y | identity | after attention and MLP |\n"
    "| **g**, sequence parallel | all-gather tokens in; reduce-scatter out | reduce-scatter; "
    "all-gather | the same places, same bytes; activations between blocks stay 1/t per GPU |"
)

TAKEAWAY = (
    "Column-then-row splitting makes each GPU's slice independent until one sum: the sharded "
    "layer equals the unsharded one to float rounding. The price is 4 all-reduces of b·s·h bf16 "
    "activations per layer per micro-batch (6 with full recompute), on the critical path and "
    "growing relative to compute as TP rises — affordable on NVLink, not over PCIe or a thin "
    "network. On a DGX-class node the NICs together nearly match NVLink, so what keeps TP inside "
    "is per-message network latency on the critical path and NICs needed by DP and PP."
)

# The presenter slide's headline: the same lesson in two lines at 26 px on a 1280 px screen.
TAKEAWAY_SHORT = (
    "Column-then-row splitting is exact: one all-reduce per block joins the slices. Four per layer "
    "ride the critical path: fine on NVLink, too slow over PCIe or the network."
)


def takeaway(presenting: bool) -> str:
    """The page's lesson: whole on a laptop, two lines on the presenter slide."""
    return TAKEAWAY_SHORT if presenting else TAKEAWAY


def settings_summary(model: str, mb: int, seq: int, gpu: str, nic: str, sp: bool) -> str:
    """The folded layer settings in one line, under their expander."""
    return (
        f"{model.split(' (')[0]} · b = {mb} × s = {seq:,} tokens · {gpu} · {nic} · sequence "
        f"parallel {'on' if sp else 'off'}"
    )


def proof_metrics(fwd: float, bwd: float, tp: int) -> list[dict]:
    """The proof's row: the largest forward and backward differences, and each GPU's share."""
    return [
        dict(label="Forward: max |Y − Y_unsharded|", value=f"{fwd:.1e}", border=True),
        dict(
            label="Backward: max |grad difference|",
            value=f"{bwd:.1e}",
            border=True,
            help="dX and every weight gradient, all ranks' copies.",
        ),
        dict(
            label="Share of each weight per GPU",
            value=f"1/{tp}",
            help="W1, W2, Wq, Wk, Wv, Wo all split t ways.",
        ),
    ]


def comm_metrics(plan: tc.TpCommPlan, sp: bool, units: str) -> list[dict]:
    """Collectives per layer, bytes per collective, and bytes sent per GPU per layer and per
    micro-batch."""
    return [
        dict(
            label="Collectives per layer per micro-batch",
            value=plan.collectives_per_layer,
            help="forward + backward; 6 all-reduces with full recompute (the forward's again)",
        ),
        dict(
            label=f"Bytes per {'RS / AG' if sp else 'all-reduce'} (b·s·h · 2 B bf16)",
            value=format_bytes(plan.message_bytes, units),
            border=True,
        ),
        dict(
            label="Sent per GPU per layer",
            value=format_bytes(plan.bytes_sent_per_gpu_per_layer, units),
        ),
        dict(
            label=f"Per micro-batch ({plan.num_layers} layers)",
            value=format_bytes(plan.bytes_sent_per_gpu_per_step, units),
        ),
    ]


def sweep_note(gpus_per_node: int, nics: int, nic: str, note: str) -> str:
    view = "DGX-class, one NIC per GPU" if nics == gpus_per_node else "thin network"
    return f"With {gpus_per_node} GPUs per node and {nics}× {nic} per node ({view}): {note}"


def how_computed(proof, plan, times, mfu: float, units: str) -> list[tuple[str, str]]:
    """Each formula in its own markdown (its KaTeX render is reused), the measured line after."""
    pairs = how_computed_lines(proof, plan, times, mfu, units)
    return [("markdown", line) for pair in pairs for line in pair]


def self_checks(units: str) -> list[dict]:
    """Bytes per TP all-reduce for Llama-2 7B at s = 4096, and all-reduces per layer per
    micro-batch."""
    unit = "MiB" if units == "binary" else "MB"
    llama = preset("Llama-2 7B")
    msg = tc.tp_comm_plan(llama, tp=1, micro_batch=1, seq_len=4096).message_bytes
    per_layer = tc.tp_comm_plan(llama, tp=2, micro_batch=1, seq_len=4096).collectives_per_layer
    return [
        dict(
            question="Bytes per TP all-reduce for b = 1, s = 4096, h = 4096 (Llama-2 7B) in bf16",
            answer=bytes_in(msg, unit),
            key="q1",
            unit=unit,
            explanation="b·s·h elements × 2 bytes.",
        ),
        dict(
            question="How many TP all-reduces does one layer run per micro-batch (no recompute)?",
            answer=per_layer,
            key="q2",
            rel_tol=0.0,
            explanation="2 forward (g after attention and MLP) + 2 backward (f before them).",
        ),
    ]
