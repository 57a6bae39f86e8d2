"""Presenter mode in a real browser at 1280×720 (issue 15 §2), on the home page and every
registered page: body text, captions, tables, expander labels, select values and lists are ≥ 20 px;
the takeaway is ≥ 24 px; no two text boxes of a chart (title, subtitle, axis titles, legend,
annotations) overlap; and the first slide holds the page's first chart (its answer). Sizes come
from computed styles and boxes from getBoundingClientRect of Plotly's SVG groups (.gtitle,
.gtitle-subtitle, .xtitle/.ytitle, .legend, .annotation), not pixels.
"""

from __future__ import annotations

import pytest

from tests.e2e.harness import wait_for_app_run, wait_for_charts
from tests.e2e.test_above_fold import (
    FIRST_CHART,
    NOT_A_CHART,
    TITLE_BOXES,
    clipped_titles,
    visible_share,
)
from tests.registry import registered_pages, url_path

pytestmark = pytest.mark.browser
VIEWPORT = {"width": 1280, "height": 720}
MIN_BODY_PX, MIN_TAKEAWAY_PX = 20, 24
PAGES = [("", "Home")] + [(url_path(p), t) for p, t in registered_pages()]

# Pages other sessions are rewriting now (issue 15): their own charts may still overlap; the global
# causes (title/subtitle spacing, legend placement, automargin) are fixed in figures/theme.py.
KNOWN_OVERLAPS: dict[str, str] = {}

SMALL_TEXT = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const sel = 'p, li, td, th, label, summary, span, div, code';
  const skip = '[data-testid="splitlabChart"], [data-testid="stDataFrame"], '
    + '[data-testid="stTooltipContent"], [data-testid="stSidebar"], .katex, '
    + '[data-testid="stHeading"], [data-testid="stMetricValue"], [data-testid="stIconMaterial"], '
    + '[data-testid="stAlertContentSuccess"] [data-testid="stMarkdownContainer"] ~ *';
  const out = [];
  for (const el of main.querySelectorAll(sel)) {
    if (el.closest(skip)) continue;
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || cs.visibility === 'hidden') continue;
    out.push({text: el.textContent.trim().slice(0, 50), px: parseFloat(cs.fontSize),
              tag: el.tagName.toLowerCase()});
  }
  return out;
}"""

TAKEAWAYS = """() => [...document.querySelectorAll('[class*="st-key-takeaway"] p')]
  .map(p => parseFloat(getComputedStyle(p).fontSize))"""

# The first slide holds the page's first chart (or the answer NOT_A_CHART names, as on a laptop:
# tests/e2e/test_above_fold.py) when at least 60% of its height, or 360 px of a taller one, lies
# above y = 720. 360 px is half the slide: a slide's head (title, question, a one-line takeaway)
# ends near 300 px, so the chart must start by ~360 px and fill the rest. The slides issue 15 named
# showed ~315 px under a four-line takeaway or a three-row legend: a chart's title and a strip of
# its plot, which this rejects.
SLIDE_SHARE, SLIDE_CAP_PX = 0.6, 360.0
CHART = '[data-testid="splitlabChart"]'


def answer(path: str) -> str:
    """The selector of the element a page's first screen answers with."""
    return NOT_A_CHART.get(path, CHART)


# Tops (px from the page's top) of the first takeaway, chart (the page's answer) and control in
# the main area.
SLIDE = """(chart) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const top = sel => { const e = main.querySelector(sel);
                       return e ? e.getBoundingClientRect().top + main.scrollTop : null; };
  return {takeaway: top('[class*="st-key-takeaway"]'), chart: top(chart),
          control: top('[data-testid="stSlider"], [data-testid="stSelectbox"], '
                       + '[data-testid="stNumberInput"]')};
}"""

