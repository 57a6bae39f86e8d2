"""Decoder-only transformer shapes, exact parameter counts and FLOPs per token."""

from __future__ import annotations

from dataclasses import dataclass

from core.checks import check_choice, check_divides, whole_number


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A decoder-only transformer, GPT-style (LayerNorm, biases, learned positions) or Llama."""

    name: str
    num_layers: int
    hidden_size: int
    num_heads: int
    num_kv_heads: int
    ffn_hidden_size: int
    gated_mlp: bool  # SwiGLU: gate, up and down projections
    vocab_size: int
    tied_embeddings: bool
    head_dim: int | None = None  # None: hidden_size // num_heads
    linear_bias: bool = False  # GPT-2/3 have a bias on every linear layer
    norm: str = "rmsnorm"  # "rmsnorm" (weight only) or "layernorm" (weight + bias)
    learned_positions: int = 0  # rows of a learned position table (GPT-3: 2048); 0 for RoPE
    dropout: bool = False  # GPT as Korthikanti et al. count it; Llama-style blocks have none
    source: str = ""

    def __post_init__(self) -> None:
        for f in ("num_layers", "hidden_size", "num_heads", "num_kv_heads", "ffn_hidden_size"):
            object.__setattr__(self, f, whole_number(f, getattr(self, f)))
        object.__setattr__(self, "vocab_size", whole_number("vocab_size", self.vocab_size))
        if self.head_dim is not None:
            object.__setattr__(self, "head_dim", whole_number("head_dim", self.head_dim))
        elif self.hidden_size % self.num_heads:
            raise ValueError(
                f"hidden_size={self.hidden_size} is not divisible by num_heads="
                f"{self.num_heads}: each head needs a whole head dimension; set "
                "head_dim explicitly or pick a divisor"
            )
        check_divides(
            "num_kv_heads",
            self.num_kv_heads,
            self.num_heads,
            "query heads",
            "GQA shares each KV head among a whole group of query heads",
        )
        check_choice("norm", self.norm, ("rmsnorm", "layernorm"))
        if self.learned_positions < 0:
            raise ValueError(f"learned_positions={self.learned_positions} must be ≥ 0")

    @property
    def d_head(self) -> int:
        return self.head_dim or self.hidden_size // self.num_heads

    @property
    def q_width(self) -> int:
        """Width of all query heads together (a x d_head); equals hidden_size for most models."""
        return self.num_heads * self.d_head

    # --- per-layer parts (docs/notes/memory.md §1) ---
    @property
    def attention_params_per_layer(self) -> int:
        h, q, kv = self.hidden_size, self.q_width, self.num_kv_heads * self.d_head
        bias = (q + 2 * kv + h) if self.linear_bias else 0
        return h * q + 2 * h * kv + q * h + bias  # Wq, Wk, Wv, Wo

    @property
    def mlp_params_per_layer(self) -> int:
        h, f = self.hidden_size, self.ffn_hidden_size
        n_in = 2 if self.gated_mlp else 1  # SwiGLU adds the gate projection
        return (n_in + 1) * h * f + ((n_in * f + h) if self.linear_bias else 0)

    @property
    def norm_params(self) -> int:
        """One norm: weight (+ bias for LayerNorm)."""
        return self.hidden_size * (2 if self.norm == "layernorm" else 1)

    @property
    def norm_params_per_layer(self) -> int:
        return 2 * self.norm_params  # pre-attention and pre-MLP

    @property
    def params_per_layer(self) -> int:
        return (
            self.attention_params_per_layer + self.mlp_params_per_layer + self.norm_params_per_layer
        )

    @property
    def layer_replicated_params(self) -> int:
        """Per-layer params Megatron keeps whole on every TP rank: norms and row-parallel biases."""
        return self.norm_params_per_layer + (2 * self.hidden_size if self.linear_bias else 0)

    @property
    def layer_tp_sharded_params(self) -> int:
        """Per-layer params split over TP ranks: all weight matrices and column-parallel biases."""
        return self.params_per_layer - self.layer_replicated_params

    # --- whole model ---
    @property
    def word_embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    @property
    def position_embedding_params(self) -> int:
        return self.learned_positions * self.hidden_size

    @property
    def embedding_params(self) -> int:
        return self.word_embedding_params + self.position_embedding_params

    @property
    def final_norm_params(self) -> int:
        return self.norm_params

    @property
    def output_params(self) -> int:
        """The LM head's own weights; zero when tied to the word embedding."""
        return 0 if self.tied_embeddings else self.vocab_size * self.hidden_size

    @property
    def num_params(self) -> int:
        return (
            self.embedding_params
            + self.num_layers * self.params_per_layer
            + self.final_norm_params
            + self.output_params
        )

    def parts(self) -> dict[str, int]:
        """Exact parameter count per part; values sum to num_params."""
        L = self.num_layers
        return {
            "embedding": self.embedding_params,
            "attention": L * self.attention_params_per_layer,
            "mlp": L * self.mlp_params_per_layer,
            "layer norms": L * self.norm_params_per_layer,
            "final norm": self.final_norm_params,
            "output head": self.output_params,
        }

    def layer_params_per_gpu(self, tp: int) -> int:
        """One layer's parameters on one TP rank: what FSDP all-gathers per layer."""
        return -(-self.layer_tp_sharded_params // tp) + self.layer_replicated_params

    def params_per_gpu(self, tp: int, pp: int, stage: int) -> int:
        """Parameters on one GPU of a pipeline stage (Megatron: embedding first, norm + head
        last).
        """
        n = self.num_layers // pp * self.layer_params_per_gpu(tp)
        vocab = -(-self.word_embedding_params // tp)  # vocab-parallel, padded to a multiple of tp
        if stage == 0:
            n += vocab + self.position_embedding_params  # the position table is replicated over TP
        if stage == pp - 1:  # tied embeddings with pp > 1: the last stage keeps its own copy
            n += self.final_norm_params + (vocab if not self.tied_embeddings or pp > 1 else 0)
        return n

    def check_split(self, tp: int, pp: int, num_chunks: int = 1) -> None:
        """Raise unless TP splits heads, KV heads and FFN evenly and PP x v splits the layers."""
        check_divides(
            "TP", tp, self.num_heads, "attention heads", "each TP rank must own whole heads"
        )
        check_divides(
            "TP", tp, self.num_kv_heads, "KV heads", "each TP rank must own whole KV-head groups"
        )
        check_divides(
            "TP", tp, self.ffn_hidden_size, "FFN columns", "each TP rank must own an equal slice"
        )
        check_divides(
            "PP" if num_chunks == 1 else "PP x v",
            pp * num_chunks,
            self.num_layers,
            "layers",
            "every pipeline stage (chunk) must hold the same number of layers",
        )

    # --- FLOPs (docs/notes/planner.md §1) ---
    @property
    def matmul_params(self) -> int:
        """Weights used in matrix multiplies per token: layer weights plus the V x h logit layer."""
        h, q, f = self.hidden_size, self.q_width, self.ffn_hidden_size
        kv = self.num_kv_heads * self.d_head
        per_layer = 2 * h * q + 2 * h * kv + (3 if self.gated_mlp else 2) * h * f
        return self.num_layers * per_layer + self.vocab_size * h

    def flops_per_token(self, seq_len: int, full_recompute: bool = False) -> float:
        """Forward + backward FLOPs per token: 6N + 12 L (a d_head) s, N = matmul weights."""
        # For a GPT shape this is Korthikanti's 72 B s l h^2 (1 + s/6h + V/12lh) / (B s); with full
        # recompute the layers run forward twice: Narayanan et al. 2021 Eq. 3, 96 (1 + s/6h +
        # V/16lh).
        seq_len = whole_number("seq_len", seq_len)
        attn = 12 * self.num_layers * self.q_width * seq_len  # QK^T and AV: 4 s a d_h fwd, x3
        flops = 6 * self.matmul_params + attn
        if full_recompute:
            flops += self.layer_forward_flops_per_token(seq_len)
        return float(flops)

    def layer_forward_flops_per_token(self, seq_len: int) -> float:
        """Forward FLOPs per token of all layers (no logits): what full recompute repeats."""
        layer_matmul = self.matmul_params - self.vocab_size * self.hidden_size
        return float(2 * layer_matmul + 4 * self.num_layers * self.q_width * seq_len)

    def attention_core_forward_flops_per_token(self, seq_len: int) -> float:
        """Forward QK^T and AV FLOPs per token: what selective recompute repeats."""
        return float(4 * self.num_layers * self.q_width * seq_len)

    def recompute_flops_fraction(self, seq_len: int, recompute: str) -> float:
        """Extra FLOPs of activation recompute as a fraction of the model FLOPs per token."""
        # Full repeats every layer's forward; selective repeats QK^T and AV (softmax not counted).
        extra = {
            "none": 0.0,
            "selective": self.attention_core_forward_flops_per_token(seq_len),
            "full": self.layer_forward_flops_per_token(seq_len),
        }
        return extra[check_choice("recompute", recompute, extra)] / self.flops_per_token(seq_len)


@dataclass(frozen=True, kw_only=True)
class ParamsOnly:
    """Just a parameter count, for model-states-only questions (no shape, no activations)."""

    num_params: int
    name: str = "custom"

    def __post_init__(self) -> None:
        object.__setattr__(self, "num_params", whole_number("num_params", self.num_params))

    def check_split(self, tp: int, pp: int, num_chunks: int = 1) -> None:
        """Without a shape any split is allowed."""

    def params_per_gpu(self, tp: int, pp: int, stage: int) -> int:
        """Without a shape, TP x PP split the parameters evenly."""
        return -(-self.num_params // (tp * pp))


def gpt_spec(name: str, L: int, h: int, a: int, V: int, s: int, source: str = "") -> ModelSpec:
    """A GPT-2/3 shape: 4h GELU MLP, tied embeddings, biases, LayerNorm, dropout, s positions."""
    return ModelSpec(
        name=name,
        num_layers=L,
        hidden_size=h,
        num_heads=a,
        num_kv_heads=a,
        ffn_hidden_size=4 * h,
        gated_mlp=False,
        vocab_size=V,
        tied_embeddings=True,
        linear_bias=True,
        norm="layernorm",
        learned_positions=s,
        dropout=True,
        source=source,
    )


def _llama(name, L, h, a, g, f, V, repo, tied=False):
    """A Llama-style shape; repo: its Hugging Face repository (the source of its config.json)."""
    return ModelSpec(
        name=name,
        num_layers=L,
        hidden_size=h,
        num_heads=a,
        num_kv_heads=g,
        ffn_hidden_size=f,
        gated_mlp=True,
        vocab_size=V,
        tied_embeddings=tied,
        source=_HF + repo,
    )


_HF = "Hugging Face config.json of "
_NARAYANAN = "Narayanan et al. 2021, Table 1 (145.6B; V = 51,200)"
MODEL_PRESETS: dict[str, ModelSpec] = {
    m.name: m
    for m in [
        gpt_spec("GPT-2 small (124M)", 12, 768, 12, 50257, 1024, _HF + "openai-community/gpt2"),
        gpt_spec("GPT-3 175B", 96, 12288, 96, 50257, 2048, "Brown et al. 2020, Table 2.1 (175.0B)"),
        gpt_spec("Megatron GPT 145.6B (Narayanan 2021)", 80, 12288, 96, 51200, 2048, _NARAYANAN),
        _llama("Llama-2 7B", 32, 4096, 32, 32, 11008, 32000, "meta-llama/Llama-2-7b-hf"),
        _llama("Llama-2 13B", 40, 5120, 40, 40, 13824, 32000, "meta-llama/Llama-2-13b-hf"),
        _llama("Llama-2 70B", 80, 8192, 64, 8, 28672, 32000, "meta-llama/Llama-2-70b-hf"),
        _llama("Llama-3.1 8B", 32, 4096, 32, 8, 14336, 128256, "meta-llama/Llama-3.1-8B"),
        _llama("Llama-3.1 70B", 80, 8192, 64, 8, 28672, 128256, "meta-llama/Llama-3.1-70B"),
        _llama("Llama-3.1 405B", 126, 16384, 128, 8, 53248, 128256, "meta-llama/Llama-3.1-405B"),
        _llama("Llama-3.2 1B", 16, 2048, 32, 8, 8192, 128256, "meta-llama/Llama-3.2-1B", True),
        _llama("Mistral 7B", 32, 4096, 32, 8, 14336, 32000, "mistralai/Mistral-7B-v0.1"),
    ]
}


def preset(name: str) -> ModelSpec:
    """Model preset by name, with a clear error for unknown names."""
    return MODEL_PRESETS[check_choice("model", name, MODEL_PRESETS)]
