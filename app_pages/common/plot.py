"""`plot`: a Plotly chart that stays on the page and is redrawn in place (plot.js says why)."""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

from figures.theme import as_json

NAME = "splitlab_chart"  # tests find the charts by this component name (tests/charts.py)
_JS = (Path(__file__).with_name("plot.js")).read_text(encoding="utf-8")


@functools.cache
def _component():
    # isolate_styles=False: no shadow root, so the chart sits in the page's DOM like any element
    # (the glide and the browser tests find it with document.querySelector).
    return st.components.v2.component(NAME, js=_JS, isolate_styles=False)


@functools.cache
def plotly_lib() -> str:
    """The path, relative to the app's URL, of Streamlit's own Plotly chunk: the chart loads it
    once if no other chart has, and it is the very module Streamlit's charts use (one Plotly)."""
    static = Path(st.__file__).parent / "static"
    found = sorted(static.glob("static/js/PlotlyChart.*.js"))
    if len(found) != 1:  # pinned streamlit==1.67.0 ships exactly one; an upgrade must look again
        raise RuntimeError(f"expected one Plotly chunk in {static}, found {len(found)}")
    return found[0].relative_to(static).as_posix()


def plot(fig: dict, *, key: str, config: dict) -> None:
    """Draw `fig` (a plain-dict spec, numpy arrays allowed) under `key`. The key is the chart's
    identity: the same key on the next rerun redraws the same chart in place."""
    data = {"spec": as_json(fig), "config": as_json(config), "lib": plotly_lib()}
    _component()(key=key, data=data)
