"""Presenter theme: consistent colour remapping, larger type, inputs untouched."""
import plotly.graph_objects as go

from figures.theme import CONTINUOUS, OKABE_ITO, presenter


def _fig():
    return {"data": [{"type": "bar", "marker": {"color": "#ff0000"}, "name": "a"},
                     {"type": "scatter", "line": {"color": "#00ff00", "width": 2},
                      "marker": {"color": "#ff0000", "size": 6}},
                     {"type": "heatmap", "z": [[1, 2]], "colorscale": "Viridis"}],
            "layout": {"title": {"text": "t"}, "xaxis": {}, "yaxis2": {}},
            "frames": [{"data": [{"marker": {"color": "#00ff00"}}]}]}


def test_same_colour_in_same_colour_out_and_palette_is_okabe_ito():
    out = presenter(_fig())
    red, green = OKABE_ITO[0], OKABE_ITO[1]
    assert out["data"][0]["marker"]["color"] == red
    assert out["data"][1]["marker"]["color"] == red
    assert out["data"][1]["line"]["color"] == green
    assert out["frames"][0]["data"][0]["marker"]["color"] == green
    assert out["data"][2]["colorscale"] == CONTINUOUS


def test_type_and_lines_grow_and_input_is_not_mutated():
    fig = _fig()
    out = presenter(fig, base_font_px=22)
    assert out["layout"]["font"]["size"] == 22 and out["layout"]["title"]["font"]["size"] == 26
    assert out["layout"]["xaxis"]["tickfont"]["size"] == 20
    assert out["data"][1]["line"]["width"] == 3 and out["data"][1]["marker"]["size"] == 6 * 1.3
    assert fig["data"][0]["marker"]["color"] == "#ff0000" and "font" not in fig["layout"]


def test_accepts_graph_objects_figures():
    out = presenter(go.Figure(go.Scatter(x=[1], y=[2], line={"color": "#123456"})))
    assert out["data"][0]["line"]["color"] == OKABE_ITO[0]


def test_unvalidated_figure_serialises_like_the_validated_one():
    import json

    from figures.theme import unvalidated

    spec = {"data": [{"type": "scatter", "x": [1, 2], "y": [3, 4], "line": {"color": "#123456"}}],
            "layout": {"title": {"text": "t"}, "template": "plotly_white", "xaxis": {"type": "log"}}}
    checked = json.dumps(go.Figure(spec).to_plotly_json(), sort_keys=True, default=str)
    fast = json.dumps(unvalidated(spec).to_plotly_json(), sort_keys=True, default=str)
    assert fast == checked
