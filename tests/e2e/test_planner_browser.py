"""Planner in a real browser: a click on a ranked-table row draws that layout and puts it in the
URL.
"""

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from core.hardware import make_cluster
from core.model import preset
from core.planner import Training, search
from core.units import format_seconds
from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser
HEADER_PX = ROW_PX = 35  # Streamlit's data grid: header and row heights


def _step_metric(page) -> str:
    metric = page.get_by_test_id("stMetric").filter(has_text="Step time")
    return metric.get_by_test_id("stMetricValue").inner_text()


def test_planner_row_click_draws_the_layout_and_the_link_restores_it(page, app_url):
    res = search(
        preset("Llama-2 70B"),
        make_cluster(num_nodes=8),
        Training(global_batch=1152, seq_len=4096, recompute="selective"),
    )  # the page's defaults
    third = res.ranked[2]
    page.goto(f"{app_url}/planner")
    wait_for_app_run(page)
    wait_for_charts(page)
    assert _step_metric(page) == format_seconds(res.fastest.step_time_s)
    grid = page.get_by_test_id("stDataFrame").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(
        box["x"] + 15, box["y"] + HEADER_PX + 2 * ROW_PX + ROW_PX / 2
    )  # row checkbox, rank 3
    expect(page).to_have_url(re.compile(r"pick=custom"))
    wait_for_app_run(page)
    wait_for_charts(page)
    assert _step_metric(page) == format_seconds(third.step_time_s)
    query = parse_qs(urlparse(page.url).query)
    lay = third.layout
    defaults = {
        "dp": "1",
        "tp": "8",
        "pp": "8",
        "mb": "1",
    }  # values equal to a default stay out of the URL
    for key, value in {"dp": lay.dp, "tp": lay.tp, "pp": lay.pp, "mb": lay.micro_batch}.items():
        assert query.get(key, [defaults[key]]) == [str(value)], (key, page.url)
    other = page.context.new_page()
    other.goto(page.url)
    wait_for_app_run(other)
    wait_for_charts(other)
    assert _step_metric(other) == format_seconds(third.step_time_s)
    other.close()


def test_answer_is_above_the_fold_at_1440x900(tab, app_url):
    """A shared link's first screen: the metrics, the MFU caveat and the "why" paragraph all end
    above y = 900 in a 1440 x 900 window (docs/screens/planner_1440.png is this view)."""
    page = tab({"width": 1440, "height": 900})
    page.goto(f"{app_url}/planner")
    wait_for_app_run(page)
    wait_for_charts(page)
    for locator in (
        page.get_by_test_id("stMetric").filter(has_text="Step time"),
        page.get_by_test_id("stMetric").filter(has_text="MFU"),
        page.get_by_test_id("stMetric").filter(has_text="Memory"),
        page.get_by_text("Fitted on A100 only", exact=False),
        page.get_by_text("Recommended:", exact=False),
    ):
        box = locator.first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 900, box
    page.close_all()
