"""The custom-layout controls the planner and the training-step page share, under the same URL
keys, so a planner link opens the same layout on the step page."""

from __future__ import annotations

from typing import Any

import streamlit as st

from app_pages.common.widgets import number, select, slider
from core.memory import SIZED_SCHEDULES
from core.parallel import ORDERS
from core.pipeline import SCHEDULES
from figures.planner import text as pt


def custom_layout(*, expanded: bool) -> tuple[dict, Any]:
    """DP, TP, PP, ZeRO, rank order, micro-batch, schedule and v in an expander (always rendered,
    so a planner table row click can write them into the URL); returns them and the expander."""
    box = st.expander(pt.CUSTOM, expanded=expanded)
    with box:
        c = st.columns(4) + st.columns(4)
        values = dict(
            dp=number("DP", 1, 65536, 1, key="dp", where=c[0]),
            tp=number("TP", 1, 65536, 8, key="tp", where=c[1]),
            pp=number("PP", 1, 65536, 8, key="pp", where=c[2]),
            zero=select("ZeRO", pt.ZEROS, "0", key="zero", where=c[3]),
            order=select("Order (innermost first)", pt.ORDERS, ORDERS[0], key="order", where=c[4]),
            mb=number("Micro-batch", 1, 65536, 1, key="mb", where=c[5]),
        )
        scheds = {s: SCHEDULES[s].label for s in SIZED_SCHEDULES}
        values["sched"] = select("Schedule", scheds, "1f1b", key="sched", where=c[6])
        values["v"] = slider("Chunks v (interleaved)", 2, 8, 2, key="v", where=c[7])
    return values, box
