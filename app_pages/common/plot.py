"""`plot`: a Plotly chart that stays on the page and is redrawn in place (plot.js says why)."""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


# The JSON of a figure object as drawn, per variant (chart key, presenter, height, width): a
# figure from a process-wide cache (app_pages/common/ring_view.py) is the same object on every
# rerun, so its legend room, datarevision digest and JSON (~10% of an N move's script thread on
# /collectives, py-spy, 2026-12-07, docs/load.md) are computed once. An entry holds its figure,
# so no other object can take that id while the entry lives; figures are never mutated after
# they are built.
_DRAWN: OrderedDict[tuple, tuple[Any, bytes]] = OrderedDict()
_DRAWN_LOCK = threading.Lock()  # script threads of many sessions share it
DRAWN_ENTRIES = 128


def drawn_json(fig: Any, variant: tuple, build: Callable[[Any], dict]) -> bytes:
    """`build(fig)` as the UTF-8 JSON the chart sends, remembered per (figure object, variant):
    kept encoded, so a rerun that draws a remembered figure only joins bytes (`pack`)."""
    key = (id(fig), variant)
    with _DRAWN_LOCK:
        hit = _DRAWN.get(key)
        if hit is not None and hit[0] is fig:
            _DRAWN.move_to_end(key)
            return hit[1]
    text = as_json(build(fig)).encode()
    with _DRAWN_LOCK:
        _DRAWN[key] = (fig, text)
        while len(_DRAWN) > DRAWN_ENTRIES:
            _DRAWN.popitem(last=False)
    return text


@functools.lru_cache(maxsize=256)
def _head(config_json: str) -> bytes:
    return f"{plotly_lib()}\n{config_json}\n".encode()


def pack(spec: str | bytes, config: dict) -> bytes:
    """The chart's data as one UTF-8 byte string: Plotly's module path, the config's JSON and
    the figure's JSON, one per line (plot.js `unpack`; JSON has no raw line breaks).

    Bytes, not a dict: Streamlit 1.67 JSON-encodes a dict payload (escaping the whole spec
    string), then encodes it again, sorted, to hash the component's identity, on every rerun;
    bytes go into the message as they are and are hashed once (streamlit/streamlit
    lib/streamlit/components/v2/bidi_component/main.py `_build_bidi_identity_kwargs`). With the
    config (plain JSON, no arrays) no longer run through Plotly's encoder on each call, that was
    ~5% of an N move's server time on /collectives (py-spy, 2026-12-07, docs/load.md)."""
    body = spec if isinstance(spec, bytes) else spec.encode()
    return _head(json.dumps(config, separators=(",", ":"))) + body


def plot(fig: dict | str | bytes, *, key: str, config: dict) -> None:
    """Draw `fig` (a plain-dict spec, numpy arrays allowed, or its JSON) under `key`. The key is
    the chart's identity: the same key on the next rerun redraws the same chart in place."""
    spec = fig if isinstance(fig, str | bytes) else as_json(fig)
    _component()(key=key, data=pack(spec, config))
