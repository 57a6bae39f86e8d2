"""Session fixtures: one app server and one Chromium for all browser tests."""

import contextlib
import os
from pathlib import Path

import pytest

from tests.e2e.harness import CHROMIUM, ROOT, launch_browser, running_app, wait_for_app_run

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


@pytest.fixture(scope="session")
def context(browser):
    """One browser context for the session, so its HTTP cache stays warm: a page load in a fresh
    context re-fetches Streamlit's and Plotly's JavaScript (~0.8 s against ~0.45 s warm, measured
    for issue 18). Each tab is still its own Streamlit session (sessions are per websocket), and
    `tab` clears cookies and storage between tests so no test sees another's."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def tab(context, app_url):
    """Open a fresh tab in the shared context at a viewport; `.close_all()` closes it and every
    tab opened after it. The entry page runs once first, so st.navigation has run in the server
    before any test deep-links (test_fresh_server_deep_link checks a cold server on its own)."""
    home = context.new_page()
    home.goto(app_url)
    wait_for_app_run(home, 120_000)
    home.close()

    def open_tab(viewport: dict | None = None):
        context.clear_cookies()
        before = list(context.pages)
        pg = context.new_page()
        pg.close_all = lambda: [p.close() for p in context.pages if p not in before]
        if viewport:
            pg.set_viewport_size(viewport)
        pg.requests_seen = []
        pg.on("request", lambda r: pg.requests_seen.append(r.url))
        return pg

    return open_tab


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.failed_call = report.failed
    return report


@pytest.fixture
def page(request, tab, screenshots):
    """A fresh tab; records every request so tests can check nothing leaves 127.0.0.1. A failed
    test leaves what the tab showed in the screenshots folder, <test>.png (passing tests take no
    screenshots: a full-page one costs ~1 s, issue 18)."""
    pg = tab()
    yield pg
    if getattr(request.node, "failed_call", False) and not pg.is_closed():
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in request.node.name)
        with contextlib.suppress(Exception):  # a hung tab must not turn a failure into an error
            pg.screenshot(path=str(screenshots / f"{name}.png"), timeout=10_000)
    pg.close_all()  # the tab and any the test opened from it


@pytest.fixture(scope="session")
def screenshots():
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS
