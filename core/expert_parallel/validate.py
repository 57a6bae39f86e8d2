"""The rules a DP × TP × PP × CP × EP layout must obey, each as a ValueError naming the rule and
the fix: the degrees multiply to the GPU count; TP divides the heads (and K/V heads); CP divides
the sequence (2·CP chunks for zig-zag); Ulysses needs CP to divide each TP rank's heads, K/V heads
included (`NVIDIA/TransformerEngine
transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py`);
EP divides the experts and, with ETP, the TP × CP × DP ranks of a stage (Megatron-Core folding).
"""

from __future__ import annotations

from core.checks import check_choice, check_divides, whole_number
from core.context_parallel.ring import check_cp  # the modules, not the package: core.memory
from core.context_parallel.traffic import check_ulysses  # imports this one

CP_KINDS = {
    "ring": "ring attention, contiguous chunks",
    "zigzag": "ring attention, zig-zag chunks",
    "ulysses": "Ulysses all-to-all over heads",
}


def check_5d(
    *,
    gpus: int,
    dp: int,
    tp: int,
    pp: int,
    cp: int = 1,
    ep: int = 1,
    etp: int = 1,
    seq_len: int,
    heads: int,
    kv_heads: int,
    layers: int,
    experts: int = 0,
    cp_kind: str = "zigzag",
) -> None:
    """Raise the first broken rule (None when the layout is valid)."""
    deg = {
        n: whole_number(n, v) for n, v in dict(DP=dp, TP=tp, PP=pp, CP=cp, EP=ep, ETP=etp).items()
    }
    check_choice("CP kind", cp_kind, CP_KINDS)
    product = deg["DP"] * deg["TP"] * deg["PP"] * deg["CP"]
    if product != whole_number("gpus", gpus):
        raise ValueError(
            f"DP × TP × PP × CP = {deg['DP']} × {deg['TP']} × {deg['PP']} × {deg['CP']} = "
            f"{product} ≠ {gpus} GPUs: every GPU holds one (DP, TP, PP, CP) coordinate (EP folds "
            f"inside them); change a degree so the product is {gpus}"
        )
    check_divides("TP", deg["TP"], heads, "attention heads", "each TP rank must own whole heads")
    check_divides("TP", deg["TP"], kv_heads, "K/V heads", "each TP rank must own whole K/V heads")
    check_divides("PP", deg["PP"], layers, "layers", "each pipeline stage holds whole layers")
    check_cp(seq_len, deg["CP"], "zigzag" if cp_kind == "zigzag" else "contiguous")
    if cp_kind == "ulysses":
        check_ulysses(deg["CP"], heads, kv_heads, deg["TP"])
    if experts or deg["EP"] > 1:
        if not experts:
            raise ValueError(
                f"EP={deg['EP']} on a dense model: expert parallelism splits experts; "
                "use EP = 1 or an MoE model"
            )
        check_divides(
            "EP", deg["EP"], experts, "experts", "each EP rank owns the same whole experts"
        )
        folded = deg["TP"] * deg["CP"] * deg["DP"]
        if folded % (deg["EP"] * deg["ETP"]):
            raise ValueError(
                f"EP × ETP = {deg['EP'] * deg['ETP']} does not divide TP × CP × DP = {folded}: "
                "the expert layout folds into the same GPUs of a pipeline stage; pick EP × ETP "
                f"among the divisors of {folded}"
            )
