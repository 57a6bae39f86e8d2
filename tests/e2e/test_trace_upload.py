"""Plan vs trace in a real browser: the file uploader takes a broken file and the demo traces."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import ROOT, wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser
DEMO = sorted((ROOT / "data" / "traces").glob("ddp_gloo_rank*.json.gz"))


def test_upload_a_broken_file_then_the_demo_traces(page, app_url):
    page.goto(f"{app_url}/trace?demo=false")
    wait_for_app_run(page)
    expect(page.get_by_text("Upload one trace per rank")).to_be_visible()
    picker = page.get_by_test_id("stFileUploader").locator("input[type=file]")
    picker.set_input_files(
        {
            "name": "broken.json",
            "mimeType": "application/json",
            "buffer": b'{"traceEvents": [{"ph": "X", "ts": 1',
        }
    )
    wait_for_app_run(page)
    expect(page.get_by_test_id("stAlertContentError")).to_contain_text(
        "broken.json: the JSON ends early"
    )
    expect(page.get_by_test_id("stException")).to_have_count(0)
    # A multi-file uploader keeps adding files: start a fresh session for the good ones.
    page.goto(f"{app_url}/trace?demo=false")
    wait_for_app_run(page)
    picker.set_input_files([str(p) for p in DEMO])
    wait_for_app_run(page)
    # the upload's rerun can start after the check above: wait for the three charts, then count
    page.wait_for_function(
        "document.querySelectorAll(\"[data-testid='splitlabChart']\").length >= 3", timeout=60_000
    )
    assert wait_for_charts(page) == 3  # the trace, the plan, the breakdown
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)
    expect(page.get_by_test_id("stMetric").filter(has_text="Step time: trace")).to_contain_text(
        "ms"
    )
    assert all(Path(p).exists() for p in DEMO)
