"""Pipeline page in a real browser: the deferred downloads deliver the simulated timeline."""

import csv
import io
import json

import pytest

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser


def _download(page, label: str) -> str:
    with page.expect_download(timeout=30_000) as info:
        page.get_by_test_id("stDownloadButton").filter(has_text=label).first.click()
    return open(info.value.path(), encoding="utf-8").read()


def test_pipeline_downloads_hold_the_deep_linked_run(page, app_url):
    # ZB-H1, P=3, M=5: 3 ranks × 5 micro-batches × (F, I, W) = 45 ops.
    page.goto(f"{app_url}/pipeline?p=3&m=5&sched=ZB-H1")
    wait_for_app_run(page)
    wait_for_charts(page)
    rows = list(csv.DictReader(io.StringIO(_download(page, "Timeline (CSV)"))))
    assert len(rows) == 45 and {r["kind"] for r in rows} == {"F", "I", "W"}
    trace = json.loads(_download(page, "Chrome trace (JSON)"))
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    assert names == {"rank 0", "rank 1", "rank 2"}
    assert sum(e["ph"] == "X" for e in trace["traceEvents"]) == 45
