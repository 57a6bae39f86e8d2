"""Issue 15 §1, "the answer above the fold": a shared link's first screen at 1440×900 (the laptop)
shows the page's main chart — the first Plotly chart on the page — without scrolling.

"Shows" means at least three quarters of the chart's height (or 400 px of a taller chart) lies
inside the window, measured from its bounding box after the app has drawn. The planner is held
to a stricter rule in test_planner_browser.py (the metrics and "Recommended … Why" must fit).
The check runs in tests/e2e/test_browser.py, on the tab that file loads once per page.
"""

from __future__ import annotations

import pytest

from tests.registry import registered_pages, url_path

pytestmark = pytest.mark.browser
VIEWPORT = {"width": 1440, "height": 900}
# The planner answers with metrics and a sentence, held to its own test (see the docstring).
PAGES = [url_path(p) for p, _ in registered_pages() if url_path(p) != "planner"]

# A page whose first screen answers with something other than a chart names it here, with the
# reason: the self-check page's answer is its first question. In the main area: the sidebar's
# unit radios come first in the DOM (and sit above any fold), so an unscoped selector found them.
_MAIN = "[data-testid='stMain']"
NOT_A_CHART = {
    "self_check": f"{_MAIN} [data-testid='stNumberInput'], {_MAIN} [data-testid='stRadio']"
}

FIRST_DRAWN = """() => {
  const c = document.querySelector("[data-testid='splitlabChart']");
  return c !== null && c.querySelector('.main-svg') !== null;
}"""
FIRST_CHART = """(sel) => {
  const el = document.querySelector(sel);
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return {y: r.top + window.scrollY, height: r.height};
}"""


def visible_share(
    box: dict, fold_px: float = VIEWPORT["height"], share: float = 0.75, cap_px: float = 400.0
) -> float:
    """Pixels of the element above the fold, over the pixels a test asks to see: `share` of its
    height, or `cap_px` of a taller element (this file's: three quarters, or 400 px)."""
    wanted = min(box["height"] * share, cap_px)
    return max(0.0, min(fold_px, box["y"] + box["height"]) - box["y"]) / wanted


def test_visible_share_can_fail():
    assert visible_share({"y": 100, "height": 400}) >= 1  # all 400 px in
    assert visible_share({"y": 700, "height": 400}) < 1  # 200 px of the 300 asked for
    assert visible_share({"y": 950, "height": 400}) == 0  # below the fold


def check_above_the_fold(page, path: str) -> None:
    """The page (just loaded at VIEWPORT, nothing moved) shows its first chart above the fold.
    Run by tests/e2e/test_browser.py on the tab its other checks use (one load per page)."""
    selector = NOT_A_CHART.get(path, "[data-testid='splitlabChart']")
    if path not in NOT_A_CHART:  # the first chart has drawn (later ones may sit in tabs)
        page.wait_for_function(FIRST_DRAWN, timeout=60_000)
    else:  # the answer sits in an st.fragment, drawn after the page's own run
        page.wait_for_selector(selector, timeout=60_000)
    page.wait_for_timeout(500)  # expanders and automargins settle
    box = page.evaluate(FIRST_CHART, selector)
    assert box is not None, f"/{path} drew no {selector}"
    share = visible_share(box)
    assert share >= 1, (
        f"/{path}: the first chart starts at y = {box['y']:.0f} px and is "
        f"{box['height']:.0f} px tall, so only {share:.0%} of what a 1440×900 first screen "
        "should show is above the fold: fold the secondary controls into an expander"
    )


# A chart's title and subtitle are SVG text: wider than the chart, Plotly clips them at its edges
# (the CP grid's one-line subtitle lost both ends at 1440×900 in half a row). Boxes and the
# chart's own SVG box, from getBoundingClientRect; `clipped_titles` judges them.
TITLE_BOXES = """() => [...document.querySelectorAll("[data-testid=splitlabChart]")].flatMap(c => {
  const svg = c.querySelector('.main-svg');
  if (!svg) return [];
  const s = svg.getBoundingClientRect();
  return [...c.querySelectorAll('text.gtitle, text.gtitle-subtitle')].map(e => {
    const r = e.getBoundingClientRect();
    return {text: e.textContent.trim().slice(0, 60), x0: r.left, x1: r.right,
            left: s.left, right: s.right};
  }).filter(b => b.text && b.x1 > b.x0);
})"""


def clipped_titles(boxes: list[dict], slack_px: float = 2.0) -> list[str]:
    """Titles and subtitles that run past their chart's left or right edge."""
    return [
        f"{b['text']!r}: {b['x0']:.0f}–{b['x1']:.0f} px, its chart {b['left']:.0f}–{b['right']:.0f}"
        for b in boxes
        if b["x0"] < b["left"] - slack_px or b["x1"] > b["right"] + slack_px
    ]


def test_the_clipped_title_check_can_fail():
    inside = {"text": "t", "x0": 110, "x1": 500, "left": 100, "right": 600}
    wide = {"text": "s", "x0": 80, "x1": 620, "left": 100, "right": 600}
    assert clipped_titles([inside]) == [] and len(clipped_titles([inside, wide])) == 1
