"""`cached`: st.cache_resource for builders keyed on the planner's run and layout dataclasses.

Why: Streamlit 1.67 hashes a dataclass argument by hashing `dataclasses.asdict` of it
(streamlit/streamlit lib/streamlit/runtime/caching/hashing.py, `_CacheFuncHasher._to_bytes`),
which copies every nested field: ~1 ms for one `Run` (model, cluster, training), and a planner
move looks up seven builders keyed on it (py-spy of the nodes slider, 2026-12-03: 16% of the
fragment's time in `_make_value_key`). The repr of a frozen dataclass names every field with its
exact value (floats repr round-trip; no field of these classes is `repr=False`), so it is as
distinct a key, and ~30x cheaper to hash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from core.parallel import Layout
from figures.planner.run import Run

KEYS: dict[type, Callable[[Any], str]] = {Run: repr, Layout: repr}


def cached(max_entries: int | None = None) -> Callable[[Callable], Callable]:
    """st.cache_resource (shared, never-mutated results) with the run and layout keyed by repr."""
    return st.cache_resource(max_entries=max_entries, show_spinner=False, hash_funcs=KEYS)