CHART_BOXES = """() => [...document.querySelectorAll("[data-testid=splitlabChart]")].map(c => {
  const chart = c;
  const boxes = [];
  const add = (el, kind) => {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && (el.textContent || '').trim())
      boxes.push({kind, text: el.textContent.trim().slice(0, 40),
                  x0: r.left, y0: r.top, x1: r.right, y1: r.bottom});
  };
  chart.querySelectorAll('text.gtitle').forEach(e => add(e, 'title'));
  chart.querySelectorAll('text.gtitle-subtitle').forEach(e => add(e, 'subtitle'));
  chart.querySelectorAll('.infolayer text[class$="title"]').forEach(e => {
    const c = e.getAttribute('class');
    if (/^[xy]\\d*title$/.test(c)) add(e, c);
  });
  chart.querySelectorAll('g.legend').forEach(e => add(e, 'legend'));
  chart.querySelectorAll('g.annotation').forEach(e => add(e, 'annotation'));
  // labels drawn on the data (a line's or a bar's text) and tick labels, checked against the rest
  chart.querySelectorAll('.scatterlayer .textpoint text, .barlayer .bartext')
    .forEach(e => add(e, 'label'));
  // an animation's Play / Pause buttons and its slider's "step: …" readout
  chart.querySelectorAll('g.updatemenu-button').forEach(e => add(e, 'button'));
  chart.querySelectorAll('g.slider-group > text.slider-label').forEach(e => add(e, 'readout'));
  chart.querySelectorAll('g.xtick text, g.ytick text').forEach(e => {
    const axis = e.closest('g.xtick') ? 'xtick' : 'ytick';
    // a rotated label's bounding box is wider than its text: only its corner clash is checked
    add(e, /rotate\\((?!0[,)])/.test(e.getAttribute('transform') || '') ? axis + '-rotated' : axis);
  });
  return boxes;
})"""


