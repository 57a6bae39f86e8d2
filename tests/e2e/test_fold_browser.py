"""Issue 15's folded controls in Chromium: a visitor opens the expander, moves its first slider
with the keyboard, and the expander stays open while its label's summary follows the new value
(issue 14: Streamlit 1.67 keys an expander on its label, so the changed summary drew a new,
closed one and the slider the visitor was moving vanished)."""

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser

# (page, the fixed start of the expander's label): one folded expander per page, the first
# slider inside moves a value its summary shows (ranks; t_F; elements per GPU).
CASES = [
    ("trace", "Plan inputs ·"),
    ("pipeline", "Op times and compare ·"),
    ("collectives", "More ·"),
]


@pytest.mark.parametrize("path, what", CASES, ids=[p for p, _ in CASES])
def test_a_folded_expander_stays_open_while_its_values_change(page, app_url, path, what):
    page.goto(f"{app_url}/{path}")
    wait_for_app_run(page)
    wait_for_charts(page)
    box = page.get_by_test_id("stMain").get_by_test_id("stExpander").filter(has_text=what).first
    before = box.locator("summary").inner_text()
    box.locator("summary").click()
    slider = box.get_by_test_id("stSlider").filter(visible=True).first
    expect(slider).to_be_visible()
    thumb = slider.get_by_role("slider")
    value = thumb.get_attribute("aria-valuetext")
    thumb.focus()
    thumb.press("ArrowRight")
    expect(box.locator("summary")).not_to_have_text(before, timeout=15_000)  # the summary moved
    wait_for_app_run(page)
    expect(box.locator("details")).to_have_attribute("open", "")
    moved = box.get_by_test_id("stSlider").filter(visible=True).first.get_by_role("slider")
    expect(moved).to_be_visible()
    assert moved.get_attribute("aria-valuetext") != value
