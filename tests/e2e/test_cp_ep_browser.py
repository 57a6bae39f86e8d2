"""The context- and expert-parallel pages in Chromium: every chart draws, the first slider redraws
a chart, the walk's Next button moves the URL-bound step. The docs' screenshots of these pages
(docs/screens/context_parallel_1440.png, expert_parallel_1440.png) come from scripts/screens.py."""

import re
import statistics

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import slider_to_chart_ms, wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    "path, shot, charts", [("context_parallel", "cp", 6), ("expert_parallel", "ep", 5)]
)
def test_page_draws_walks_and_redraws(page, app_url, path, shot, charts):
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(f"{app_url}/{path}")
    wait_for_app_run(page)
    page.wait_for_function(  # the script streams: wait for every chart element, then their SVGs
        f"document.querySelectorAll(\"[data-testid='splitlabChart']\").length >= {charts}",
        timeout=60_000,
    )
    assert wait_for_charts(page) == charts
    expect(page.get_by_text("Something went wrong")).to_have_count(0)
    page.get_by_role("button", name="Walk me through it").click()
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r"walk=1"))
    thumb = page.get_by_test_id("stMain").get_by_test_id("stSlider").first.get_by_role("slider")
    times = [slider_to_chart_ms(page, thumb, key)[0] for key in ("ArrowRight", "ArrowLeft") * 3]
    print(f"{path}: slider → first chart redrawn, ms: {[round(t) for t in times]}")
    assert statistics.median(times) < 5000  # a smoke check on a shared box; budgets: benchmarks
