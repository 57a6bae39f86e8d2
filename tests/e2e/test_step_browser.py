"""The training-step drawing in Chromium, read from Plotly's own graph data: a frame per phase,
TP arrows inside node boxes and PP arrows across them, the phase stepper in the URL, and Play
moving the picture to the next phase.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser

# TP = 8 fills each 8-GPU node, PP = 8 puts one stage per node; 64 sequences, 1F1B.
QUERY = "pick=custom&dp=1&tp=8&pp=8&gb=64"
GRAPH = """() => {
  const gd = document.querySelector('.js-plotly-plot');
  const pick = (name) => { const t = gd.data.find(d => d.name === name);
                           return t ? {x: t.x, y: t.y} : null; };
  return {
    frames: gd._transitionData._frames.map(f => f.name),
    title: gd.layout.title.text,
    shapes: gd.layout.shapes.map(s => [s.x0, s.y0, s.x1, s.y1]),
    tp: pick('TP all-reduce (activations)'),
    pp: pick('PP send: activations → next stage'),
  };
}"""


def _box(shapes, x, y) -> int:
    hits = [i for i, (x0, y0, x1, y1) in enumerate(shapes) if x0 <= x <= x1 and y0 <= y <= y1]
    assert len(hits) == 1, (x, y)
    return hits[0]


def _arrows(trace) -> list[tuple[float, float, float, float]]:
    xs, ys = trace["x"], trace["y"]
    return [(xs[i], ys[i], xs[i + 1], ys[i + 1]) for i in range(0, len(xs), 3)]


def test_step_frames_and_traffic_on_the_links_the_layout_implies(page, app_url, screenshots):
    page.goto(f"{app_url}/training_step?{QUERY}&phase=2")
    wait_for_app_run(page)
    wait_for_charts(page)
    g = page.evaluate(GRAPH)
    # rest, fill, steady, drain, optimizer (DP = 1: no gradient sync)
    assert g["frames"] == ["1 start", "2 fill", "3 steady", "4 drain", "5 optim."]
    assert g["title"].startswith("<b>Phase 3 of 5: Steady state")
    tp, pp = _arrows(g["tp"]), _arrows(g["pp"])
    assert len(tp) == 64 and len(pp) == 56  # 8 rings of 8; 7 boundaries x 8 TP ranks
    boxes = g["shapes"]
    assert all(_box(boxes, a, b) == _box(boxes, c, d) for a, b, c, d in tp)
    assert all(_box(boxes, a, b) != _box(boxes, c, d) for a, b, c, d in pp)
    page.get_by_test_id("stPlotlyChart").first.screenshot(path=str(screenshots / "step.png"))

    page.get_by_role("button", name=re.compile("Next")).click()
    expect(page).to_have_url(re.compile(r"phase=3"))
    wait_for_app_run(page)
    page.wait_for_function(
        "() => document.querySelector('.js-plotly-plot').layout.title.text"
        ".startsWith('<b>Phase 4 of 5')"
    )

    page.get_by_text("▶ Play phases").click()  # runs on from phase 4: the drain, then the update
    page.wait_for_function(
        "() => document.querySelector('.js-plotly-plot').layout.title.text"
        ".startsWith('<b>Phase 5 of 5')",
        timeout=10_000,
    )
    assert page.evaluate(GRAPH)["tp"]["x"] == []  # the optimizer step sends nothing
