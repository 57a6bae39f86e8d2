"""Presenter theme: consistent colour remapping, larger type, inputs untouched."""

import plotly.graph_objects as go

from figures.theme import CONTINUOUS, OKABE_ITO, presenter
from tests.registry import plain_arrays


def _fig():
    return {
        "data": [
            {"type": "bar", "marker": {"color": "#ff0000"}, "name": "a"},
            {
                "type": "scatter",
                "line": {"color": "#00ff00", "width": 2},
                "marker": {"color": "#ff0000", "size": 6},
            },
            {"type": "heatmap", "z": [[1, 2]], "colorscale": "Viridis"},
        ],
        "layout": {"title": {"text": "t"}, "xaxis": {}, "yaxis2": {}},
        "frames": [{"data": [{"marker": {"color": "#00ff00"}}]}],
    }


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


def test_ready_spec_reaches_the_browser_unchanged_and_revalidates_to_the_same_figure():
    import json

    import numpy as np
    import plotly.io as pio

    from figures.theme import ready

    spec = {
        "data": [
            {"type": "heatmap", "z": np.arange(6, dtype=np.int8).reshape(2, 3)},
            {"type": "scatter", "x": [1, 2], "y": [3, 4], "line": {"color": "#123456"}},
        ],
        "layout": {"title": {"text": "t"}, "xaxis": {"type": "log"}},
    }
    sent = ready(spec)  # what common.chart hands the chart component (app_pages/common/plot.py)
    assert sent is spec  # no copy, no rebuild, no template
    wire = json.loads(pio.to_json(sent, validate=False))  # as plot.py serialises it
    assert "template" not in wire["layout"]
    assert wire["data"][0]["z"] == [[0, 1, 2], [3, 4, 5]]
    # the browser's figure, validated by plotly, is the builder's figure validated by plotly
    again = json.loads(pio.to_json(go.Figure(wire)))
    direct = json.loads(pio.to_json(go.Figure(spec)))
    assert plain_arrays(again) == plain_arrays(direct)


def test_categorical_heat_map_keeps_its_steps_and_matches_its_legend():
    from core.tensor_parallel import mlp_ownership
    from figures.tensor_parallel import ownership_figure

    out = presenter(ownership_figure(mlp_ownership(tp=4, tokens=8, hidden=8, ffn=32), tp=4))
    heat = next(t for t in out["data"] if t["type"] == "heatmap")
    scale = heat["colorscale"]
    steps = [scale[i][1] for i in range(0, len(scale), 2)]  # one colour per category
    assert steps[0] == "#d9d9d9"  # "all GPUs" stays neutral grey
    assert len(set(steps)) == 5 and set(steps[1:]) <= set(OKABE_ITO)
    legend = {t["name"]: t["marker"]["color"] for t in out["data"] if t["type"] == "scatter"}
    assert [legend[f"GPU {r}"] for r in range(4)] == steps[1:]  # legend = heat map colours
    assert legend["all GPUs (replicated)"] == "#d9d9d9"


def test_greys_are_not_recoloured():
    out = presenter(
        {
            "data": [
                {"type": "bar", "marker": {"color": "#AAAAAA"}},
                {"type": "bar", "marker": {"color": "#ff0000"}},
                {"type": "scatter", "line": {"color": "#444"}},
                {"type": "scatter", "line": {"color": "#456"}},
            ],
            "layout": {},
        }
    )
    assert out["data"][0]["marker"]["color"] == "#AAAAAA"
    assert out["data"][1]["marker"]["color"] == OKABE_ITO[0]
    assert out["data"][2]["line"]["color"] == "#444"  # short-hex grey: still grey
    assert out["data"][3]["line"]["color"] == OKABE_ITO[1]  # #456 is a (dark) blue, not a grey


def test_bottom_legend_and_subtitle_get_room_at_presenter_size():
    fig = {
        "data": [{"type": "scatter", "name": n} for n in "abcd"],
        "layout": {
            "title": {"text": "t", "subtitle": {"text": "one<br>two"}},
            "legend": {"orientation": "h", "y": -0.2},
            "margin": {"t": 60, "b": 40},
            "xaxis": {},
        },
    }
    out = presenter(fig, base_font_px=20)["layout"]
    assert out["legend"] == {"orientation": "h", "y": 0, "yref": "container", "yanchor": "bottom"}
    # ticks + axis title (3 × 20 px + 2) and two legend rows of 32 px, plus 30 px of air
    assert out["margin"]["b"] == 62 + 2 * 32 + 30
    # 10 px pad, title (2 × 20 px) and two subtitle lines of 1.2 × 18 px, plus 16 px
    assert out["margin"]["t"] == int(10 + 40 + 2 * 21.6 + 16)
    assert out["xaxis"]["automargin"] is True
    side = presenter({"data": [], "layout": {"legend": {"orientation": "v"}}})["layout"]
    assert side["legend"] == {"orientation": "v"}  # a side legend is left alone


