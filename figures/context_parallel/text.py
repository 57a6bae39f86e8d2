"""The context-parallel page's words: captions, metric rows, the guided walk, takeaway, "How this
is computed" and self-checks (plain strings; numbers come from core.context_parallel)."""

from __future__ import annotations

from core import context_parallel as cp
from core.model import preset
from core.units import bytes_in, format_bytes, format_count

QUESTION = (
    "How do C GPUs share one long sequence's attention exactly, and what does it cost in "
    "balance, traffic and memory?"
)
TOY_CAPTION = (
    "Real numbers: one attention head (d = 8) over S = 12·C tokens, Q/K/V cut by sequence. Each "
    "rank keeps its queries; the K/V blocks travel round the ring (step t: the block of rank "
    "r − t) and each rank folds every block into a running softmax (max m, denominator l, "
    "numerator o). The result is compared with softmax(QKᵀ/√d)V on one device. Ulysses runs on "
    "the same tokens with 16 heads of d = 4: one all-to-all re-cuts Q, K, V by heads, each rank "
    "attends over the whole sequence for its heads, a second all-to-all returns the output."
)
TOY_CONTROLS = (
    "C, the chunks and the mask drive sections 1 and 2 (real data); the model, GPU, S, TP, PP "
    "and the long-context CP drive section 3."
)
LAYOUTS = {"contiguous": "contiguous", "zigzag": "zig-zag"}

TAKEAWAY = (
    "Ring attention is exact: the online softmax rebuilds full attention from blocks. With a "
    "causal mask, contiguous chunks leave early ranks idle while late ranks work (about half "
    "the time lost for large C); zig-zag pairs an early and a late chunk so every step is "
    "equal. Each rank sends C − 1 K/V blocks per layer, hidden behind the block compute once "
    "S/C is large enough (hundreds to thousands of tokens on NVLink, about ten times more on "
    "InfiniBand), and activations per GPU fall by C."
)
# The projected slide's headline (the laptop page keeps the whole lesson above).
TAKEAWAY_SHORT = (
    "Ring attention is exact; zig-zag balances the causal mask; K/V hops hide at large S/C."
)


def takeaway(presenting: bool) -> str:
    """The page's lesson: whole on a laptop, one line on the presenter slide."""
    return TAKEAWAY_SHORT if presenting else TAKEAWAY


def ring_metrics(toy: dict) -> list[dict]:
    r = toy["ring"]
    return [
        dict(label="max |ring − full attention|", value=f"{r.max_abs_error:.1e}", border=True),
        dict(
            label="tokens per rank", value=f"{toy['seq_len'] // r.cp}", help=f"S = {toy['seq_len']}"
        ),
        dict(
            label="K/V blocks sent per rank",
            value=r.hops_per_rank,
            help="C − 1: the last block is used, not passed on",
        ),
        dict(
            label="Ulysses (16 heads): max error",
            value=f"{toy['ulysses'].max_abs_error:.1e}" if toy["ulysses"] else "impossible",
            help=toy["ulysses_error"] or "the same tokens re-cut by heads with two all-to-alls",
        ),
        dict(
            label="idle share, contiguous → zig-zag",
            value=f"{toy['balance']['contiguous'].idle_share:.0%} → "
            f"{toy['balance']['zigzag'].idle_share:.0%}",
        ),
    ]


def long_metrics(run: dict, units: str) -> list[dict]:
    t = run["traffic"]
    return [
        dict(label="one K/V block (B_kv)", value=format_bytes(t.kv_block_bytes, units)),
        dict(label="ring: sent per rank per layer", value=format_bytes(t.ring_bytes, units)),
        dict(
            label="Ulysses: sent per rank per layer",
            value="impossible" if t.ulysses_error else format_bytes(t.ulysses_bytes, units),
            help=t.ulysses_error or None,
        ),
        dict(
            label="memory per GPU",
            value=format_bytes(run["memory"].total_bytes, units),
            delta="fits" if run["memory"].total_bytes <= run["hbm"] else "out of memory",
            delta_color="normal" if run["memory"].total_bytes <= run["hbm"] else "inverse",
        ),
    ]


