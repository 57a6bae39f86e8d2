"""Tensor parallelism: Megatron column/row and head splits checked against the unsharded layer, and
their communication.
"""

from core.tensor_parallel.attention import (
    attention_backward,
    attention_forward,
    attention_ownership,
    prove_tp_attention,
)
from core.tensor_parallel.comm import (
    TpCommPlan,
    check_model_tp,
    layer_compute_s,
    plans_by_mode,
    tp_comm_plan,
)
from core.tensor_parallel.mlp import (
    gelu,
    gelu_grad,
    mlp_backward,
    mlp_forward,
    mlp_ownership,
    prove_sequence_parallel_mlp,
    prove_tp_mlp,
)
from core.tensor_parallel.network import (
    LINKS_COMPARED,
    TP_DEGREES,
    LayerComm,
    LinkTime,
    TpPoint,
    layer_comm,
    link_comparison,
    tp_sweep,
)
from core.tensor_parallel.proof import REPLICATED, TpProof, check_tp

__all__ = [
    "LINKS_COMPARED",
    "LayerComm",
    "LinkTime",
    "REPLICATED",
    "TP_DEGREES",
    "TpCommPlan",
    "TpPoint",
    "TpProof",
    "attention_backward",
    "attention_forward",
    "attention_ownership",
    "check_model_tp",
    "check_tp",
    "gelu",
    "gelu_grad",
    "layer_comm",
    "layer_compute_s",
    "link_comparison",
    "mlp_backward",
    "mlp_forward",
    "mlp_ownership",
    "plans_by_mode",
    "prove_sequence_parallel_mlp",
    "prove_tp_attention",
    "prove_tp_mlp",
    "tp_comm_plan",
    "tp_sweep",
]
