"""AppTest: every page renders at defaults, at extreme control values, and with a hostile URL."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.charts import charts
from tests.registry import ROOT, registered_pages

PAGES = [p for p, _ in registered_pages()]
CRASH = "Something went wrong"


def run_app(page: str | None = None, params: dict[str, str] | None = None) -> AppTest:
    """Run app.py (navigation + sidebar) then switch to a page, with URL params seeded."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def run_page(page: str, params: dict[str, str] | None = None) -> AppTest:
    """Run one page file on its own: any exception surfaces as at.exception (no safety net)."""
    at = AppTest.from_file(str(ROOT / page), default_timeout=60)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    crashes = [e.value for e in at.error if CRASH in e.value]
    assert not crashes


def chart_specs(at: AppTest) -> list[dict]:
    return [json.loads(c.spec) for c in charts(at)]


def test_every_page_file_is_registered():
    files = {
        f"app_pages/{f.name}" for f in (ROOT / "app_pages").glob("*.py") if f.name != "__init__.py"
    }
    assert files == set(PAGES)


def test_landing_page_links_every_page():
    at = run_app()
    assert_clean(at)
    assert at.title[0].value == "SplitLab"
    assert len(at.get("page_link")) == len(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_with_charts_at_defaults(page):
    at = run_app(page)
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert chart_specs(at), "no chart drawn"


@pytest.mark.parametrize(
    "page, params",
    [(p, {}) for p in PAGES]
    + [
        ("app_pages/collectives.py", {"cmp": "true"}),
        ("app_pages/memory.py", {"cmp": "true"}),
        ("app_pages/pipeline.py", {"cmp": "true"}),
        ("app_pages/planner.py", {"cmp": "true"}),
    ],
)
def test_every_table_has_a_csv_download(page, params):
    at = run_page(page, params)
    assert_clean(at)
    # st.dataframe has its own CSV button in its toolbar; each static st.table needs one beside it.
    labels = [b.proto.label for b in at.get("download_button")]
    csv = [label for label in labels if "csv" in label.lower()]
    assert len(csv) >= len(at.table), (page, params, len(at.table), labels)


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("end", ["min", "max"])
def test_page_survives_every_slider_at_an_extreme(page, end):
    at = run_page(page)
    assert_clean(at)
    for s in at.slider:
        if s.disabled:  # greyed out for these choices: no user can move it
            continue
        lo, hi = s.proto.min, s.proto.max
        s.set_value(type(s.value)(lo if end == "min" else hi))
    at.run()
    assert_clean(at)
    assert chart_specs(at) or at.error, "neither a chart nor an explanation"


@pytest.mark.parametrize("page", PAGES)
def test_page_survives_every_choice(page):
    at = run_page(page)
    keys = [s.key for s in at.selectbox]  # by key: a choice may hide or add other selectboxes
    for key in keys:
        options = at.selectbox(key=key).options if key in _keys(at) else []
        for option in options:
            if key not in _keys(at):  # an earlier option of this box hid it
                break
            at.selectbox(key=key).set_value(option).run()
            assert_clean(at)
            assert chart_specs(at) or at.error


def _keys(at: AppTest) -> set[str]:
    return {s.key for s in at.selectbox}


@pytest.mark.parametrize("page", PAGES)
def test_hostile_url_values_fall_back_with_a_notice(page):
    keys = [s.key for s in run_page(page).slider][:3]
    if not keys:
        pytest.skip("page has no sliders")
    hostile = dict(zip(keys, ["abc", "1e308", "<script>alert(1)</script>"]))
    at = run_page(page, hostile)
    assert_clean(at)
    notices = " ".join(w.value for w in at.warning)
    for k in keys:
        assert f"`{k}=" in notices, notices
