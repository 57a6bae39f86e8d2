"""Which layout a page shows: a pick from the search's ranking, or one layout with TP flipped."""

from __future__ import annotations

from dataclasses import replace

from core.parallel import DEFAULT_ORDER, ORDERS, Layout, group_span
from core.planner.evaluate import Evaluation
from core.planner.search import SearchResult


def tp_flipped(ev: Evaluation) -> Layout | None:
    """The same layout with TP moved across nodes (or back inside); None when no order changes
    it.
    """
    inside = not ev.spans["tp"].crosses_node
    for order in ORDERS if inside else (DEFAULT_ORDER,):
        lay = replace(ev.layout, order=order)
        if group_span(lay.dims, "tp", ev.cluster).crosses_node == inside:
            return lay
    return None


def pick_layout(result: SearchResult, which: str) -> Layout | None:
    """The layout a page pick names: "fastest", "#k" (k-th fastest, clamped) or "boring"; None if
    none fits.
    """
    if which == "boring" or not result.ranked:
        return result.boring and result.boring.layout
    k = 1 if which == "fastest" else int(which.lstrip("#"))
    return result.ranked[min(k, len(result.ranked)) - 1].layout
