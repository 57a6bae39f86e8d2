"""The chart's JSON memo (app_pages/common/plot.py `drawn_json`): one build per figure object and
variant, a fresh build for any other object (equal or not), and a bounded size."""

import importlib
import json

# the module, not the function app_pages.common re-exports under the same name
plot = importlib.import_module("app_pages.common.plot")


def counting_build():
    calls = []

    def build(fig):
        calls.append(fig)
        return {**fig, "layout": {"height": 300}}

    return build, calls


def test_the_same_object_and_variant_is_built_once():
    build, calls = counting_build()
    fig = {"data": [{"type": "bar", "y": [1, 2, 3]}]}
    first = plot.drawn_json(fig, ("k", False, None, 1.0), build)
    again = plot.drawn_json(fig, ("k", False, None, 1.0), build)
    assert first == again and len(calls) == 1
    assert json.loads(first) == {
        "data": [{"type": "bar", "y": [1, 2, 3]}],
        "layout": {"height": 300},
    }
    plot.drawn_json(fig, ("k", True, None, 1.0), build)  # presenting: another variant
    assert len(calls) == 2


def test_another_object_is_built_again_even_when_equal():
    """Identity, not equality: a page that builds a new figure each rerun gets its own JSON."""
    build, calls = counting_build()
    a = {"data": [{"y": [1]}]}
    b = {"data": [{"y": [1]}]}
    plot.drawn_json(a, ("k",), build)
    plot.drawn_json(b, ("k",), build)
    assert calls == [a, b] and calls[0] is a and calls[1] is b


def test_the_memo_keeps_at_most_its_entries():
    build, calls = counting_build()
    figs = [{"data": [{"y": [i]}]} for i in range(plot.DRAWN_ENTRIES + 5)]
    for fig in figs:
        plot.drawn_json(fig, ("k",), build)
    assert len(plot._DRAWN) == plot.DRAWN_ENTRIES
    plot.drawn_json(figs[0], ("k",), build)  # evicted first (least recently used): built again
    assert len(calls) == plot.DRAWN_ENTRIES + 6
    plot.drawn_json(figs[-1], ("k",), build)  # still held
    assert len(calls) == plot.DRAWN_ENTRIES + 6


def test_the_payload_is_three_lines_module_config_figure():
    """plot.js splits the bytes at the first two line breaks: a label holding a line break (JSON
    escapes it) and non-ASCII text must come back whole."""
    fig = {"data": [{"type": "bar", "name": "two\nlines · µs", "y": [1.5, 2]}]}
    config = {"displaylogo": False, "toImageButtonOptions": {"filename": "splitlab-ring"}}
    payload = plot.pack(plot.as_json(fig), config)
    assert isinstance(payload, bytes)
    lib, conf, spec = payload.decode("utf-8").split("\n", 2)
    assert lib == plot.plotly_lib() and lib.startswith("static/js/PlotlyChart.")
    assert json.loads(conf) == config
    assert json.loads(spec) == fig
    assert plot.pack(plot.as_json(fig), config) == payload  # the same bytes each rerun
