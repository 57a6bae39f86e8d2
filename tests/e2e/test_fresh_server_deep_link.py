"""A shared link must work as the very first request a freshly started server sees.

Streamlit 1.67 routes requests the legacy way (a `app_pages/` folder auto-discovered, app.py
skipped)
until some session has run st.navigation; page files therefore live in app_pages/, not app_pages/.
"""

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import running_app, wait_for_app_run, wait_for_charts
from tests.registry import ROOT, registered_pages, url_path

pytestmark = pytest.mark.browser


def test_first_request_is_a_deep_link(browser):
    path, title = registered_pages()[0]
    with running_app(log_path=ROOT / "tests" / "e2e" / "streamlit-fresh.log") as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/{url_path(path)}?mem=GB")
        wait_for_app_run(page)
        wait_for_charts(page)
        sidebar = page.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("Units")).to_be_visible()  # app.py ran
        expect(sidebar.get_by_text("Home")).to_be_visible()  # st.navigation's menu
        expect(sidebar.get_by_text("common")).to_have_count(0)  # not legacy discovery
        expect(page.get_by_role("heading", name=title).first).to_be_visible()
        assert page.get_by_role("radio", name="GB", exact=True).is_checked()
        page.close()
