"""Where tensor parallelism's communication goes: counts, bytes and time per layer, and a TP
sweep.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import positive, whole_number
from core.collectives import all_reduce_coefficients
from core.hardware import GpuSpec
from core.model import ModelSpec
from core.tensor_parallel.proof import check_tp


def check_model_tp(model: ModelSpec, tp: int, seq_len: int | None = None) -> None:
    """TP must divide the heads, KV heads and FFN width (and the sequence under SP)."""
    sizes = {
        "attention heads": model.num_heads,
        "KV heads": model.num_kv_heads,
        "FFN columns": model.ffn_hidden_size,
    }
    if seq_len is not None:
        sizes["tokens of seq_len (sequence parallelism shards them)"] = seq_len
    check_tp(tp, **sizes)


@dataclass(frozen=True, kw_only=True)
class TpCommPlan:
    """Collectives of one transformer layer per micro-batch (Shoeybi et al. 2019; Korthikanti
    2022).
    """

    tp: int
    sequence_parallel: bool
    full_recompute: bool
    message_bytes: float  # b·s·h elements × bytes/element: the all-reduced activation
    forward: dict[str, int]  # collective -> count per layer, forward pass
    backward: dict[str, int]  # backward pass (incl. recomputed forward, if any)
    bytes_sent_per_gpu_per_layer: float
    num_layers: int
    num_micro_batches: int
    layer_input_bytes_per_gpu: float  # activation at the layer boundary: b·s·h (÷ t under SP)

    @property
    def collectives_per_layer(self) -> int:
        return sum(self.forward.values()) + sum(self.backward.values())

    @property
    def bytes_sent_per_gpu_per_step(self) -> float:
        return self.bytes_sent_per_gpu_per_layer * self.num_layers * self.num_micro_batches


def tp_comm_plan(
    model: ModelSpec,
    *,
    tp: int,
    micro_batch: int,
    seq_len: int,
    bytes_per_element: int = 2,
    sequence_parallel: bool = False,
    full_recompute: bool = False,
    num_micro_batches: int = 1,
) -> TpCommPlan:
    """Count and size the TP collectives: 2 all-reduces forward (g after attention and MLP) and 2
    backward (f before them); SP turns each into reduce-scatter + all-gather of the same bytes."""
    check_model_tp(model, tp, seq_len if sequence_parallel else None)
    for name, v in (
        ("micro_batch", micro_batch),
        ("seq_len", seq_len),
        ("num_micro_batches", num_micro_batches),
        ("bytes_per_element", bytes_per_element),
    ):
        whole_number(name, v)
    m = float(micro_batch * seq_len * model.hidden_size * bytes_per_element)
    again = 2 if full_recompute else 0  # full recompute re-runs the forward's collectives
    if sequence_parallel:
        fwd = {"all_gather": 2, "reduce_scatter": 2}
        bwd = {"all_gather": 2 + again, "reduce_scatter": 2 + again}
    else:
        fwd, bwd = {"all_reduce": 2}, {"all_reduce": 2 + again}
    # Ring bytes each GPU sends: all-reduce 2(t−1)/t·M; a ring all-reduce is a reduce-scatter plus
    # an
    # all-gather, so each of those sends half of it, (t−1)/t·M.
    ar = all_reduce_coefficients("ring", tp)[1] * m
    per = {"all_reduce": ar, "all_gather": ar / 2, "reduce_scatter": ar / 2}
    sent = sum(per[k] * n for d in (fwd, bwd) for k, n in d.items())
    return TpCommPlan(
        tp=tp,
        sequence_parallel=sequence_parallel,
        full_recompute=full_recompute,
        message_bytes=m,
        forward=fwd,
        backward=bwd,
        bytes_sent_per_gpu_per_layer=sent,
        num_layers=model.num_layers,
        num_micro_batches=num_micro_batches,
        layer_input_bytes_per_gpu=m / (tp if sequence_parallel else 1),
    )


def plans_by_mode(
    model: ModelSpec, *, tp: int, micro_batch: int, seq_len: int, sequence_parallel: bool
) -> dict[bool, TpCommPlan]:
    """{sequence_parallel: plan} for both modes, to compare; raises only if the chosen mode is
    invalid
    (the other is left out when its rule fails, e.g. SP needs TP to divide the sequence)."""
    plans = {}
    for sp in (sequence_parallel, not sequence_parallel):
        try:
            plans[sp] = tp_comm_plan(
                model, tp=tp, micro_batch=micro_batch, seq_len=seq_len, sequence_parallel=sp
            )
        except ValueError:
            if sp == sequence_parallel:
                raise
    return dict(sorted(plans.items()))


def layer_compute_s(
    model: ModelSpec,
    gpu: GpuSpec,
    *,
    tp: int,
    micro_batch: int,
    seq_len: int,
    mfu: float = 0.5,
    full_recompute: bool = False,
) -> float:
    """One layer's forward + backward on one TP rank: layer FLOPs × (3, or 4 with recompute) / t."""
    positive("mfu", mfu, fix="it is a fraction of peak FLOP/s; use e.g. 0.5", hi=1.0)
    fwd = model.layer_forward_flops_per_token(seq_len) / model.num_layers * micro_batch * seq_len
    return fwd * (4 if full_recompute else 3) / tp / (gpu.bf16_flops_per_s * mfu)
