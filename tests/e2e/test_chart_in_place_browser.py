"""A slider redraws the charts it feeds in place, once each, and leaves the others alone
(app_pages/common/plot.js). Streamlit's own chart (st.plotly_chart) replaced the element of any
chart whose figure changed and drew it twice (docs/notes/plotly.md §3, §6)."""

import json

import pytest

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser

# Each chart's key (its element's st-key-<key> class), title, draws so far, and whether it is the
# very <div> marked before the move.
PLOTS = "[data-testid='splitlabChart'] .js-plotly-plot"
CHARTS = """() => [...document.querySelectorAll("__PLOTS__")].map(g => {
  const host = g.closest('[class*=st-key-]');
  return {key: host.className.match(/st-key-([\\w-]+)/)[1], drawn: g.__drawn || 0,
          marked: g.__mark === 'before', title: g.layout.title.text};
})""".replace("__PLOTS__", PLOTS)


def test_a_slider_redraws_its_charts_in_place_once_and_no_other(page, app_url):
    page.goto(f"{app_url}/data_parallel")
    wait_for_app_run(page)
    count = wait_for_charts(page)
    page.wait_for_timeout(300)
    page.evaluate(f"""() => document.querySelectorAll("{PLOTS}")
                           .forEach(g => {{ g.__mark = 'before'; }})""")
    before = {c["key"]: c for c in page.evaluate(CHARTS)}
    assert len(before) == count >= 6
    assert before["dp_draw"]["title"].startswith("Data parallelism")
    thumb = page.get_by_test_id("stMain").get_by_test_id("stSlider").first.get_by_role("slider")
    assert thumb.input_value() == "4"
    thumb.focus()
    thumb.press("ArrowRight")  # N: 4 → 5
    wait_for_app_run(page)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.js-plotly-plot')]
                 .some(g => g.layout && /N=5/.test(g.layout.title.text))""",
        timeout=30_000,
    )
    page.wait_for_timeout(500)  # any second draw would land by now
    after = {c["key"]: c for c in page.evaluate(CHARTS)}
    assert after.keys() == before.keys()
    assert all(c["marked"] for c in after.values()), "a chart's element was replaced"
    redrawn = {k for k in after if after[k]["drawn"] != before[k]["drawn"]}
    # N feeds the drawing, the gradient proof and the loss curves; nothing else on the page
    assert redrawn == {"dp_draw", "grad", "loss"}, json.dumps(after)
    assert all(after[k]["drawn"] == before[k]["drawn"] + 1 for k in redrawn)
    assert "N=5" in after["grad"]["title"] and "N=4" in before["grad"]["title"]
