"""What context parallelism sends, and when it hides behind compute.

Per layer and rank, forward (docs/notes/cp_ep.md works each one out):
- ring (P2P): (C − 1) K/V blocks of B_kv = 2 b (S/C) (h_kv/t) d β bytes (arXiv:2310.01889
  Algorithm 1; `NVIDIA/TransformerEngine
  transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py` sends only
  while step < C − 1); the Llama 3 all-gather moves the same bytes, unhidden;
- Ulysses: two all-to-alls, Q/K/V in and O out: 2 (C − 1)/C · b (S/C) (h_q + h_kv)/t · d β
  (Jacobs et al. 2023, arXiv:2309.14509 §3; it needs C to divide the heads of every TP rank, K/V
  heads included under GQA).
Overlap (arXiv:2310.01889 §3 "Arithmetic intensity"): a step's block attention, 4 b s_c² h_q d
FLOPs, must outlast the hop of its K/V block; with a balanced causal mask a step does half a
block, so the threshold doubles.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import check_divides, positive, whole_number
from core.hardware import GpuSpec, LinkSpec
from core.model import ModelSpec


def check_ulysses(cp: int, heads: int, kv_heads: int, tp: int = 1) -> None:
    """ValueError unless C divides both the query and the K/V heads of one TP rank."""
    c, t = whole_number("CP", cp), whole_number("TP", tp)
    check_divides("TP", t, heads, "query heads", "each TP rank must own whole heads")
    check_divides("TP", t, kv_heads, "K/V heads", "each TP rank must own whole K/V heads")
    for what, n in (("query heads", heads // t), ("K/V heads", kv_heads // t)):
        if n % c:
            ok = [d for d in range(1, n + 1) if n % d == 0]
            raise ValueError(
                f"Ulysses with CP={c} needs CP to divide the {n} {what} of each TP rank "
                f"({what} {n * t} / TP {t}): its all-to-all hands every rank whole heads; use "
                f"ring attention, or CP in {{{', '.join(str(d) for d in ok)}}}"
            )


@dataclass(frozen=True, kw_only=True)
class CpTraffic:
    """Forward bytes one rank sends per layer under each scheme (backward about doubles them)."""

    kv_block_bytes: float
    ring_bytes: float
    all_gather_bytes: float
    ulysses_bytes: float
    ulysses_error: str  # "" when Ulysses is possible at this CP


def cp_traffic(
    model: ModelSpec,
    *,
    seq_len: int,
    cp: int,
    tp: int = 1,
    micro_batch: int = 1,
    bytes_per_element: float = 2,
) -> CpTraffic:
    """Ring, all-gather and Ulysses bytes per rank per layer (forward) for one micro-batch."""
    s, c, t, b = (
        whole_number(n, v)
        for n, v in (("seq_len", seq_len), ("CP", cp), ("TP", tp), ("micro_batch", micro_batch))
    )
    beta = positive("bytes_per_element", bytes_per_element, fix="use 2 for bf16")
    d, hq, hkv = model.d_head, model.num_heads / t, model.num_kv_heads / t
    local = s / c
    block = 2 * b * local * hkv * d * beta
    try:
        check_ulysses(c, model.num_heads, model.num_kv_heads, t)
        err = ""
    except ValueError as e:
        err = str(e)
    return CpTraffic(
        kv_block_bytes=block,
        ring_bytes=(c - 1) * block,
        all_gather_bytes=(c - 1) * block,
        ulysses_bytes=2 * (c - 1) / c * b * local * (hq + hkv) * d * beta,
        ulysses_error=err,
    )


@dataclass(frozen=True, kw_only=True)
class OverlapPoint:
    """One ring step on one link: block compute vs the K/V hop."""

    seq_len: int
    compute_s: float
    transfer_s: float

    @property
    def hidden(self) -> bool:
        return self.compute_s >= self.transfer_s


def step_times(
    model: ModelSpec,
    gpu: GpuSpec,
    link: LinkSpec,
    *,
    seq_len: int,
    cp: int,
    tp: int = 1,
    causal: bool = True,
    micro_batch: int = 1,
    bytes_per_element: float = 2,
) -> OverlapPoint:
    """Per ring step: attention on the resident block (half a block when causal and balanced)
    at the GPU's dense peak, and one K/V block over the link (per direction)."""
    tr = cp_traffic(
        model,
        seq_len=seq_len,
        cp=cp,
        tp=tp,
        micro_batch=micro_batch,
        bytes_per_element=bytes_per_element,
    )
    local = seq_len / cp
    flops = 4 * micro_batch * local**2 * (model.num_heads / tp) * model.d_head
    flops *= 0.5 if causal else 1.0
    return OverlapPoint(
        seq_len=seq_len,
        compute_s=flops / gpu.bf16_flops_per_s,
        transfer_s=tr.kv_block_bytes / link.bandwidth_bytes_per_s,
    )


def overlap_threshold_local_tokens(
    model: ModelSpec,
    gpu: GpuSpec,
    link: LinkSpec,
    *,
    causal: bool = True,
    bytes_per_element: float = 2,
) -> float:
    """Smallest tokens per rank s_c whose block compute covers the hop:
    s_c ≥ (F/B) · (β/2) · (h_kv/h_q), doubled for a balanced causal step."""
    ratio = gpu.bf16_flops_per_s / link.bandwidth_bytes_per_s
    s_c = ratio * bytes_per_element / 2 * model.num_kv_heads / model.num_heads
    return s_c * (2 if causal else 1)
