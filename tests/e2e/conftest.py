"""Session fixtures: one app server and one Chromium for all browser tests."""

import os
from pathlib import Path

import pytest

from tests.e2e.harness import CHROMIUM, ROOT, launch_browser, running_app

SHOTS = ROOT / "tests" / "e2e" / "screenshots"


@pytest.fixture(scope="session")
def app_url():
    with running_app(log_path=ROOT / "tests" / "e2e" / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        msg = f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`"
        if os.environ.get("CI"):
            pytest.fail(msg)  # CI must never pass by skipping the browser
        pytest.skip(msg)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_browser(p)
        yield b
        b.close()


@pytest.fixture
def page(browser, app_url):
    """A fresh tab; records every request so tests can check nothing leaves 127.0.0.1."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.requests_seen = []
    pg.on("request", lambda r: pg.requests_seen.append(r.url))
    yield pg
    context.close()


@pytest.fixture(scope="session")
def screenshots():
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
