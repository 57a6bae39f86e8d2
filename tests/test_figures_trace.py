"""Trace figures: bars add up to each rank's span, plan rows sit on their own axis, no file text."""

import json
from pathlib import Path

import numpy as np
import pytest

from core.traces import analyze, dp_plan, load_trace
from figures.trace import breakdown_figure, timeline_figure

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


def test_timeline_rows_tile_the_span_and_the_plan_uses_the_second_axis():
    an, pl = demo(), plan()
    fig = timeline_figure(an, pl)
    sums = row_sums(fig)
    for r in an.ranks:
        assert sums[f"trace · rank {r.rank}"] == pytest.approx(r.span_s * 1e3, abs=1e-2)
    for k in range(3):
        assert sums[f"plan · rank {k}"] == pytest.approx(2 * pl.step_s * 1e3, abs=1e-3)
    assert {t["yaxis"] for t in fig["data"] if t["y"][0].startswith("plan")} == {"y2"}
    assert fig["layout"]["xaxis"]["anchor"] == "y2" and "yaxis2" in fig["layout"]
    assert "ddp_gloo" not in json.dumps(fig)  # file names stay in tables


def test_binned_timeline_says_so_and_stays_small():
    fig = timeline_figure(demo(max_segments=100))
    assert "bins" in fig["layout"]["title"]["subtitle"]["text"]
    assert sum(len(t["x"]) for t in fig["data"]) <= 100
    assert "yaxis2" not in fig["layout"]
    assert np.isclose(
        sum(sum(t["x"]) for t in fig["data"]), sum(r.span_s for r in demo().ranks) * 1e3
    )
