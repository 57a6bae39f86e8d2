"""The custom-layout controls the planner and the training-step page share, under the same URL
keys, so a planner link opens the same layout on the step page."""

from __future__ import annotations

from typing import Any

import streamlit as st

from app_pages.common.fold import cells
from app_pages.common.widgets import number, select, slider
from core.memory import SIZED_SCHEDULES
from core.parallel import ORDERS
from core.pipeline import SCHEDULES
from figures.planner import text as pt


def custom_layout(*, expanded: bool, cp_ep: bool = True) -> tuple[dict, Any]:
    """DP, TP, PP, CP, EP, ZeRO, rank order, micro-batch, schedule and v in an expander (always
    rendered, so a planner table row click can write them into the URL); returns them and the
    expander. CP and EP (URL cp, ep) default to 1: the same layouts as before they existed;
    cp_ep=False leaves them out (a page that binds cp and ep itself, e.g. the training step)."""
    box = st.expander(pt.CUSTOM, expanded=expanded)
    with box:
        c = cells(5) + cells(5) if cp_ep else cells(4) + cells(4)
        values = dict(
            dp=number("DP", 1, 65536, 1, key="dp", where=c[0]),
            tp=number("TP", 1, 65536, 8, key="tp", where=c[1]),
            pp=number("PP", 1, 65536, 8, key="pp", where=c[2]),
        )
        if cp_ep:
            values |= dict(
                cp=number("CP (context)", 1, 1024, 1, key="cp", where=c[3], help=pt.HELP["cp"]),
                ep=number("EP (experts)", 1, 1024, 1, key="ep", where=c[4], help=pt.HELP["ep"]),
            )
        c = c[2:] if cp_ep else c  # the rest: ZeRO, order, micro-batch, schedule, v
        values |= dict(
            zero=select("ZeRO", pt.ZEROS, "0", key="zero", where=c[3]),
            order=select("Order (innermost first)", pt.ORDERS, ORDERS[0], key="order", where=c[4]),
            mb=number("Micro-batch", 1, 65536, 1, key="mb", where=c[5]),
        )
        scheds = {s: SCHEDULES[s].label for s in SIZED_SCHEDULES}
        values["sched"] = select("Schedule", scheds, "1f1b", key="sched", where=c[6])
        values["v"] = slider("Chunks v (interleaved)", 2, 8, 2, key="v", where=c[7])
    return values, box
