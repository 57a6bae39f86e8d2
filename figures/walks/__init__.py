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


def for_page(name: str, *, memory_units: str = "decimal", bandwidth_units: str = "decimal"):
    """The walk of a page (its file stem), in the units the page shows (ByteSystem values)."""
    if name not in WALKS:
        raise ValueError(f"no walk for page {name!r}: use one of {', '.join(WALKS)}")
    if name in ("tensor_parallel", "memory"):
        return WALKS[name](memory_units)
    if name == "reliability":
        return WALKS[name](bandwidth_units)
    return WALKS[name]()


__all__ = [
    "WALKS",
    "WalkStep",
    "collectives",
    "data_parallel",
    "for_page",
    "memory",
    "pipeline",
    "reliability",
    "tensor_parallel",
]
