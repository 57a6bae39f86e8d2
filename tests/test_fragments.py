"""The fragment guard's worked example: the collectives page's ring section is an `st.fragment`
(app_pages/common/ring_view.py), so moving its step slider reruns that section only. Driven
against a real server over the browser's WebSocket protocol (tests/fragments.py explains why
AppTest cannot show this)."""

import pytest

from tests.fragments import shared_app

PAGE = "app_pages.common:start_page"  # called once per whole-page run, never by a fragment
RING = "figures.collectives:open_at_step"  # the ring section's chart, drawn at the step
CAPTION = "figures.collectives.text:ring_caption"  # outside the fragment, below it


@pytest.fixture(scope="module")
def app():
    return shared_app()  # one spied server for the whole test session


def test_step_reruns_only_the_ring_fragment(app):
    tab = app.open("collectives")
    assert tab.widgets["step"][1], "the step slider should sit inside a fragment"
    with app.counting() as calls:
        tab.move("step", 3)
    assert tab.fragment_run
    assert calls[PAGE] == 0 and calls[CAPTION] == 0  # the page body and its other sections
    assert calls[RING] == 1
    assert tab.charts == ["ring"]  # only the ring chart re-sent: bytes, by_n... are not
    assert not tab.exceptions
    assert "step" in tab.url_bound  # the re-drawn slider is still bound to ?step= in the URL


def test_counts_resolve_re_exports_and_private_servers_count_named_targets(app):
    """The same function counted by the name the page uses and by its defining module's name."""
    calls = app.calls()
    defined_in = calls.aliases[RING]
    assert defined_in.startswith("figures.collectives") and calls[RING] == calls[defined_in]


def test_a_page_slider_reruns_the_whole_page(app):
    """The control: a slider outside every fragment reruns the page, so the spies do count."""
    tab = app.open("collectives")
    assert tab.widgets["n"][1] == ""
    with app.counting() as calls:
        tab.move("n", 4)
    assert not tab.fragment_run
    assert calls[PAGE] == 1 and calls[CAPTION] == 1
    assert calls[RING] >= 1  # once for the chart, plus the animation's own build on a cache miss
    assert "ring" in tab.charts and len(tab.charts) > 1
    assert {"n", "step"} <= tab.url_bound
