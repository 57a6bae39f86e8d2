"""Collectives: real-data simulators (the ring and the algorithms it is compared with), the
alpha-beta-gamma cost model, nccl-tests bus bandwidth, A-vs-B comparison.
"""

from core.collectives.algorithms import (
    ALGORITHMS,
    AllReduceAlgorithm,
    BytesScan,
    scan_bytes_per_rank,
    simulate_all_reduce,
)
from core.collectives.busbw import (
    BUS_BANDWIDTH_FACTORS,
    algbw_bytes_per_s,
    bus_bandwidth_factor,
    busbw_bytes_per_s,
    check_nonnegative,
    check_positive,
    check_ranks,
)
from core.collectives.butterfly import halving_doubling_all_reduce, recursive_doubling_all_reduce
from core.collectives.compare import (
    AlgorithmRun,
    cluster_step_times_s,
    run_algorithm,
    timing_elements,
)
from core.collectives.cost import (
    ALL_REDUCE_MODELS,
    CostBreakdown,
    all_gather_time_s,
    all_reduce_coefficients,
    all_reduce_cost,
    all_reduce_time_s,
    crossover_message_bytes,
    reduce_scatter_time_s,
    step_times_s,
)
from core.collectives.hierarchical import hierarchical_all_reduce
from core.collectives.nccl import (
    ALGORITHMS_BY_OP,
    PROTOCOLS,
    Choice,
    Option,
    bus_bandwidths_bytes_per_s,
    nccl_choice,
    nccl_options,
    nccl_time_s,
)
from core.collectives.picks import cluster_of, nccl_cluster
from core.collectives.ring import (
    RING_INDEXING,
    example_inputs,
    ring_all_gather,
    ring_all_reduce,
    ring_reduce_scatter,
    shard,
)
from core.collectives.rooted import naive_all_reduce, tree_all_reduce
from core.collectives.trace import (
    MAX_STATE_ELEMENTS,
    MAX_TRACKED_RANKS,
    CollectiveTrace,
    Executor,
    Step,
    Transfer,
    as_rank_inputs,
    chunk_offsets,
    initial_masks,
    keeps_states,
    make_step,
    make_trace,
)
from core.collectives.two_tier import (
    HierarchicalCost,
    flat_ring_all_reduce_time_s,
    flat_ring_bottleneck_bytes_per_s,
    hierarchical_all_reduce_cost,
    hierarchical_all_reduce_time_s,
)

__all__ = [
    "ALGORITHMS",
    "ALGORITHMS_BY_OP",
    "ALL_REDUCE_MODELS",
    "AlgorithmRun",
    "AllReduceAlgorithm",
    "BUS_BANDWIDTH_FACTORS",
    "BytesScan",
    "Choice",
    "CollectiveTrace",
    "CostBreakdown",
    "Executor",
    "HierarchicalCost",
    "MAX_STATE_ELEMENTS",
    "MAX_TRACKED_RANKS",
    "Option",
    "PROTOCOLS",
    "RING_INDEXING",
    "Step",
    "Transfer",
    "algbw_bytes_per_s",
    "all_gather_time_s",
    "all_reduce_coefficients",
    "all_reduce_cost",
    "all_reduce_time_s",
    "as_rank_inputs",
    "bus_bandwidth_factor",
    "bus_bandwidths_bytes_per_s",
    "busbw_bytes_per_s",
    "check_nonnegative",
    "check_positive",
    "check_ranks",
    "chunk_offsets",
    "cluster_of",
    "cluster_step_times_s",
    "crossover_message_bytes",
    "example_inputs",
    "flat_ring_all_reduce_time_s",
    "flat_ring_bottleneck_bytes_per_s",
    "halving_doubling_all_reduce",
    "hierarchical_all_reduce",
    "hierarchical_all_reduce_cost",
    "hierarchical_all_reduce_time_s",
    "initial_masks",
    "keeps_states",
    "make_step",
    "make_trace",
    "naive_all_reduce",
    "nccl_choice",
    "nccl_cluster",
    "nccl_options",
    "nccl_time_s",
    "recursive_doubling_all_reduce",
    "reduce_scatter_time_s",
    "ring_all_gather",
    "ring_all_reduce",
    "ring_reduce_scatter",
    "run_algorithm",
    "scan_bytes_per_rank",
    "shard",
    "simulate_all_reduce",
    "step_times_s",
    "timing_elements",
    "tree_all_reduce",
]

# All-to-all (issue 17: MoE dispatch, Ulysses); appended to keep the list above untouched.
from core.collectives.all_to_all import (  # noqa: E402
    AllToAllResult,
    TwoTierAllToAll,
    all_to_all,
    all_to_all_busbw_bytes_per_s,
    all_to_all_time_s,
    two_tier_all_to_all,
)

__all__ += [
    "AllToAllResult",
    "TwoTierAllToAll",
    "all_to_all",
    "all_to_all_busbw_bytes_per_s",
    "all_to_all_time_s",
    "two_tier_all_to_all",
]
