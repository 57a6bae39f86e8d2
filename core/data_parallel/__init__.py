"""Data parallelism: the gradient-averaging proof, bucketed all-reduce scaling, stragglers, the
8-vs-64
scenario.
"""

from core.data_parallel.allreduce import (
    AllReduceKind,
    Pick,
    all_reduce_pick,
    all_reduce_s,
    bottleneck,
)
from core.data_parallel.gradients import (
    DpProof,
    Problem,
    SgdCurves,
    equal_shards,
    loss_and_grad,
    make_problem,
    prove_data_parallel,
    sgd_curves,
    shard_bounds,
    skewed_shards,
)
from core.data_parallel.scaling import (
    DEFAULT_BUCKET_BYTES,
    FIRST_BUCKET_BYTES,
    DpJob,
    DpStep,
    Scaling,
    ScalingCurve,
    bucket_sizes,
    cluster_for,
    dp_step,
    overlap_schedule,
    scaling_curve,
)
from core.data_parallel.scenario import (
    Fix,
    FixEffect,
    SlowerAtScale,
    dgx_cluster,
    fix_effects,
    scenario_cluster,
    scenario_job,
    slower_at_scale,
)
from core.data_parallel.stragglers import (
    StragglerCurve,
    expected_max_std_normal,
    prob_step_slow,
    straggler_curve,
)

__all__ = [
    "AllReduceKind",
    "DEFAULT_BUCKET_BYTES",
    "DpJob",
    "DpProof",
    "DpStep",
    "FIRST_BUCKET_BYTES",
    "Fix",
    "FixEffect",
    "Problem",
    "Scaling",
    "ScalingCurve",
    "SgdCurves",
    "SlowerAtScale",
    "StragglerCurve",
    "Pick",
    "all_reduce_pick",
    "all_reduce_s",
    "bottleneck",
    "bucket_sizes",
    "cluster_for",
    "dp_step",
    "equal_shards",
    "expected_max_std_normal",
    "dgx_cluster",
    "fix_effects",
    "loss_and_grad",
    "make_problem",
    "overlap_schedule",
    "prob_step_slow",
    "prove_data_parallel",
    "scaling_curve",
    "scenario_cluster",
    "scenario_job",
    "sgd_curves",
    "shard_bounds",
    "skewed_shards",
    "slower_at_scale",
    "straggler_curve",
]
