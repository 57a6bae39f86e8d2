"""Memory page in a real browser (issue 14 item 4): the ZeRO-stage radio changes the main chart —
its bar is drawn solid, the others faded, and the title names it — read from the figure's data,
not from pixels.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser

# The first chart's traces as Plotly holds them in the page: name and per-bar opacity.
READ = """() => {
  const gd = document.querySelectorAll('[data-testid="splitlabChart"] .js-plotly-plot')[0];
  return {
    title: gd.layout.title.text,
    opacity: gd.data.filter(t => t.name === 'Parameters').map(t => t.marker.opacity)[0],
    notes: gd.layout.annotations.map(a => a.text),
  };
}"""


def test_changing_the_zero_stage_changes_the_memory_figure(page, app_url):
    page.goto(f"{app_url}/memory")
    wait_for_app_run(page)
    wait_for_charts(page)
    before = page.evaluate(READ)
    assert before["title"].endswith("ZeRO-3 selected")
    assert before["opacity"] == [0.45, 0.45, 0.45, 1]
    assert sum("saves" in n for n in before["notes"]) == 3  # savings between the bars
    page.get_by_test_id("stMain").get_by_role("radiogroup").first.get_by_text(
        "1", exact=True
    ).click()
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r"zero=1"))
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"splitlabChart\"] .js-plotly-plot')"
        ".layout.title.text.endsWith('ZeRO-1 selected')",
        timeout=15_000,
    )
    after = page.evaluate(READ)
    assert after["opacity"] == [0.45, 1, 0.45, 0.45]
    assert after != before