def _overlaps(boxes: list[dict], slack_px: float = 1.0) -> list[str]:
    """Every pair of text boxes that intersect by more than slack_px in both directions, except two
    labels on the data (cells of a table-like chart sit edge to edge), two buttons of one menu
    (drawn edge to edge), or two rotated tick labels
    of one axis (their axis-aligned boxes overlap where the slanted text does not)."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if a["kind"] == b["kind"] in ("label", "button") or (
                a["kind"][1:5] == b["kind"][1:5] == "tick"  # two ticks of one axis
                and a["kind"][0] == b["kind"][0]
                and "rotated" in a["kind"] + b["kind"]
            ):
                continue
            dx = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
            dy = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
            if dx > slack_px and dy > slack_px:
                found.append(f"{a['kind']} {a['text']!r} × {b['kind']} {b['text']!r}")
    return found


@pytest.fixture(scope="module")
def measured(tab, app_url):
    """Each page once, in presenter mode at 1280×720: text sizes, takeaways, chart text boxes."""
    cache: dict[str, dict] = {}

    def measure(path: str) -> dict:
        if path not in cache:
            page = tab(VIEWPORT)
            page.goto(f"{app_url}/{path}?present=true")
            wait_for_app_run(page)
            wait_for_charts(page)
            page.wait_for_selector(answer(path), timeout=60_000)  # a fragment's, drawn after
            page.wait_for_timeout(800)  # Plotly lays out after drawing (automargin redraws)
            cache[path] = {
                "text": page.evaluate(SMALL_TEXT),
                "takeaways": page.evaluate(TAKEAWAYS),
                "charts": page.evaluate(CHART_BOXES),
                "titles": page.evaluate(TITLE_BOXES),
                "slide": page.evaluate(SLIDE, answer(path)),
                "first": page.evaluate(FIRST_CHART, answer(path)),  # unscrolled: page = viewport
            }
            page.close_all()
        return cache[path]

    return measure


@pytest.mark.parametrize("path, title", PAGES, ids=[p or "home" for p, _ in PAGES])
def test_every_text_element_is_at_least_20px(measured, path, title):
    seen = measured(path)["text"]
    assert seen, f"{title}: no text measured"
    small = [f"{t['px']:.0f}px <{t['tag']}> {t['text']!r}" for t in seen if t["px"] < MIN_BODY_PX]
    assert small == [], f"{title}: text under {MIN_BODY_PX}px in presenter mode: {small[:12]}"


@pytest.mark.parametrize("path, title", [p for p in PAGES if p[0]], ids=[p for p, _ in PAGES if p])
def test_the_takeaway_is_the_big_text(measured, path, title):
    sizes = measured(path)["takeaways"]
    assert sizes and min(sizes) >= MIN_TAKEAWAY_PX, f"{title}: takeaway font sizes {sizes}"


@pytest.mark.parametrize("path, title", [p for p in PAGES if p[0]], ids=[p for p, _ in PAGES if p])
def test_the_slide_reads_takeaway_then_chart_then_controls(measured, path, title):
    at = measured(path)["slide"]
    assert at["takeaway"] < at["chart"] < VIEWPORT["height"], f"{title}: {at}"  # first screen
    assert at["control"] is None or at["chart"] < at["control"], f"{title}: {at}"


@pytest.mark.parametrize("path, title", [p for p in PAGES if p[0]], ids=[p for p, _ in PAGES if p])
def test_the_first_slide_holds_the_chart(measured, path, title):
    box = measured(path)["first"]
    assert box is not None, f"{title}: no {answer(path)}"
    share = visible_share(box, VIEWPORT["height"], SLIDE_SHARE, SLIDE_CAP_PX)
    assert share >= 1, (
        f"{title}: the first chart starts at y = {box['y']:.0f} px and is {box['height']:.0f} px "
        f"tall: {max(0.0, VIEWPORT['height'] - box['y']):.0f} px on the 1280×720 slide, "
        f"{share:.0%} of the {min(SLIDE_SHARE * box['height'], SLIDE_CAP_PX):.0f} px it should "
        "show: shorten the takeaway, or move what sits above the chart under it"
    )


def test_the_slide_rule_can_fail():
    assert visible_share({"y": 300, "height": 500}, 720, SLIDE_SHARE, SLIDE_CAP_PX) >= 1
    assert visible_share({"y": 405, "height": 735}, 720, SLIDE_SHARE, SLIDE_CAP_PX) < 1  # step
    assert visible_share({"y": 330, "height": 250}, 720, SLIDE_SHARE, SLIDE_CAP_PX) >= 1  # whole


@pytest.mark.parametrize(
    "path, title",
    [
        pytest.param(
            p,
            t,
            marks=pytest.mark.xfail(reason=f"{t}: {KNOWN_OVERLAPS[p]}", strict=False)
            if p in KNOWN_OVERLAPS
            else (),
        )
        for p, t in PAGES
    ],
    ids=[p or "home" for p, _ in PAGES],
)
def test_no_two_chart_text_boxes_overlap(measured, path, title):
    charts = measured(path)["charts"]
    assert charts, f"{title}: no chart measured"
    clashes = {i: found for i, boxes in enumerate(charts) if (found := _overlaps(boxes))}
    assert clashes == {}, f"{title}: overlapping chart text (chart index: pairs): {clashes}"


@pytest.mark.parametrize("path, title", PAGES, ids=[p or "home" for p, _ in PAGES])
def test_chart_titles_fit_their_charts(measured, path, title):
    clipped = clipped_titles(measured(path)["titles"])
    assert clipped == [], f"{title}: titles wider than their charts on the slide: {clipped}"


def test_the_overlap_check_can_fail():
    title = {"kind": "title", "text": "t", "x0": 0, "y0": 0, "x1": 100, "y1": 20}
    legend = {"kind": "legend", "text": "l", "x0": 90, "y0": 10, "x1": 200, "y1": 40}
    below = {"kind": "xtitle", "text": "x", "x0": 0, "y0": 21, "x1": 80, "y1": 40}
    assert _overlaps([title, legend]) and not _overlaps([title, below])


# The collectives slide (issue 14): a lecturer projects the ring and steps it, so the ring's
# drawing (its plot area) and its one step control (slider and Next) fit the first 1280×720 screen.
RING_SLIDE = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
  const ring = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => (g.data || []).some(t => t.name === 'chunks'));  // the slide's ring has no title
  const step = [...document.querySelectorAll("[data-testid='stSlider']")]
    .find(e => e.innerText.includes('Step (0 = inputs)'));
  const next = [...document.querySelectorAll('button')].find(b => b.innerText.includes('Next'));
  return {chart: ring && box(ring), plot: ring && box(ring.querySelector('.nsewdrag')),
          step: step && box(step), next: next && box(next)};
}"""


def test_the_ring_and_its_step_control_fit_the_first_slide(tab, app_url):
    page = tab(VIEWPORT)
    try:
        page.goto(f"{app_url}/collectives?present=true")
        wait_for_app_run(page)
        wait_for_charts(page)
        page.wait_for_timeout(800)  # automargins settle
        at = page.evaluate(RING_SLIDE)
        height = VIEWPORT["height"]
        assert all(at.values()), at
        assert 0 < at["chart"]["top"] < height and at["plot"]["bottom"] <= height, at
        assert at["step"]["bottom"] <= height and at["next"]["bottom"] <= height, at
    finally:
        page.close_all()
