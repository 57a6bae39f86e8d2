"""Profiler traces: import a PyTorch (Kineto) trace into per-rank states, fit a plan to it, export timelines."""
from core.traces.importer import (COMM, COMM_ONLY, COMPUTE, CPU_OP, IDLE, KERNEL, MAX_BYTES, MAX_EVENTS, MAX_SEGMENTS, MAX_UNCOMPRESSED_BYTES, MB, OTHER, OVERLAP, RankTime, STEP, TRIM, Trace, TraceAnalysis, analyze, load_trace, runs, union)
from core.traces.export import (CAT, FittedRates, PlanTimeline, SLICE, analysis_table, dp_plan, dp_timeline, fit_rates, meta_events, plan_cluster, slice_event, timeline_trace)

__all__ = ["CAT", "COMM", "COMM_ONLY", "COMPUTE", "CPU_OP", "FittedRates", "IDLE", "KERNEL", "MAX_BYTES", "MAX_EVENTS", "MAX_SEGMENTS", "MAX_UNCOMPRESSED_BYTES", "MB", "OTHER", "OVERLAP", "PlanTimeline", "RankTime", "SLICE", "STEP", "TRIM", "Trace", "TraceAnalysis", "analysis_table", "analyze", "dp_plan", "dp_timeline", "fit_rates", "load_trace", "meta_events", "plan_cluster", "runs", "slice_event", "timeline_trace", "union"]
