"""Presenter mode: every chart drawn through common.chart switches to the projector theme."""

import json
from urllib.parse import parse_qsl

from streamlit.testing.v1 import AppTest

from app_pages.common import SETTINGS_KEY, Settings
from figures.theme import OKABE_ITO, _is_grey
from tests.charts import charts
from tests.registry import ROOT


def _specs(present: bool) -> list[dict]:
    at = AppTest.from_file(str(ROOT / "app_pages" / "collectives.py"), default_timeout=60)
    at.session_state[SETTINGS_KEY] = Settings(presenter=present)  # what the sidebar toggle sets
    at.run()
    assert not at.exception
    return [json.loads(c.spec) for c in charts(at)]


def test_presenter_enlarges_type_and_uses_the_safe_palette():
    plain, big = _specs(False), _specs(True)
    assert len(plain) == len(big) >= 2
    assert big[0]["layout"]["font"]["size"] == 20
    assert plain[0]["layout"].get("font", {}).get("size") != 20
    colours = {t["line"]["color"] for t in big[1]["data"] if "color" in t.get("line", {})}
    greys = {c for c in colours if _is_grey(c)}  # e.g. the #888 asymptote: neutrals stay neutral
    assert colours - greys and colours - greys <= set(OKABE_ITO)
    # Taller: the bytes chart (the ring, chart 0, is sized to fit the 1280×720 slide
    # under the takeaway instead: tests/e2e/test_presenter_browser.py)
    assert big[1]["layout"]["height"] > plain[1]["layout"]["height"]


def test_presenter_toggle_is_in_the_url_bound_sidebar():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["present"] = "true"
    at.run()
    assert at.toggle(key="present").value is True
    assert at.session_state[SETTINGS_KEY].presenter is True


def _configs(image_format: str | None) -> list[dict]:
    at = AppTest.from_file(str(ROOT / "app_pages" / "memory.py"), default_timeout=60)
    if image_format is not None:
        at.session_state[SETTINGS_KEY] = Settings(image_format=image_format)  # the sidebar radio
    at.run()
    assert not at.exception
    return [json.loads(c.config) for c in charts(at)]


def test_chart_toolbar_saves_png_by_default_and_svg_when_chosen():
    png, svg = _configs(None), _configs("svg")
    assert png and len(png) == len(svg)
    assert {c["toImageButtonOptions"]["format"] for c in png} == {"png"}
    assert {c["toImageButtonOptions"]["scale"] for c in png} == {2}  # crisp on a projector
    assert {c["toImageButtonOptions"]["format"] for c in svg} == {"svg"}
    assert all("scale" not in c["toImageButtonOptions"] for c in svg)  # vectors need no scale
    names = [c["toImageButtonOptions"]["filename"] for c in svg]
    assert len(set(names)) == len(names) and all(n.startswith("splitlab-") for n in names)
    assert all(c["displaylogo"] is False for c in png + svg)


def test_chart_format_is_a_url_bound_sidebar_choice():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["img"] = "SVG"
    at.run()
    assert at.session_state[SETTINGS_KEY].image_format == "svg"
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["img"] = "gif"
    at.run()
    assert at.session_state[SETTINGS_KEY].image_format == "png"
    assert any("img=gif" in w.value for w in at.warning)  # the ignored value is named


def test_scenario_links_keep_presenter_mode():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["present"] = "true"
    at.run()
    at.switch_page("app_pages/scenarios.py").run()
    queries = [link.proto.query_string for link in at.get("page_link")]
    assert queries and all("present=true" in q for q in queries), queries


def test_memory_sizing_links_keep_presenter_mode_and_bandwidth_units():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["present"] = "true"
    at.query_params["bw"] = "GiB/s"
    at.run()
    at.switch_page("app_pages/memory.py").run()
    links = [
        part.split(")", 1)[0] for md in at.markdown for part in md.value.split("](memory?")[1:]
    ]
    queries = [dict(parse_qsl(link)) for link in links]
    assert queries and all(q["present"] == "true" and q["bw"] == "GiB/s" for q in queries), links


def _page_order(present: bool) -> list[str]:
    """The pipeline page's main-area elements in order: 'takeaway', 'chart' or other."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "pipeline.py"), default_timeout=60)
    at.session_state[SETTINGS_KEY] = Settings(presenter=present)
    at.run()
    assert not at.exception

    def walk(node):
        kind = getattr(node, "type", "")
        if kind == "bidi_component":
            yield "chart"
        elif kind == "success" and "Takeaway." in node.value:
            yield "takeaway"
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    return list(walk(at.main))


def test_presenter_puts_the_takeaway_above_the_charts_as_the_headline():
    plain, slide = _page_order(False), _page_order(True)
    assert plain.count("takeaway") == slide.count("takeaway") == 1
    assert plain.index("takeaway") > plain.index("chart")  # laptop: controls → chart → takeaway
    assert slide.index("takeaway") < slide.index("chart")  # slide: the claim, then the evidence
