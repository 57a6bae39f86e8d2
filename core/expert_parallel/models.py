"""MoE model presets with exact parameter counts from their published configs: every tensor of the
checkpoint listed by shape, totals and active-per-token counts summed from that list.

Configs (docs/notes/cp_ep.md copies the fields): Mixtral-8x7B (`huggingface/transformers
src/transformers/models/mixtral/configuration_mixtral.py`), DeepSeek-V3 (`deepseek-ai/DeepSeek-V3
inference/configs/config_671B.json`; MLA shapes from `DeepseekV3Attention` in
`huggingface/transformers src/transformers/models/deepseek_v3/modular_deepseek_v3.py`),
Qwen3-30B-A3B and Qwen3-235B-A22B (`NVIDIA-NeMo/Megatron-Bridge
src/megatron/bridge/models/qwen/qwen_provider.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import check_choice


@dataclass(frozen=True, kw_only=True)
class MoeConfig:
    """The config fields that fix every tensor's shape (SwiGLU experts, RMSNorm, no biases)."""

    name: str
    hidden: int
    layers: int
    vocab: int
    heads: int
    kv_heads: int
    head_dim: int
    experts: int  # routed experts per MoE layer
    top_k: int
    expert_ffn: int  # intermediate size of one routed expert
    shared_experts: int = 0
    dense_layers: int = 0  # the first layers keep a dense MLP (DeepSeek-V3: 3)
    dense_ffn: int = 0
    qk_norm: bool = False  # Qwen3: RMSNorm(head_dim) on q and k
    mla: dict | None = None  # DeepSeek-V3 multi-head latent attention ranks and head dims
    router_bias: bool = False  # DeepSeek-V3's e_score_correction_bias (balancing, not trained)
    published_total: float = 0.0
    published_active: float = 0.0
    source: str = ""


def _attention(c: MoeConfig) -> dict[str, int]:
    h = c.hidden
    if c.mla:
        q, kv, nope, rope, v = (
            c.mla[k] for k in ("q_lora_rank", "kv_lora_rank", "qk_nope", "qk_rope", "v_head")
        )
        return {
            "q_a_proj": q * h,
            "q_a_layernorm": q,
            "q_b_proj": c.heads * (nope + rope) * q,
            "kv_a_proj_with_mqa": (kv + rope) * h,
            "kv_a_layernorm": kv,
            "kv_b_proj": c.heads * (nope + v) * kv,
            "o_proj": h * c.heads * v,
        }
    out = {
        "q_proj": c.heads * c.head_dim * h,
        "k_proj": c.kv_heads * c.head_dim * h,
        "v_proj": c.kv_heads * c.head_dim * h,
        "o_proj": h * c.heads * c.head_dim,
    }
    if c.qk_norm:
        out |= {"q_norm": c.head_dim, "k_norm": c.head_dim}
    return out


def layer_tensors(c: MoeConfig, layer: int) -> dict[str, int]:
    """Element count of every tensor of one decoder layer (gate, up, down per expert)."""
    h = c.hidden
    out = {"input_layernorm": h, "post_attention_layernorm": h} | _attention(c)
    if layer < c.dense_layers:
        return out | {"mlp.gate_up_down": 3 * h * c.dense_ffn}
    out["router"] = c.experts * h + (c.experts if c.router_bias else 0)
    out["routed_experts"] = c.experts * 3 * h * c.expert_ffn
    if c.shared_experts:
        out["shared_experts"] = 3 * h * c.expert_ffn * c.shared_experts
    return out


def model_tensors(c: MoeConfig) -> dict[str, int]:
    """Every tensor group of the model (embeddings, untied head, final norm, each layer)."""
    out = {"embed_tokens": c.vocab * c.hidden, "lm_head": c.vocab * c.hidden, "norm": c.hidden}
    for i in range(c.layers):
        out |= {f"layers.{i}.{k}": v for k, v in layer_tensors(c, i).items()}
    return out


@dataclass(frozen=True, kw_only=True)
class MoeCounts:
    total: int
    active: int  # per token: all but the E − K experts a token skips in each MoE layer
    routed_expert: int  # routed-expert parameters (what EP shards)
    moe_layers: int

    @property
    def dense(self) -> int:
        """Everything but the routed experts (attention, embeddings, shared experts, routers)."""
        return self.total - self.routed_expert


def counts(c: MoeConfig) -> MoeCounts:
    tensors = model_tensors(c)
    moe_layers = c.layers - c.dense_layers
    per_expert = 3 * c.hidden * c.expert_ffn
    routed = sum(v for k, v in tensors.items() if k.endswith("routed_experts"))
    return MoeCounts(
        total=sum(tensors.values()),
        active=sum(tensors.values()) - moe_layers * (c.experts - c.top_k) * per_expert,
        routed_expert=routed,
        moe_layers=moe_layers,
    )


MOE_PRESETS: dict[str, MoeConfig] = {
    c.name: c
    for c in [
        MoeConfig(
            name="Mixtral 8x7B",
            hidden=4096,
            layers=32,
            vocab=32000,
            heads=32,
            kv_heads=8,
            head_dim=128,
            experts=8,
            top_k=2,
            expert_ffn=14336,
            published_total=46.7e9,
            published_active=12.9e9,
            source="Jiang et al. 2024, arXiv:2401.04088 §2: 47B total, 13B active",
        ),
        MoeConfig(
            name="DeepSeek-V3",
            hidden=7168,
            layers=61,
            vocab=129280,
            heads=128,
            kv_heads=128,
            head_dim=128,
            experts=256,
            top_k=8,
            expert_ffn=2048,
            shared_experts=1,
            dense_layers=3,
            dense_ffn=18432,
            mla=dict(q_lora_rank=1536, kv_lora_rank=512, qk_nope=128, qk_rope=64, v_head=128),
            router_bias=True,
            published_total=671e9,
            published_active=37e9,
            source="DeepSeek-AI 2024, arXiv:2412.19437 §4.2: 671B total, 37B active (main "
            "model; the MTP module adds 14B)",
        ),
        MoeConfig(
            name="Qwen3-30B-A3B",
            hidden=2048,
            layers=48,
            vocab=151936,
            heads=32,
            kv_heads=4,
            head_dim=128,
            experts=128,
            top_k=8,
            expert_ffn=768,
            qk_norm=True,
            published_total=30.5e9,
            published_active=3.3e9,
            source="Qwen3 model card: 30.5B total, 3.3B activated",
        ),
        MoeConfig(
            name="Qwen3-235B-A22B",
            hidden=4096,
            layers=94,
            vocab=151936,
            heads=64,
            kv_heads=4,
            head_dim=128,
            experts=128,
            top_k=8,
            expert_ffn=1536,
            qk_norm=True,
            published_total=235e9,
            published_active=22e9,
            source="Qwen3 technical report, arXiv:2505.09388 Table 2: 235B total, 22B activated",
        ),
    ]
}


def moe_preset(name: str) -> MoeConfig:
    return MOE_PRESETS[check_choice("MoE model", name, MOE_PRESETS)]
