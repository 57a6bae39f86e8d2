"""Presenter mode: every chart drawn through common.chart switches to the projector theme."""
import json

from streamlit.testing.v1 import AppTest

from figures.theme import OKABE_ITO
from tests.registry import ROOT


def _specs(present: bool) -> list[dict]:
    at = AppTest.from_file(str(ROOT / "app_pages" / "collectives.py"), default_timeout=60)
    at.session_state["present_value"] = present  # what app.py's URL-bound toggle sets
    at.run()
    assert not at.exception
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_presenter_enlarges_type_and_uses_the_safe_palette():
    plain, big = _specs(False), _specs(True)
    assert len(plain) == len(big) >= 2
    assert big[0]["layout"]["font"]["size"] == 20
    assert plain[0]["layout"].get("font", {}).get("size") != 20
    colours = {t["line"]["color"] for t in big[1]["data"] if "color" in t.get("line", {})}
    assert colours and colours <= set(OKABE_ITO)
    assert big[0]["layout"]["height"] > plain[0]["layout"]["height"]


def test_presenter_toggle_is_in_the_url_bound_sidebar():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["present"] = "true"
    at.run()
    assert at.toggle(key="present").value is True
    assert at.session_state["present_value"] is True