def how_computed(toy: dict, run: dict | None) -> list[tuple[str, str]]:
    r = toy["ring"]
    out = [
        ("markdown", "**Online softmax** — for each K/V block j, per query row:"),
        (
            "latex",
            r"m' = \max(m, \max_k z_{jk}),\quad l' = e^{m-m'}l + \sum_k e^{z_{jk}-m'},"
            r"\quad o' = e^{m-m'}o + \sum_k e^{z_{jk}-m'}v_k,\quad O = o/l",
        ),
        (
            "caption",
            f"measured: max |ring − full| = {r.max_abs_error:.1e} over {r.output.size} outputs.",
        ),
        (
            "markdown",
            "**Causal work** — pairs (i, j) with j ≤ i per block; contiguous rank r "
            "does n(n+1)/2 + r·n² (n = S/C); zig-zag m² + m(m+1) at step 0 and 2m² "
            "after (m = S/2C) on every rank.",
        ),
        (
            "markdown",
            "**Traffic and overlap** — B_kv = 2·b·(S/C)·(h_kv/t)·d·β; ring sends "
            "(C − 1)·B_kv; Ulysses 2·(C−1)/C·b·(S/C)·(h_q+h_kv)/t·d·β. Hidden when "
            "4·b·(S/C)²·(h_q/t)·d / F (half for a balanced causal step) ≥ B_kv / B.",
        ),
    ]
    if run:
        out.append(
            (
                "caption",
                f"measured: B_kv = {format_count(run['traffic'].kv_block_bytes)}B; "
                f"hidden from S/C = {run['local']['NVLink 4']:,.0f} (NVLink 4), "
                f"{run['local']['InfiniBand NDR']:,.0f} (InfiniBand NDR).",
            )
        )
    out.append(
        (
            "markdown",
            "**Memory** — the model block's stored activations (Korthikanti et al. 2022, per block "
            "type as on the Memory page) with "
            "s → S/C (CP cuts every activation by the sequence), ⌈L/PP⌉ layers, "
            "PP micro-batches in flight (1F1B); model states 2 + 2 bytes per "
            "parameter over TP·PP, 12 optimizer bytes also over DP·CP.",
        )
    )
    return out


def self_checks(units: str) -> list[dict]:
    """Three questions; byte sizes in the chosen memory units (MiB or MB)."""
    unit = "MiB" if units == "binary" else "MB"
    big = cp.cp_traffic(preset("Llama-3.1 405B"), seq_len=131072, cp=16, tp=8)
    zz = cp.token_owner_positions(16, 4, "zigzag")[1]
    return [
        dict(
            question="Ring attention over C = 8 ranks: how many K/V blocks does each rank send "
            "per layer in the forward pass?",
            answer=7,
            key="q1",
            rel_tol=0.0,
            explanation="C − 1: the last block a rank receives is used and not passed on.",
        ),
        dict(
            question="Llama-3.1 405B at S = 131,072 with CP = 16 and TP = 8 (1 K/V head per rank, "
            "d = 128, bf16): how big is one K/V block",
            answer=bytes_in(big.kv_block_bytes, unit),
            key="q2",
            unit=unit,
            explanation="2 (K and V) × 8,192 tokens × 1 head × 128 × 2 bytes = 4 MiB = 4.19 MB.",
        ),
        dict(
            question="Zig-zag with C = 4 cuts S into 8 chunks. Rank 1 holds chunk 1 and which "
            "other chunk (its index)?",
            answer=int(zz[-1]) // 2,
            key="q3",
            rel_tol=0.0,
            explanation="Chunk 2C − 1 − r = 8 − 1 − 1 = 6.",
        ),
    ]
