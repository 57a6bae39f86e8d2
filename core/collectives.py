"""Collectives: real-data simulators (ring and the comparison algorithms) and their cost model.

The stable names other pages and outside users import; implementations live in
core.collectives_trace (trace types), core.collectives_ring, core.allreduce_algorithms,
core.collective_cost and core.collectives_busbw.
"""
from core.allreduce_algorithms import (ALGORITHMS, AllReduceAlgorithm, BytesScan,
                                       halving_doubling_all_reduce, hierarchical_all_reduce,
                                       naive_all_reduce, recursive_doubling_all_reduce,
                                       scan_bytes_per_rank, simulate_all_reduce, tree_all_reduce)
from core.collective_cost import (ALL_REDUCE_MODELS, CostBreakdown, HierarchicalCost,
                                  all_gather_time_s, all_reduce_coefficients, all_reduce_cost,
                                  all_reduce_time_s, crossover_message_bytes,
                                  flat_ring_all_reduce_time_s, flat_ring_bottleneck_bytes_per_s,
                                  hierarchical_all_reduce_cost, hierarchical_all_reduce_time_s,
                                  reduce_scatter_time_s, step_times_s)
from core.collectives_busbw import (BUS_BANDWIDTH_FACTORS, algbw_bytes_per_s, bus_bandwidth_factor,
                                    busbw_bytes_per_s)
from core.collectives_ring import (RING_INDEXING, example_inputs, ring_all_gather, ring_all_reduce,
                                   ring_reduce_scatter, shard)
from core.collectives_trace import (MAX_STATE_ELEMENTS, MAX_TRACKED_RANKS, CollectiveTrace, Step,
                                    Transfer, chunk_offsets)

__all__ = [
    "ALGORITHMS", "ALL_REDUCE_MODELS", "BUS_BANDWIDTH_FACTORS", "MAX_STATE_ELEMENTS",
    "MAX_TRACKED_RANKS", "RING_INDEXING", "example_inputs", "AllReduceAlgorithm", "BytesScan", "CollectiveTrace", "CostBreakdown",
    "HierarchicalCost", "Step", "Transfer", "algbw_bytes_per_s", "all_gather_time_s",
    "all_reduce_coefficients", "all_reduce_cost", "all_reduce_time_s", "bus_bandwidth_factor",
    "busbw_bytes_per_s", "chunk_offsets", "crossover_message_bytes", "flat_ring_all_reduce_time_s",
    "flat_ring_bottleneck_bytes_per_s", "halving_doubling_all_reduce", "hierarchical_all_reduce",
    "hierarchical_all_reduce_cost", "hierarchical_all_reduce_time_s", "naive_all_reduce",
    "recursive_doubling_all_reduce", "reduce_scatter_time_s", "ring_all_gather", "ring_all_reduce",
    "ring_reduce_scatter", "scan_bytes_per_rank", "shard", "simulate_all_reduce", "step_times_s",
    "tree_all_reduce",
]
