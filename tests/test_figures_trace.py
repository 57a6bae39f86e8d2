"""Trace figures: bars add up to each rank's span, the plan shares the trace's time axis, no file
text."""

import json
from pathlib import Path

import numpy as np
import pytest

from core.traces import analyze, dp_plan, load_trace
from figures.trace import breakdown_figure, plan_figure, time_range_ms, trace_figure

ROOT = Path(__file__).resolve().parents[1]
DEMO = sorted((ROOT / "data" / "traces").glob("ddp_gloo_rank*.json.gz"))


def demo(**kw):
    return analyze([load_trace(p.read_bytes(), name=p.name) for p in DEMO], **kw)


def plan():
    return dp_plan(
        3, num_params=1e6, samples_per_rank=10, flops_per_s=1e9, bus_bytes_per_s=1e8, steps=2
    )[1]


def row_sums(fig: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for t in fig["data"]:
        for y, x in zip(t["y"], t["x"]):
            out[y] = out.get(y, 0.0) + x
    return out


def test_breakdown_bars_add_up_to_the_span():
    an, pl = demo(), plan()
    sums = row_sums(breakdown_figure(an, pl))
    for r in an.ranks:
        assert sums[f"trace · rank {r.rank}"] == pytest.approx(r.span_s * 1e3, abs=1e-3)
    assert sums["plan · every rank"] == pytest.approx(2 * pl.step_s * 1e3, abs=1e-3)


def test_timeline_rows_tile_the_span_and_the_plan_shares_the_time_axis():
    an, pl = demo(), plan()
    x_ms = time_range_ms(an, pl)
    trace, planned = trace_figure(an, x_ms), plan_figure(pl, x_ms)
    sums = row_sums(trace)
    for r in an.ranks:
        assert sums[f"trace · rank {r.rank}"] == pytest.approx(r.span_s * 1e3, abs=1e-2)
    sums = row_sums(planned)
    for k in range(3):
        assert sums[f"plan · rank {k}"] == pytest.approx(2 * pl.step_s * 1e3, abs=1e-3)
    # one time axis: both run from 0 to the longer of the traced span and the plan
    longest = max(max(r.seg_end_s[-1] for r in an.ranks), pl.seg_end_s[-1]) * 1e3
    assert trace["layout"]["xaxis"]["range"] == planned["layout"]["xaxis"]["range"]
    assert trace["layout"]["xaxis"]["range"][1] == pytest.approx(longest, abs=1e-3)
    assert "ddp_gloo" not in json.dumps([trace, planned])  # file names stay in tables


def test_a_plan_that_fits_in_the_trace_leaves_the_trace_figure_unchanged():
    """A plan control must not redraw the trace (Streamlit draws a changed chart from scratch)."""
    an = demo()
    short = dp_plan(
        2, num_params=1e3, samples_per_rank=1, flops_per_s=1e12, bus_bytes_per_s=1e11, steps=1
    )[1]
    assert short.seg_end_s[-1] < min(r.span_s for r in an.ranks)
    assert trace_figure(an, time_range_ms(an, short)) == trace_figure(an)
    long = dp_plan(
        2, num_params=1e9, samples_per_rank=10, flops_per_s=1e9, bus_bytes_per_s=1e6, steps=3
    )[1]
    assert trace_figure(an, time_range_ms(an, long)) != trace_figure(an)  # the axis grows


def test_binned_timeline_says_so_and_stays_small():
    fig = trace_figure(demo(max_segments=100))
    assert "bins" in fig["layout"]["title"]["subtitle"]["text"]
    assert sum(len(t["x"]) for t in fig["data"]) <= 100
    assert np.isclose(
        sum(sum(t["x"]) for t in fig["data"]), sum(r.span_s for r in demo().ranks) * 1e3
    )
