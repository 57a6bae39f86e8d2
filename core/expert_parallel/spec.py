"""Mixture-of-experts models as ModelSpecs: every parameter counted tensor by tensor from the
published config (core.expert_parallel.models), split over TP, PP and EP the way Megatron-Core
splits them, so core.memory can size an MoE run exactly.

Splits (`NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md`, "parallel folding"): norms
and the router weight are whole on every TP rank (TopKRouter is not tensor-parallel); attention,
dense MLPs and shared experts are split over TP; each MoE layer's routed experts are split over
EP (whole experts) x ETP (each expert's FFN columns; ETP = TP here), as DeepSeek-V3 (arXiv:
2412.19437 §3.4) and Mixtral deployments do. Activations: a token passes through K routed experts
plus the shared ones, so the MLP activation width is (K + shared) x expert FFN (Megatron-Core's
MoE layer keeps each routed copy's inputs for the backward pass); the router logits and the
all-to-all buffers are not counted (E/h of a token's bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from core.checks import check_choice, check_divides
from core.expert_parallel.models import MOE_PRESETS, MoeConfig, counts, layer_tensors
from core.model import MODEL_PRESETS, ModelSpec

# Tensors kept whole on every TP rank: the norms (incl. MLA's latent and Qwen3's q/k norms) and
# the router.
REPLICATED = (
    "input_layernorm",
    "post_attention_layernorm",
    "q_a_layernorm",
    "kv_a_layernorm",
    "q_norm",
    "k_norm",
    "router",
)


@dataclass(frozen=True, kw_only=True, eq=False)
class MoeSpec(ModelSpec):
    """An MoE decoder: the ModelSpec fields describe one token's path (for activations and FLOPs),
    `config` fixes every tensor; parameter counts come from the tensors, never from the fields."""

    config: MoeConfig

    @property
    def num_experts(self) -> int:
        return self.config.experts

    @property
    def top_k(self) -> int:
        return self.config.top_k

    @property
    def expert_ffn_hidden_size(self) -> int:
        return self.config.expert_ffn

    @property
    def shared_experts(self) -> int:
        return self.config.shared_experts

    @property
    def dense_layers(self) -> int:
        """The first layers that keep a dense MLP (DeepSeek-V3: 3)."""
        return self.config.dense_layers

    @cached_property
    def _counts(self):
        return counts(self.config)

    @property
    def num_params(self) -> int:
        return self._counts.total

    @property
    def active_params(self) -> int:
        """Parameters one token uses: all but the E − K routed experts it skips in each MoE
        layer."""
        return self._counts.active

    @cached_property
    def _layers(self) -> tuple[tuple[int, int, int], ...]:
        """(kept whole over TP, split over TP, routed experts) elements of each layer."""
        out = []
        for i in range(self.num_layers):
            t = layer_tensors(self.config, i)
            whole = sum(v for k, v in t.items() if k in REPLICATED)
            routed = t.get("routed_experts", 0)
            out.append((whole, sum(t.values()) - whole - routed, routed))
        return tuple(out)

    def parts(self) -> dict[str, int]:
        """Exact parameter count per part; values sum to num_params."""
        w, s, r = (sum(col) for col in zip(*self._layers))
        return {
            "embedding": self.word_embedding_params,
            "attention + dense / shared MLPs": s,
            "norms + routers": w,
            "routed experts": r,
            "final norm": self.final_norm_params,
            "output head": self.output_params,
        }

    def _stage(self, pp: int, stage: int) -> tuple[tuple[int, int, int], ...]:
        n = self.num_layers // pp
        return self._layers[stage * n : (stage + 1) * n]

    def layer_params_per_gpu(self, tp: int, ep: int = 1) -> int:
        """The largest layer's parameters on one TP (and EP) rank: what FSDP all-gathers."""
        return max(w + -(-s // tp) + r // (ep * tp) for w, s, r in self._layers)

    def params_per_gpu(self, tp: int, pp: int, stage: int) -> int:
        """Dense (non-routed-expert) parameters on one GPU of a pipeline stage."""
        n = sum(w + -(-s // tp) for w, s, _ in self._stage(pp, stage))
        vocab = -(-self.word_embedding_params // tp)  # vocab-parallel embedding and head
        n += vocab if stage == 0 else 0
        return n + (self.final_norm_params + vocab if stage == pp - 1 else 0)

    def expert_params_per_gpu(self, tp: int, pp: int, stage: int, ep: int) -> int:
        """Routed-expert parameters on one GPU of a stage: its E / EP experts' 1 / ETP slices."""
        return sum(r for *_, r in self._stage(pp, stage)) // (ep * tp)

    def check_split(self, tp: int, pp: int, num_chunks: int = 1) -> None:
        """Raise unless TP splits heads and every FFN evenly and PP x v splits the layers."""
        super().check_split(tp, pp, num_chunks)  # heads, K/V heads, (K + shared) x FFN, layers
        c = self.config
        for ffn, what in ((c.expert_ffn, "expert FFN columns"), (c.dense_ffn, "dense FFN columns")):
            if ffn:
                check_divides("TP", tp, ffn, what, "each TP (= ETP) rank must own an equal slice")

    @property
    def matmul_params(self) -> int:
        """Weights one token multiplies by: its active parameters less the embedding and norms."""
        c = self.config
        whole = sum(w for w, _, _ in self._layers)  # norms and routers
        norms = whole - self._counts.moe_layers * c.experts * (c.hidden + c.router_bias)
        return self.active_params - self.word_embedding_params - norms - self.final_norm_params


def moe_spec(cfg: MoeConfig) -> MoeSpec:
    """The ModelSpec of a published MoE config (SwiGLU experts, RMSNorm, untied head)."""
    return MoeSpec(
        name=cfg.name,
        num_layers=cfg.layers,
        hidden_size=cfg.hidden,
        num_heads=cfg.heads,
        num_kv_heads=cfg.kv_heads,
        head_dim=cfg.head_dim,
        ffn_hidden_size=(cfg.top_k + cfg.shared_experts) * cfg.expert_ffn,
        gated_mlp=True,
        vocab_size=cfg.vocab,
        tied_embeddings=False,
        source=cfg.source,
        config=cfg,
    )


MOE_MODEL_PRESETS: dict[str, MoeSpec] = {n: moe_spec(c) for n, c in MOE_PRESETS.items()}
ALL_PRESETS: dict[str, ModelSpec] = MODEL_PRESETS | MOE_MODEL_PRESETS


def any_preset(name: str) -> ModelSpec:
    """A dense or MoE preset by name, with a clear error for unknown names."""
    return ALL_PRESETS[check_choice("model", name, ALL_PRESETS)]
