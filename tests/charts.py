"""The charts an AppTest run drew: common.chart mounts each as the `splitlab_chart` component
(app_pages/common/plot.py), which AppTest shows as an unknown element holding the proto."""

from __future__ import annotations

import json
from dataclasses import dataclass

from app_pages.common.plot import NAME


@dataclass(frozen=True, kw_only=True)
class Chart:
    key: str  # common.chart's key
    spec: str  # the figure as sent: Plotly JSON
    config: str  # Plotly's config (toolbar, export format) as sent: JSON


def chart_of(proto) -> Chart | None:
    """The chart a BidiComponent proto carries, or None for another component."""
    if proto.component_name != NAME:
        return None
    # the data is bytes: "<Plotly module path>\n<config JSON>\n<figure JSON>" (plot.js unpack)
    lib, config, spec = proto.bytes.decode("utf-8").split("\n", 2)
    assert lib.endswith(".js") and json.loads(config) is not None, lib
    key = proto.id.split("-", 2)[-1]  # "$$ID-<hash>-<key>"
    return Chart(key=key, spec=spec, config=config)


def charts(at) -> list[Chart]:
    """Every chart on the page, in page order."""
    return [c for el in at.get("bidi_component") if (c := chart_of(el.proto))]


def specs(at) -> list[dict]:
    """Every chart's figure, parsed."""
    return [json.loads(c.spec) for c in charts(at)]