def test_fixed_small_axis_titles_and_legend_text_grow():
    fig = {
        "data": [],
        "layout": {
            "yaxis": {"title": {"text": "GiB", "font": {"size": 12}}},
            "legend": {"font": {"size": 11}},
            "xaxis": {"title": {"text": "x"}},
        },
    }
    out = presenter(fig, base_font_px=20)["layout"]
    assert out["yaxis"]["title"]["font"]["size"] == 18 and out["legend"]["font"]["size"] == 16
    assert out["xaxis"]["title"] == {
        "text": "x"
    }  # no fixed size: it inherits the 20 px layout font


def test_presenter_owns_the_height_and_grows_it_by_the_legend_room():
    fig = {
        "data": [{"type": "bar", "name": n} for n in "abcdefg"],  # 7 entries: 3 rows of 3
        "layout": {"height": 400, "legend": {"orientation": "h", "y": -0.3}, "margin": {"b": 40}},
    }
    out = presenter(fig, base_font_px=20)["layout"]
    # bottom margin: ticks + axis title (3 × 20 + 2) + 3 rows × 32 px + 30 px = 188, from 40
    assert out["margin"]["b"] == 62 + 3 * 32 + 30
    assert out["height"] == 400 * 1.25 + (188 - 40)  # the plot keeps its 1.25× height
    assert presenter(fig, height_px=200)["layout"]["height"] == 250 + 148  # a page's own height


