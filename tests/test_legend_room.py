"""figures/legend_room.py: margins sized for the legend so Plotly draws a chart once.

The browser holds the estimate to plotly.js's own layout (tests/e2e/test_browser.py: no chart's
margin widened on any page at 1440 × 900); these pin the arithmetic against hand sums."""

import pytest

from figures.legend_room import text_px, with_legend_room

# Arial advance widths (1/1000 em): c 500, o 556, m 833, p 556, u 556, t 278, e 556.
COMPUTE_PX = (500 + 556 + 833 + 556 + 556 + 278 + 556) * 12 / 1000 * 1.04


def bars(*names, **layout):
    data = [{"type": "bar", "name": n, "x": [1], "y": [1]} for n in names]
    return {"data": data, "layout": {"height": 400, "margin": {"t": 60, "b": 40}} | layout}


def test_text_width_is_the_sum_of_arial_advances():
    assert text_px("compute") == pytest.approx(COMPUTE_PX)
    assert text_px("<b>compute</b>") == pytest.approx(COMPUTE_PX)  # tags take no room
    assert text_px("compute<br>c") == pytest.approx(COMPUTE_PX)  # the longest line


def test_a_legend_below_gets_the_bottom_margin_it_needs():
    spec = bars("compute", "compute", legend={"orientation": "h", "y": -0.2})
    out = with_legend_room(spec, 980)["layout"]["margin"]
    # one row: 19 px + 10 padding + 12 under it; its top 0.2 plot heights below the plot:
    # b = (0.2 (400 − 60) + 41) / 1.2
    assert out["b"] == int((0.2 * 340 + 41) / 1.2) + 2
    assert spec["layout"]["margin"]["b"] == 40  # the caller's (cached) figure is not touched


def test_entries_that_do_not_fit_one_row_form_a_grid_of_the_widest():
    # each entry 40 × 556 × 12/1000 × 1.04 = 278 px + a 40 px symbol: four need 1,287 px
    spec = bars(*(c * 40 for c in "abcd"), legend={"orientation": "h", "y": -0.2})
    b_wide = with_legend_room(spec, 980)["layout"]["margin"]["b"]  # 820 px plot: 2 columns
    b_narrow = with_legend_room(spec, 500)["layout"]["margin"]["b"]  # 340 px: 1 column
    assert b_wide == int((0.2 * (400 - 60) + 2 * 19 + 22) / 1.2) + 2  # 2 rows of 2
    assert b_narrow > b_wide  # 4 rows
    assert b_narrow == pytest.approx((0.2 * 340 + 4 * 19 + 22) / 1.2 + 2, abs=1)


def test_a_legend_right_of_the_plot_gets_the_right_margin():
    spec = bars("compute", "idle", legend={"x": 1.02})
    r = with_legend_room(spec, 980)["layout"]["margin"]["r"]
    assert r == pytest.approx(0.02 * (980 - 80 - 80) + 40 + COMPUTE_PX + 20, abs=3)


def test_enough_room_or_no_legend_leaves_the_figure_alone():
    roomy = bars("a", "b", legend={"orientation": "h", "y": -0.1}, margin={"t": 60, "b": 200})
    assert with_legend_room(roomy, 980) is roomy
    alone = bars("a", legend={"orientation": "h", "y": -0.2})  # one trace: no legend drawn
    assert with_legend_room(alone, 980) is alone
    hidden = bars("a", "b", showlegend=False, legend={"orientation": "h", "y": -0.2})
    assert with_legend_room(hidden, 980) is hidden
