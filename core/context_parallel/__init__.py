"""Context parallelism: ring attention on real data (online softmax, contiguous vs zig-zag), the
causal load balance, ring vs Ulysses traffic, the overlap condition, activations per GPU.
"""

from core.context_parallel.balance import (
    BalanceResult,
    causal_pairs,
    chunk_grid,
    gantt_blocks,
    ring_balance,
)
from core.context_parallel.memory import CpMemoryPoint, cp_memory, max_seq_len
from core.context_parallel.ring import (
    LAYOUTS,
    RingAttentionResult,
    check_cp,
    example_qkv,
    full_attention,
    ring_attention,
    token_owner_positions,
)
from core.context_parallel.traffic import (
    CpTraffic,
    OverlapPoint,
    check_ulysses,
    cp_traffic,
    overlap_threshold_local_tokens,
    step_times,
)
from core.context_parallel.ulysses import UlyssesResult, ulysses_attention

__all__ = [
    "UlyssesResult",
    "ulysses_attention",
    "LAYOUTS",
    "BalanceResult",
    "CpMemoryPoint",
    "CpTraffic",
    "OverlapPoint",
    "RingAttentionResult",
    "causal_pairs",
    "check_cp",
    "chunk_grid",
    "check_ulysses",
    "cp_memory",
    "cp_traffic",
    "example_qkv",
    "full_attention",
    "gantt_blocks",
    "max_seq_len",
    "overlap_threshold_local_tokens",
    "ring_attention",
    "ring_balance",
    "step_times",
    "token_owner_positions",
]
