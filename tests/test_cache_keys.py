"""app_pages/common/cache.py: builders keyed on the planner's run and layout by repr hit for
equal runs and miss for runs that differ anywhere, however deep."""

import dataclasses

from app_pages.common.cache import KEYS, cached
from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Efficiency, Training
from figures.planner.run import Run


def _run(**training) -> Run:
    cluster = make_cluster(num_nodes=2, gpus_per_node=8)
    return Run(
        model=preset("Llama-2 7B"),
        cluster=cluster,
        training=Training(global_batch=64, **training),
        sequence_parallel=True,
    )


def test_equal_runs_share_a_key_and_a_deep_difference_changes_it():
    assert KEYS[Run](_run()) == KEYS[Run](_run())  # two objects, one key
    deeper = _run(efficiency=Efficiency(matmul=0.71))  # three levels down
    assert KEYS[Run](deeper) != KEYS[Run](_run())
    assert KEYS[Layout](Layout(dp=2, tp=8)) != KEYS[Layout](Layout(dp=2, tp=8, zero_stage=1))


def test_no_field_of_the_keyed_classes_is_left_out_of_repr():
    """A field with repr=False would make two different runs one key."""
    for value in (_run(), Layout(dp=2)):
        stack = [value]
        while stack:  # walk instances: under `from __future__` annotations are strings
            obj = stack.pop()
            for f in dataclasses.fields(obj):
                assert f.repr, f"{type(obj).__name__}.{f.name} is repr=False"
                child = getattr(obj, f.name)
                if dataclasses.is_dataclass(child):
                    stack.append(child)


def test_a_cached_builder_runs_once_per_distinct_run():
    calls = []

    @cached(8)
    def build(run: Run, lay: Layout) -> str:
        calls.append(1)
        return f"{run.cluster.num_gpus} GPUs, TP {lay.tp}"

    assert build(_run(), Layout(dp=2, tp=8)) == "16 GPUs, TP 8"
    assert build(_run(), Layout(dp=2, tp=8)) == "16 GPUs, TP 8"  # equal, not the same objects
    assert len(calls) == 1
    build(_run(efficiency=Efficiency(matmul=0.5)), Layout(dp=2, tp=8))
    build(_run(), Layout(dp=4, tp=4))
    assert len(calls) == 3
