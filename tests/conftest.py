"""Fixtures shared by several test modules."""

import pytest

from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, evaluate


@pytest.fixture(scope="session")
def pair():
    """The seeds' placement exercise: GPT-3 175B on 8 x 8 H100, TP 8 x PP 8, with TP inside the
    node (default order) and TP across nodes (order pp-tp-dp)."""
    model, c = preset("GPT-3 175B"), make_cluster(num_nodes=8, gpus_per_node=8)
    tr = Training(global_batch=64, recompute="full")
    return (
        evaluate(model, c, Layout(dp=1, tp=8, pp=8), tr),
        evaluate(model, c, Layout(dp=1, tp=8, pp=8, order="pp-tp-dp"), tr),
    )
