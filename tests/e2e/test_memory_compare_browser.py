"""Memory page in a real browser: layout B from a deep link, its controls write the URL, the toggle
hides it.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser
DEEP = "memory?cmp=true&b_dp=4&b_tp=2&b_zero=1"


def _ticks(page) -> list[str]:
    return page.locator("[data-testid='splitlabChart'] .xtick text").evaluate_all(
        "t => t.map(e => e.textContent)"
    )


def test_deep_link_draws_a_vs_b_and_b_controls_round_trip(page, app_url):
    page.goto(f"{app_url}/{DEEP}")
    wait_for_app_run(page)
    assert wait_for_charts(page) == 3  # ZeRO stages, A vs B, recompute trade
    expect(page.get_by_role("heading", name="Layout A vs layout B")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    ticks = _ticks(page)
    assert (
        "A: DP 8 · TP 1 · PP 1 · ZeRO-3 · mb 1" in ticks
        and "B: DP 4 · TP 2 · PP 1 · ZeRO-1 · mb 1" in ticks
    )
    # Moving B's DP slider writes b_dp to the URL; a second visitor opening it sees B at DP 5.
    thumb = page.get_by_role("slider", name="B: DP")
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r"b_dp=5"))
    other = page.context.new_page()
    other.goto(page.url)
    wait_for_app_run(other)
    wait_for_charts(other)
    assert "B: DP 5 · TP 2 · PP 1 · ZeRO-1 · mb 1" in _ticks(other)
    other.close()
    # Switching the comparison off removes B's section and chart.
    page.get_by_test_id("stMain").get_by_text("Compare with layout B").click()
    wait_for_app_run(page)
    expect(page.get_by_role("heading", name="Layout A vs layout B")).to_have_count(0)
    # retried until the rerun has removed B's chart (a count taken mid-rerun can still see it)
    expect(page.get_by_test_id("splitlabChart")).to_have_count(2, timeout=15_000)
