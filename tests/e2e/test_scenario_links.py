"""Real browser: every link on the scenarios page opens its page with the stated configuration."""

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import expect

from core import scenarios as cs
from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser
SCENARIOS = {
    "Size 70B": cs.size_70b,
    "DP scale-out": cs.scale_out,
    "3D placement": cs.placement,
    "GPipe vs 1F1B": cs.gpipe_vs_1f1b,
    "DDP vs FSDP": cs.ddp_vs_fsdp,
    "The sentence": cs.sentence,
}
TIMEOUT = 120_000  # the machine is shared: generous waits, never a sleep


def _open_scenario(page, app_url, label, charts=True):
    page.goto(f"{app_url}/scenarios?sc={label.replace(' ', '+')}")
    wait_for_app_run(page, TIMEOUT)
    if charts:  # reopened only to click the next link: its charts were checked on the first open
        wait_for_charts(page, TIMEOUT)
    return page.get_by_test_id("stMain").get_by_test_id("stPageLink").locator("a")


def widget_value(page, key: str) -> str:
    """What the widget with this key shows, spelled as in the URL (Streamlit adds class
    st-key-<key>).
    """
    box = page.get_by_test_id("stMain").locator(f".st-key-{key}")
    expect(box).to_have_count(1, timeout=TIMEOUT)
    if not box.is_visible():  # secondary controls sit in a collapsed expander (issue 15): open it
        folded = page.get_by_test_id("stExpander").filter(has=page.locator(f".st-key-{key}"))
        folded.locator("summary").first.click()
        expect(box).to_be_visible(timeout=TIMEOUT)
    if box.locator("input[type=range]").count():
        return box.locator("input[type=range]").get_attribute("aria-valuetext")
    if box.locator("input[type=radio]").count():
        return box.locator("label:has(input[type=radio]:checked)").inner_text().strip()
    if box.locator("input[type=checkbox]").count():
        return str(box.locator("input[type=checkbox]").is_checked()).lower()
    return box.locator("input").first.input_value()


@pytest.mark.parametrize("label", SCENARIOS)
def test_every_scenario_link_opens_its_page_preloaded(page, app_url, label):
    expected = SCENARIOS[label]().links
    links = _open_scenario(page, app_url, label)
    expect(links).to_have_count(len(expected), timeout=TIMEOUT)
    hrefs = [links.nth(i).get_attribute("href") for i in range(len(expected))]
    for href, link in zip(hrefs, expected):  # each link says what the core stated
        stem = link.page.split("/")[-1][:-3]
        assert urlsplit(href).path.endswith(stem), href
        assert dict(parse_qsl(urlsplit(href).query)) == dict(link.params)
    for i, link in enumerate(expected):
        # the first link is followed from the page above; the others likewise, after reopening it
        if i:
            links = _open_scenario(page, app_url, label, charts=False)
        links.nth(i).click()
        stem = link.page.split("/")[-1][:-3]
        expect(page).to_have_url(re.compile(rf"/{stem}(\?|$)"), timeout=TIMEOUT)
        wait_for_app_run(page, TIMEOUT)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        expect(page.get_by_text("was ignored")).to_have_count(0)
        for key, value in link.params:
            assert widget_value(page, key) == value, (label, link.label, key)
