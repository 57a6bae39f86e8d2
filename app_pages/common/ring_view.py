"""The collectives page's ring section: the one step control (URL-bound, with Play), the ring at
that step, its one-line story and the counters, all from one real numpy ring all-reduce. Kept apart
from app_pages/collectives.py so the page stays within its line budget.
"""

from __future__ import annotations

import functools
from contextlib import nullcontext
from dataclasses import asdict, dataclass

import streamlit as st

from app_pages import common
from app_pages.common.glide import next_token
from app_pages.common.widgets import play_tick, playing
from core import collectives as coll
from core.hardware import make_cluster
from figures import collectives as figs
from figures.collectives import text


@dataclass(frozen=True, kw_only=True)
class TwoTier:
    """A two-tier cluster as `make_cluster` takes it: part of the algorithms' cache key."""

    num_nodes: int
    gpus_per_node: int
    intra_link_name: str
    inter_link_name: str
    nics_per_node: int


# functools.lru_cache, not st.cache_data / st.cache_resource, for this page's pure builders: a
# Streamlit cache hashes every argument with its own hasher on every call (and a cache_data hit
# unpickles a copy, ~5 ms for a figure); on an N move that was ~10% of the script thread (py-spy
# against `python -m benchmarks.load`, 2026-12-07, docs/load.md). Every argument here is
# hashable (numbers, strings, the frozen TwoTier) and no caller mutates a result
# (common.chart copies before it changes a figure; figures.open_at_step copies what it changes).
@functools.lru_cache(maxsize=64)
def run(name, n, size, bw, alpha, tiers: TwoTier | None = None):
    """One algorithm on N × timing_elements(N) small integers: every chunk split evenly, so the
    bytes and times scale exactly to S. Hierarchical: the cluster's node size, else 8 per node."""
    cluster = make_cluster(**asdict(tiers)) if tiers else None
    inputs = coll.example_inputs(n, coll.timing_elements(n))
    kw = dict(bandwidth_bytes_per_s=bw, latency_s=alpha, gpus_per_node=None if cluster else 8)
    return coll.run_algorithm(name, inputs, message_bytes=size, cluster=cluster, **kw)


@functools.lru_cache(maxsize=64)
def shown(n, elems):
    """The ring drawn and checked by eye: the learner's few elements per GPU."""
    return coll.ring_all_reduce(coll.example_inputs(n, elems))


@functools.lru_cache(maxsize=64)
def animation(n, elems, bw, alpha, link_name, size, units, height, zoom=None, compact=False):
    kw = dict(bandwidth_bytes_per_s=bw, latency_s=alpha, link_name=link_name, message_bytes=size)
    timing = run("ring", n, size, bw, alpha).trace
    return figs.ring_animation_figure(
        shown(n, elems), byte_system=units, timing=timing, height=height, zoom=zoom,
        compact=compact, **kw,
    )  # fmt: skip


@functools.lru_cache(maxsize=64)
def landed(drawn: tuple, step: int) -> dict:
    """The ring landed at `step` (no glide): one object per inputs, so common.chart sends the JSON
    it made last time (common/plot.py drawn_json) and the copy open_at_step makes is made once."""
    return figs.open_at_step(animation(*drawn), step)


ZOOM_FROM = 16  # from this N the whole ring's cells are too small to carry their numbers


def zoom_on(n: int, where) -> int | None:
    """At N ≥ 16, a URL-bound choice: the whole ring, or one GPU and its two neighbours."""
    if n < ZOOM_FROM:
        return None
    choices = {"all": "whole ring", **{str(r): f"GPU {r}" for r in range(n)}}
    tip = "Zoom on one GPU and its neighbours: its chunks carry their numbers; the caption follows"
    tip += " the chunk that GPU receives."
    pick = common.select("Zoom on", choices, "all", key="zoom", help=tip, where=where)
    return None if pick == "all" else int(pick)


# Presenting, the ring under the slide's head fits a 1280×720 screen: common.chart draws 1.25×
# this (figures.theme.presenter); tests/e2e/test_presenter_browser.py measures it.
PRESENT_HEIGHT = 320
PLAY_EVERY_S = 1.2  # a step's glide takes 3 × 320 ms (figures/collectives/ring.py frame_ms)


def came_from(view: tuple, step: int) -> int | None:
    """The step the chart showed before this run when it is a neighbour of `step` on the same
    ring (a Next / Back press, a key, a Play tick or a one-step drag: the chart glides), else None
    (a jump: the first run, Reset, a longer drag or another ring)."""
    before = st.session_state.get("_ring_shown")
    st.session_state["_ring_shown"] = (view, step)
    if before is None or before[0] != view or abs(before[1] - step) != 1:
        return None
    return before[1]


def ring_section(n, elems, bw, alpha, link_name, size, mem, bwu) -> coll.AlgorithmRun:
    """The one step control, the ring at that step, its one-line story and the counters, as a
    fragment: a step (press, drag or Play tick) reruns only this section, not the page."""
    section = _playing_section if playing("step") else _section
    return section(n, elems, bw, alpha, link_name, size, mem, bwu)


def _ring(n, elems, bw, alpha, link_name, size, mem, bwu, *, every) -> coll.AlgorithmRun:
    """The section's body; `every` is the Play timer of the fragment running it (None: off)."""
    common.sections.follow_page()  # args from a page run that finished
    if playing("step") != (every is not None):  # ▶ / ❚❚ pressed: re-arm the timer
        st.rerun(scope="app")
    last, present = 2 * (n - 1), common.settings().presenter
    play_tick("step", last, PLAY_EVERY_S)
    # Presenting, the step control sits beside the ring, not above it, so the ring starts
    # right under the takeaway and a 1280×720 slide shows both (issue 14).
    if present:
        left, right = st.columns([3, 2])
    with right if present else nullcontext():
        step = common.stepper("Step (0 = inputs)", last, key="step", play=True, stacked=present)
    if not present:
        left, right = st.columns([5, 2])
    zoom = zoom_on(n, right)
    with common.explain_errors():
        ring = run("ring", n, size, bw, alpha)
        height = PRESENT_HEIGHT if present else 560
        drawn = (n, elems, bw, alpha, link_name, size, mem, height, zoom, present)
        prev = came_from((n, elems, link_name, size, present, zoom), step)
        if prev is None:  # a jump (a new N, a deep link…): the same chart for the same inputs
            opened = landed(drawn, step)
        else:  # a glide from `prev`, under a new token (the trigger animates it once)
            glide = dict(came_from=prev, token=next_token("ring"))
            opened = figs.open_at_step(animation(*drawn), step, **glide)
        with left:
            common.chart(opened, key="ring")
        t = coll.all_reduce_time_s("ring", n, size, bw, alpha)
    right.markdown(f"**{figs.step_caption(shown(n, elems), step, zoom)}**")
    if present:  # the slide's ring has no colour bar (figures/collectives/ring.py compact)
        right.caption(text.colour_key(n))
    for item in text.ring_metrics(ring, step, time_s=t, link_name=link_name, mem=mem, bwu=bwu):
        right.metric(**item)
    return ring


# Decorated once, at import (not on every page run: ~2% of an N move's server time, py-spy
# 2026-12-07): the section as a fragment, and the same section re-run every PLAY_EVERY_S while
# ▶ Play is on. A fragment rerun calls it with the arguments of the page run that drew it.
@st.fragment
def _section(*args) -> coll.AlgorithmRun:
    return _ring(*args, every=None)


@st.fragment(run_every=PLAY_EVERY_S)
def _playing_section(*args) -> coll.AlgorithmRun:
    return _ring(*args, every=PLAY_EVERY_S)
