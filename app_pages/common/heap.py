"""Python's cyclic garbage collector in a long-lived server process (issue 18).

CPython's full (oldest-generation) pass walks every container object the process holds; with
Streamlit, Plotly, pandas and pyarrow loaded that is ~140,000 objects and ~60 ms per pass, and
under load one pass came every few seconds, stalling every session's rerun for that time
(measured with gc.callbacks against `python -m benchmarks.load`, 2026-12-07, docs/load.md).
Almost all of those objects live as long as the process: modules, Plotly's validators, the
pages' cached figures. `gc.freeze()` moves the objects alive at that moment into a permanent
generation the collector no longer walks (https://docs.python.org/3/library/gc.html#gc.freeze);
after it a full pass takes a few ms.

It runs after the first whole run of each page in the process, because a page's first run
imports its modules; a collection goes first, so no garbage is frozen. What it costs: an object
alive then and dropped later (the first visitor's session, say) is never collected: a bounded,
one-off amount per page.
"""

from __future__ import annotations

import gc
import threading

_SETTLED: set[str] = set()  # pages whose first whole run this process has settled after
_LOCK = threading.Lock()  # the first runs of several sessions can end at the same time


def settle(page: str) -> bool:
    """After a whole run of `page`: the first time in this process, collect and freeze what is
    alive (True); after that nothing (False)."""
    with _LOCK:
        if page in _SETTLED:
            return False
        _SETTLED.add(page)
        gc.collect()
        gc.freeze()
        return True
