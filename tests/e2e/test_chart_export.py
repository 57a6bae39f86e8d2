"""Real browser: a chart's camera button saves a real PNG, or a real SVG when the sidebar says
so.
"""

import pytest

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser


def _download_second_chart(page, app_url, query: str):
    page.goto(f"{app_url}/tensor_parallel{query}")
    wait_for_app_run(page)
    wait_for_charts(page)
    # The first *plotted* chart: the page opens with a drawing of the split (shapes and text), the
    # "who holds what" chart follows it.
    chart = page.get_by_test_id("splitlabChart").nth(1)
    chart.hover()  # Plotly shows its toolbar on hover
    button = chart.locator(".modebar-btn[data-title^='Download plot']")
    with page.expect_download(timeout=30_000) as info:
        button.click()
    download = info.value
    return download.suggested_filename, open(download.path(), "rb").read()


@pytest.mark.parametrize(
    "query, suffix, magic", [("", ".png", b"\x89PNG\r\n\x1a\n"), ("?img=SVG", ".svg", b"<svg")]
)
def test_camera_button_downloads_the_chosen_format(page, app_url, query, suffix, magic):
    name, data = _download_second_chart(page, app_url, query)
    assert name.startswith("splitlab-") and name.endswith(suffix), name
    assert data.startswith(magic), data[:40]
    assert len(data) > 5_000  # a drawn chart, not an empty canvas
    if suffix == ".svg":
        assert b"who holds what" in data  # the chart's own title, as vector text
