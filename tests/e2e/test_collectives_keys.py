"""Collectives page in a real browser: ← / → / Home step the ring animation and write the step to
the
URL.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser


def _ring_title(page, containing: str) -> str:
    """The ring chart's title once it contains `containing` (the chart may mount after the
    others).
    """
    page.wait_for_function(
        """(text) => [...document.querySelectorAll("[data-testid='splitlabChart'] .gtitle")]
                     .some(t => t.textContent.startsWith('ring N=') &&
                     t.textContent.includes(text))""",
        arg=containing,
        timeout=15_000,
    )
    return next(
        t
        for t in page.locator("[data-testid='splitlabChart'] .gtitle").all_text_contents()
        if t.startswith("ring N=")
    )


def _centre(page) -> str:
    """The ring's centre text: phase, step, and the running bytes · time counters."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.js-plotly-plot')]
             .find(g => g.layout.title && g.layout.title.text.startsWith('ring N='))
             .data.find(d => d.name === 'step').text[0]"""
    )


def _landed(page) -> None:
    """Wait until the ring's glide (app_pages/common/plot.js) has played to its last frame: the
    chart opens at the start of the move, and the counters follow the animation."""
    page.wait_for_function(
        """() => { const g = [...document.querySelectorAll('.js-plotly-plot')]
             .find(g => g.layout.title && g.layout.title.text.startsWith('ring N='));
             const m = g && g.layout.meta && g.layout.meta.glide;
             return !!g && (!m || g.__glideLanded === m.token); }""",
        timeout=15_000,
    )


def _press(page, key: str) -> None:
    """Press a key with nothing focused (the page body), as a presenter would, then let the rerun
    finish.
    """
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)
    page.wait_for_timeout(300)  # the shortcut's rerun starts
    wait_for_app_run(page)


def test_arrow_keys_step_the_ring_and_the_url(page, app_url):
    page.goto(f"{app_url}/collectives")
    wait_for_app_run(page)
    wait_for_charts(page)
    assert "step=" not in page.url
    assert "step 0 of 14 · inputs" in _ring_title(page, "step 0 of 14")

    _press(page, "ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]step=1(&|$)"), timeout=15_000)
    assert "reduce-scatter" in _ring_title(page, "step 1 of 14")
    _landed(page)  # the counter is read where the glide lands, not where it starts
    assert "125 MB" in _centre(page)  # one S/8 chunk of 1 GB (decimal units by default)
    expect(page.get_by_test_id("stMetricValue").first).to_have_text("1 of 14")

    _press(page, "ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]step=2(&|$)"), timeout=15_000)
    _press(page, "ArrowLeft")
    expect(page).to_have_url(re.compile(r"[?&]step=1(&|$)"), timeout=15_000)
    _press(page, "Home")
    expect(page).not_to_have_url(re.compile(r"step=[1-9]"), timeout=15_000)  # 0 is the default
    assert _ring_title(page, "step 0 of 14") == "ring N=8 on NVLink 4 · step 0 of 14 · inputs"
    # blob: the chart component's module, made in the page from the app's own message
    assert all(u.startswith((app_url, "data:", f"blob:{app_url}")) for u in page.requests_seen)


def test_deep_linked_step_and_algorithms_open_where_the_link_says(page, app_url):
    page.goto(f"{app_url}/collectives?step=5&cmp=true&alg_a=Naive&alg_b=Halving-doubling")
    wait_for_app_run(page)
    wait_for_charts(page)
    assert "reduce-scatter" in _ring_title(page, "step 5 of 14")
    assert "625 MB" in _centre(page)  # 5 × 1e9/8 B = 625 MB
    for side in ("A · Naive", "B · Halving-doubling"):
        expect(
            page.locator("[data-testid='splitlabChart'] .annotation-text", has_text=side)
        ).to_have_count(1)


def test_arrow_on_a_focused_slider_moves_that_slider_only(page, app_url):
    # The shortcuts must not hijack a focused slider (the benchmark moves N's thumb with
    # ArrowRight).
    page.goto(f"{app_url}/collectives")
    wait_for_app_run(page)
    wait_for_charts(page)
    thumb = page.get_by_role("slider").first
    thumb.focus()
    thumb.press("ArrowRight")
    expect(page).to_have_url(re.compile(r"[?&]n=9(&|$)"), timeout=15_000)
    wait_for_app_run(page)
    page.wait_for_timeout(500)  # a hijacked shortcut would start a second rerun by now
    wait_for_app_run(page)
    expect(page).not_to_have_url(re.compile(r"step="), timeout=5_000)
    expect(
        page.get_by_test_id("stSlider").filter(has_text="Step (0 = inputs)").get_by_role("slider")
    ).to_have_attribute("aria-valuetext", "0")
    assert "step 0 of 16" in _ring_title(page, "ring N=9")


def test_sum_by_eye_builds_its_grid_when_opened(page, app_url):
    """The expander is lazy (issue 18: a closed grid cost every move ~50 ms in the browser):
    closed, no grid is on the page; a click reruns the ring fragment and the grid appears, with
    the sum row."""
    page.goto(f"{app_url}/collectives")
    wait_for_app_run(page)
    wait_for_charts(page)
    assert page.get_by_test_id("stDataFrame").count() == 0
    page.get_by_text("Check a sum by eye").click()
    grid = page.get_by_test_id("stDataFrame")
    expect(grid).to_have_count(1, timeout=15_000)
    expect(grid).to_be_visible()