def test_a_legend_above_the_plot_moves_under_it():
    # the TP "who holds what" legend sat at y = 1.02 beside a long title and printed over it
    fig = {
        "data": [{"type": "scatter", "name": "GPU 0"}],
        "layout": {
            "title": {"text": "t"},
            "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.02},
        },
    }
    legend = presenter(fig)["layout"]["legend"]
    assert legend == {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"}


def test_annotations_above_the_plot_get_a_row_of_their_own():
    # "latency-bound ◀ ▶ bandwidth-bound" at paper y = 1 printed over the collectives subtitle
    marks = [{"text": "latency-bound ◀", "yref": "paper", "y": 1, "yanchor": "bottom"}]
    layout = {"title": {"text": "t", "subtitle": {"text": "s"}}, "margin": {"t": 60}}
    plain = presenter({"data": [], "layout": layout}, base_font_px=20)["layout"]["margin"]["t"]
    above = presenter({"data": [], "layout": {**layout, "annotations": marks}}, base_font_px=20)
    # pad 10 + title 2 × 20 + one subtitle line 1.2 × 18 + 16 = 87.6; the annotations add 1.5 × 20
    assert (plain, above["layout"]["margin"]["t"]) == (87, 117)
    inside = [{**marks[0], "y": 0.5}]  # an annotation inside the plot takes no room above it
    assert (
        presenter({"data": [], "layout": {**layout, "annotations": inside}})["layout"]["margin"][
            "t"
        ]
        == 87
    )


def test_long_subtitles_and_y_titles_wrap():
    sub = "N = 8, B = 450 GB/s, α = 3.4 µs; ring turns bandwidth-bound at n = p·α·B = 11.7 MiB"
    fig = {
        "data": [],
        "layout": {
            "title": {"text": "t", "subtitle": {"text": sub}},
            "height": 300,
            "margin": {"t": 60, "b": 60},
            "yaxis": {"title": {"text": "full-batch loss (MSE / 2) on the whole batch"}},
            "yaxis2": {"title": {"text": "time"}},
        },
    }
    out = presenter(fig, base_font_px=20)["layout"]
    shown = out["title"]["subtitle"]["text"].split("<br>")
    assert " ".join(shown) == sub and len(shown) == 2 and max(map(len, shown)) <= 52
    # 44 characters × 0.55 × 20 px = 484 px > the 375 − 109 − 60 px plot: two lines, cut mid-way
    assert out["yaxis"]["title"]["text"] == "full-batch loss (MSE /<br>2) on the whole batch"
    assert out["yaxis2"]["title"]["text"] == "time"


def test_two_line_titles_keep_their_place_and_get_room():
    # the reliability page's "title<br><sup>subtitle</sup>": hanging it from the top edge clipped
    # its first line, so it keeps Plotly's placement and gets one more line of room
    fig = {"data": [], "layout": {"title": {"text": "Where the wall time goes<br><sup>δ</sup>"}}}
    out = presenter(fig, base_font_px=20)["layout"]
    assert "y" not in out["title"]
    assert out["margin"]["t"] == max(100, int(10 + 40 + 1.3 * 24 + 16))
    one = presenter({"data": [], "layout": {"title": {"text": "t"}, "height": 400}})["layout"]
    assert one["title"]["yanchor"] == "top" and one["title"]["y"] == 1 - 10 / 500


def test_x_tick_labels_stand_off_from_the_corner():
    # "2 min" (first x tick) printed over "0%" (lowest y tick) on the reliability page
    out = presenter({"data": [], "layout": {"xaxis": {}, "xaxis2": {"ticklabelstandoff": 3}}})
    assert out["layout"]["xaxis"]["ticklabelstandoff"] == 10
    assert out["layout"]["xaxis2"]["ticklabelstandoff"] == 3  # a builder's own choice stays


def test_the_step_readout_moves_clear_of_the_play_buttons():
    # the ring animation's "step: RS 2" printed under its ▶ Play ❚❚ Pause buttons at 1280×720
    fig = {
        "data": [],
        "layout": {
            "updatemenus": [{"type": "buttons", "x": 0, "buttons": []}],
            "sliders": [{"currentvalue": {"prefix": "step: "}, "steps": []}],
        },
    }
    out = presenter(fig)["layout"]["sliders"][0]["currentvalue"]
    assert out == {"prefix": "step: ", "xanchor": "right"}
    still = presenter({"data": [], "layout": {"sliders": [{"steps": []}]}})["layout"]
    assert "currentvalue" not in still["sliders"][0]  # no buttons: nothing to clear


def test_subtitles_break_after_a_separator_where_one_fits():
    from figures.presenter_layout import wrap

    sub = "makespan 33 s · bubble 27.3% (Σ idle / P·T) · peak 4 activations"  # 65 characters
    assert wrap(sub, 52) == "makespan 33 s · bubble 27.3% (Σ idle / P·T) ·<br>peak 4 activations"
    long_first = (
        "colour: how many GPUs' inputs a cell already sums (1 → 4); left to right: the state"
    )
    lines = wrap(long_first, 52).split("<br>")
    assert all(len(line) <= 52 for line in lines) and " ".join(lines) == long_first
    assert wrap("one<br>two", 52) == "one<br>two"


def test_revised_digests_the_data_so_a_redraw_of_the_same_figure_skips_it():
    # Plotly.react redraws every trace whose arrays are new objects unless layout.datarevision is
    # unchanged (plotly.com/javascript/reference/layout/#layout-datarevision); Streamlit 1.67
    # reacts twice on each new chart with two JSON copies of one spec.
    import numpy as np

    from figures.theme import revised

    def spec(middle: float) -> dict:
        z = np.zeros(2000)
        z[1000] = middle  # in the middle: numpy's repr would elide it
        return {"data": [{"type": "scatter", "y": z}], "layout": {"title": {"text": "t"}}}

    a, same, other = revised(spec(1.0)), revised(spec(1.0)), revised(spec(2.0))
    assert a["layout"]["datarevision"] == same["layout"]["datarevision"]
    assert a["layout"]["datarevision"] != other["layout"]["datarevision"]
    assert a["layout"]["title"] == {"text": "t"} and a["data"] is not None
    original = spec(1.0)
    revised(original)
    assert "datarevision" not in original["layout"]  # the caller's (cached) spec is not mutated
    kept = {"data": [], "layout": {"datarevision": 7}}
    assert revised(kept) is kept  # a builder's own revision wins
    text_only = revised({"data": [{"type": "bar", "x": ["a", "b"], "y": [1, 2]}], "layout": {}})
    relabelled = revised({"data": [{"type": "bar", "x": ["a", "c"], "y": [1, 2]}], "layout": {}})
    assert text_only["layout"]["datarevision"] != relabelled["layout"]["datarevision"]
