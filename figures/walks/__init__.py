"""Guided walks: 3–6 steps per concept page that set its controls and say one true thing each.

Each walk is a function returning its steps; every number a sentence cites is computed with the
core for the values that step sets (tests/test_walks.py checks the numbers by hand and runs each
step's values through the real page). Keys and labels are the pages' widget keys and the labels
their `select` widgets write into the URL (app_pages/<page>.py). The control that plays a walk
is app_pages/common/walk.py.
"""

from figures.walks.comms import collectives, data_parallel, tensor_parallel
from figures.walks.scale import memory, pipeline, reliability
from figures.walks.step import WalkStep

WALKS = {
    "collectives": collectives,
    "data_parallel": data_parallel,
    "tensor_parallel": tensor_parallel,
    "pipeline": pipeline,
    "memory": memory,
    "reliability": reliability,
}  # page file stem -> walk

__all__ = [
    "WALKS",
    "WalkStep",
    "collectives",
    "data_parallel",
    "memory",
    "pipeline",
    "reliability",
    "tensor_parallel",
]
