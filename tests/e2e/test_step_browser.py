"""The training-step drawing in Chromium, read from Plotly's own graph data: TP arrows inside node
boxes and PP arrows across them, CP arrows between CP ring neighbours and EP arrows among the EP
group, the one phase stepper in the URL, and Play agreeing with it (URL = slider = chart title).
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
  const hover = gd.data.find(d => d.hovertemplate && d.text);
  return {
    frames: (gd._transitionData._frames || []).length,
    menus: (gd.layout.updatemenus || []).length,
    title: gd.layout.title.text,
    shapes: gd.layout.shapes.map(s => [s.x0, s.y0, s.x1, s.y1]),
    tp: pick('TP all-reduce (activations)'),
    pp: pick('PP send: activations → next stage'),
    cp: pick('CP ring: K/V blocks → next CP rank'),
    ep: pick('EP all-to-all: tokens to experts and back'),
    cells: hover.x.map((x, i) => [x, hover.y[i], parseInt(hover.text[i].match(/rank (\\d+)/)[1])]),
  };
}"""
TITLE = """() => { const gd = document.querySelector('.js-plotly-plot');
                   return gd && gd.layout ? gd.layout.title.text : ''; }"""


def _box(shapes, x, y) -> int:
    hits = [i for i, (x0, y0, x1, y1) in enumerate(shapes) if x0 <= x <= x1 and y0 <= y <= y1]
    assert len(hits) == 1, (x, y)
    return hits[0]


def _arrows(trace) -> list[tuple[float, float, float, float]]:
    xs, ys = trace["x"], trace["y"]
    return [(xs[i], ys[i], xs[i + 1], ys[i + 1]) for i in range(0, len(xs), 3)]


def _ranks(g, trace) -> set[tuple[int, int]]:
    """(sender, receiver) of each arrow: the GPU cell nearest each end (hover markers' centres)."""

    def near(x, y):
        return min(g["cells"], key=lambda c: (c[0] - x) ** 2 + (c[1] - y) ** 2)[2]

    return {(near(a, b), near(c, d)) for a, b, c, d in _arrows(trace)}


def _open(page, url: str) -> dict:
    page.goto(url)
    wait_for_app_run(page, 90_000)  # a cold server on a loaded machine: the first run is slow
    wait_for_charts(page, 90_000)
    return page.evaluate(GRAPH)


@pytest.fixture(scope="module")
def steady(tab, app_url):
    """The steady-state page, loaded once: the traffic test reads its graph, then the stepper
    test drives it on (issue 18: a load costs ~2-4 s)."""
    pg = tab()
    yield pg, _open(pg, f"{app_url}/training_step?{QUERY}&phase=2")
    pg.close_all()


def test_step_traffic_on_the_links_the_layout_implies(steady):
    g = steady[1]
    assert g["frames"] == 0 and g["menus"] == 0  # one step control: the page's stepper
    assert g["title"].startswith("<b>Phase 3 of 5: Steady state")
    tp, pp = _arrows(g["tp"]), _arrows(g["pp"])
    assert len(tp) == 64 and len(pp) == 56  # 8 rings of 8; 7 boundaries x 8 TP ranks
    boxes = g["shapes"]
    assert all(_box(boxes, a, b) == _box(boxes, c, d) for a, b, c, d in tp)
    assert all(_box(boxes, a, b) != _box(boxes, c, d) for a, b, c, d in pp)


def test_stepper_and_play_agree(steady):
    page = steady[0]
    page.get_by_role("button", name=re.compile("Next")).click()
    expect(page).to_have_url(re.compile(r"phase=3"))
    page.wait_for_function(f"() => ({TITLE})().startsWith('<b>Phase 4 of 5')")
    page.get_by_role("button", name=re.compile("Play")).click()  # on from phase 4 to the end
    page.wait_for_function(f"() => ({TITLE})().startsWith('<b>Phase 5 of 5')", timeout=20_000)
    expect(page.get_by_role("button", name=re.compile("Play"))).to_be_visible(timeout=20_000)
    wait_for_app_run(page)
    page.wait_for_timeout(2500)  # a stopped Play ticks no more
    expect(page).to_have_url(re.compile(r"phase=4(&|$)"))  # URL = slider = chart after Play
    slider = page.get_by_test_id("stSlider").filter(has_text="Phase")
    expect(slider.get_by_test_id("stSliderThumbValue")).to_have_text("4")
    assert page.evaluate(TITLE).startswith("<b>Phase 5 of 5: Optimizer step")
    assert page.evaluate(GRAPH)["tp"]["x"] == []  # the optimizer step sends nothing


SMALL = "nodes=2&pick=custom&tp=2&pp=2&gb=64&phase=2"  # 16 GPUs, the steady state


def test_cp_and_ep_arrows_join_their_groups(page, app_url):
    # DP 2 x CP 2 x TP 2 x PP 2 on the planner's grid (CP right after TP, order tp-pp-dp:
    # rank = t + 2 c + 4 p + 8 d): CP ring partners are ranks r and r XOR 2.
    g = _open(page, f"{app_url}/training_step?model=Llama-2+7B&dp=2&cp=2&{SMALL}")
    assert _ranks(g, g["cp"]) == {(r, r ^ 2) for r in range(16)}
    assert g["ep"] is not None and g["ep"]["x"] == []
    # Mixtral, DP 4 x TP 2 x PP 2, EP 2 (rank = t + 2 p + 4 d): EP pairs are DP coordinates
    # {0, 1} and {2, 3}, i.e. ranks r and r XOR 4.
    g = _open(page, f"{app_url}/training_step?model=Mixtral+8x7B+(MoE)&dp=4&ep=2&{SMALL}")
    assert _ranks(g, g["ep"]) == {(r, r ^ 4) for r in range(16)} and g["cp"]["x"] == []
