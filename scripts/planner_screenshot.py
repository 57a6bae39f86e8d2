"""Screenshot the planner at 1440 x 900 (the first screen of a shared link) to
docs/screens/planner_1440.png: `python scripts/planner_screenshot.py`."""

from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.e2e.harness import launch_browser, running_app, wait_for_app_run, wait_for_charts

OUT = Path(__file__).resolve().parents[1] / "docs" / "screens" / "planner_1440.png"

if __name__ == "__main__":
    with running_app() as url, sync_playwright() as p:
        browser = launch_browser(p)
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.goto(f"{url}/planner")
        wait_for_app_run(page, timeout_ms=120_000)
        wait_for_charts(page, timeout_ms=120_000)
        page.screenshot(path=str(OUT))  # the viewport only: what is above the fold
        browser.close()
    print(OUT)
