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


def test_n_reruns_the_sections_it_feeds_not_the_page(app):
    """N feeds the ring, its caption and the algorithms: one fragment (app_pages/collectives.py),
    so the title, takeaway and self-checks are not re-sent."""
    tab = app.open("collectives")
    assert tab.widgets["n"][1] and tab.widgets["n"][1] != tab.widgets["step"][1]
    with app.counting() as calls:
        tab.move("n", 4)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE] == 0 and calls[CAPTION] == 1
    assert calls["app_pages.common.lesson:self_check"] == 0
    assert calls[RING] >= 1  # once for the chart, plus the animation's own build on a cache miss
    assert "ring" in tab.charts and len(tab.charts) > 1
    assert {"n", "step"} <= tab.url_bound  # the nested ring fragment's bound slider too
    # the algorithms' fragment follows N (its on_change reruns both); bytes per GPU, which N
    # does not feed, is not rebuilt nor re-sent
    assert {"by_n", "by_size", "a2a_blocks"} <= set(tab.charts) and "bytes" not in tab.charts
    assert calls["app_pages.common.coll_view:bytes_scan"] == 0


def test_s_reruns_the_bytes_section_too(app):
    tab = app.open("collectives")
    kind, _, proto = tab.widgets["size"]
    assert kind == "selectbox"
    before = tab.specs["bytes"]
    with app.counting() as calls:
        tab.move("size", list(proto.options).index("8 GB"))
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE] == 0 and calls["app_pages.common.coll_view:bytes_scan"] == 1
    assert "bytes" in tab.charts  # re-sent; an unchanged chart (the ring) comes as a reference
    assert {"ring", "bytes", "by_n", "a2a_blocks"} <= set(tab.charts) | set(tab.kept)
    assert tab.specs["bytes"] != before  # 8 GB per GPU: other bytes on the y axis


def test_a_sidebar_setting_reruns_the_whole_page(app):
    """The control: a widget outside every fragment reruns the page, so the spies do count."""
    tab = app.open("collectives")
    kind, where, proto = tab.widgets["mem"]
    assert kind == "radio" and where == ""
    with app.counting() as calls:
        tab.move("mem", 1 - proto.default)  # GB ↔ GiB, by index
    assert not tab.fragment_run and not tab.exceptions
    assert calls[PAGE] == 1 and calls[CAPTION] == 1


def test_a_selectbox_moves_by_shown_label_or_by_index(app):
    """Streamlit 1.67 carries a selectbox's value as its shown label (string_value)."""
    tab = app.open("collectives")
    kind, _, proto = tab.widgets["link"]
    assert kind == "selectbox" and len(proto.options) > 2
    before = tab.specs["ring"]
    tab.move("link", proto.options[-1] if proto.options[-1] != "NVLink 4" else proto.options[0])
    assert not tab.exceptions
    assert tab.specs["ring"] != before  # another link: other byte and time readouts in the ring
    tab.move("link", list(proto.options).index("NVLink 4"))  # back, by index
    assert not tab.exceptions and tab.specs["ring"] == before


# Each page's first slider (the one the benchmark moves; benchmarks/cases.py) and a move of one
# step: every chart drawn in both runs must keep its place (its delta path), or the browser builds
# it anew though nothing in it changed (docs/notes/plotly.md §3, "Moved").
FIRST_SLIDERS = {
    "collectives": "n",
    "training_step": "nodes",
    "self_check": "seed",
    "data_parallel": "n",
    "tensor_parallel": "tp",
    "pipeline": "p",
    "memory": "dp",
    "context_parallel": "c",
    "expert_parallel": "k",
    "planner": "nodes",
    "reliability": "gpus",
    "trace": "n",
}


@pytest.mark.parametrize("page, key", sorted(FIRST_SLIDERS.items()))
def test_a_slider_move_leaves_every_chart_in_its_place(app, page, key):
    tab = app.open(page)
    kind, _, proto = tab.widgets[key]
    assert kind == "slider"
    now = (list(proto.value) or list(proto.default))[0]
    before = dict(tab.paths)
    tab.move(key, now + proto.step if now + proto.step <= proto.max else now - proto.step)
    assert not tab.exceptions
    moved = {k: (before[k], p) for k, p in tab.paths.items() if k in before and before[k] != p}
    assert moved == {}, f"charts that moved on /{page} when {key} moved: {moved}"


@pytest.mark.parametrize("page, key", sorted(FIRST_SLIDERS.items()))
def test_a_first_slider_reruns_a_fragment_not_the_page(app, page, key):
    """Issue 18: a slider reruns only the section it feeds, never the whole page; the title, the
    sidebar and every section it does not feed stay as they are (not re-sent)."""
    tab = app.open(page)
    whole = len(tab.elements)
    kind, fragment, proto = tab.widgets[key]
    assert fragment, f"/{page}: the {key} slider sits outside every fragment"
    now = (list(proto.value) or list(proto.default))[0]
    with app.counting() as calls:
        tab.move(key, now + proto.step if now + proto.step <= proto.max else now - proto.step)
    assert tab.fragment_run and not tab.exceptions
    assert calls["app_pages.common:start_page"] == 0  # the title did not rerun
    assert calls["app_pages.common:sidebar_settings"] == 0  # nor the sidebar
    assert len(tab.elements) < whole, f"/{page}: the move re-sent the whole page"
