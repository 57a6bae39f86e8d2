"""Pipeline figures: the boxes drawn are the simulator's ops; raster, bubble and memory charts."""
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from core.pipeline import bubble_sweep, simulate
from figures.pipeline import (
    KIND_COLORS, bubble_vs_m_figure, gantt_figure, peak_activations_figure, raster, shade)


def bars(spec):
    return {t["name"].split()[0]: t for t in spec["data"] if t["type"] == "bar"}


def test_gantt_boxes_are_the_simulated_ops():
    r = simulate("1f1b", 4, 8, forward_s=1.0, backward_input_s=1.0, backward_weight_s=1.0)
    spec = gantt_figure(r)
    assert spec["layout"]["title"]["text"] == "1F1B · P=4 · M=8"
    assert "bubble 27.3%" in spec["layout"]["title"]["subtitle"]["text"]  # 9/33
    b = bars(spec)
    assert set(b) == {"F", "B"}
    assert len(b["F"]["y"]) == len(b["B"]["y"]) == 32
    # Rank 3 (no warm-up) runs F0 at [3, 4) and B0 at [4, 6): P - 1 = 3 forwards of fill first.
    f3 = [(x0, dx) for y, x0, dx in zip(b["F"]["y"], b["F"]["base"], b["F"]["x"]) if y == 3]
    b3 = [(x0, dx) for y, x0, dx in zip(b["B"]["y"], b["B"]["base"], b["B"]["x"]) if y == 3]
    assert f3[0] == (3.0, 1.0) and b3[0] == (4.0, 2.0)
    assert b["F"]["text"][:4] == [0, 1, 2, 3]  # micro-batch labels when boxes are few
    assert spec["layout"]["yaxis"]["autorange"] == "reversed"
    go.Figure(spec)  # a valid Plotly figure


def test_gantt_hides_labels_when_boxes_are_many_and_shades_chunks():
    r = simulate("interleaved_1f1b", 8, 32, 2)  # 1,024 boxes: bars, no labels
    spec = gantt_figure(r)
    b = bars(spec)
    assert sum(len(t["y"]) for t in b.values()) == 1024
    assert b["F"]["text"] is None
    colors = set(b["F"]["marker"]["color"])
    assert colors == {KIND_COLORS["F"], shade(KIND_COLORS["F"], 1, 2)}
    assert spec["layout"]["title"]["text"] == "Interleaved 1F1B · P=8 · M=32 · v=2"


def test_shade_mixes_toward_white():
    assert shade("#000000", 0, 2) == "#000000"
    assert shade("#000000", 1, 2) == "#8c8c8c"   # 55% of 255 = 140.25 -> 0x8c
    assert shade("#ff0000", 3, 4) == "#ff8c8c"


def test_overlapped_pairs_split_the_row():
    r = simulate("dualpipe_v", 2, 4, 2)
    b = bars(gantt_figure(r))
    pairs_f = [(w, o) for w, o in zip(b["F"]["width"], b["F"]["offset"]) if w == 0.4]
    pairs_b = [(w, o) for w, o in zip(b["B"]["width"], b["B"]["offset"]) if w == 0.4]
    assert len(pairs_f) == len(pairs_b) == 6 and {o for _, o in pairs_f} == {-0.4}
    assert {o for _, o in pairs_b} == {0.0}
    assert {"I", "W"} <= set(b)


def test_many_boxes_switch_to_a_raster():
    r = simulate("gpipe", 4, 300)  # 2,400 ops > 2,000
    spec = gantt_figure(r)
    heat = spec["data"][0]
    assert heat["type"] == "heatmap" and heat["z"].shape == (4, 1200)
    assert spec["layout"]["title"]["text"] == "GPipe · P=4 · M=300"
    z = heat["z"]
    # T = 303 x 3 = 909; rank 3 idles until its first F at t = 3, and rank 0 runs F at t ~ 0.
    dt = 909 / 1200
    assert z[3, : int(3 / dt)].max() == 0 and z[0, 0] == 1  # 1 + kind F (0) x v + chunk 0
    assert z[0, -1] == 2  # the step ends with rank 0's last B
    names = {t["name"] for t in spec["data"][1:]}
    assert names == {"F (forward)", "B (backward)"}
    assert len(pio.to_json(spec, validate=False)) < 1_000_000


def test_raster_cells_match_a_direct_lookup():
    r = simulate("zb_v", 3, 8, 2, 1.0, 0.5, 0.75, p2p_s=0.1)
    code, colors = raster(r, columns=97)
    dt = r.makespan_s / 97
    for rank in range(3):
        for col in range(0, 97, 7):
            t = (col + 0.5) * dt
            hit = [op for op in r.ops if op.rank == rank and op.start_s <= t < op.end_s]
            want = 0 if not hit else 1 + "FBIW".index(hit[0].kind) * 2 + hit[0].chunk
            assert code[rank, col] == want
    assert len(colors) == 1 + 5 * 2


def test_bubble_vs_m_points_sit_on_the_formula():
    sweeps = [bubble_sweep("1f1b", 4, (1, 4, 16)), bubble_sweep("interleaved_1f1b", 4, (4, 8), 2)]
    spec = bubble_vs_m_figure(sweeps, {"1f1b": "1F1B", "interleaved_1f1b": "Interleaved"})
    assert spec["layout"]["title"]["text"] == "Bubble vs M · P=4"
    line, pts = spec["data"][0], spec["data"][1]
    assert pts["x"] == [1, 4, 16] and pts["y"] == pytest.approx([3 / 4, 3 / 7, 3 / 19])
    for m, a in zip(pts["x"], pts["y"]):
        assert line["y"][line["x"].index(m)] == pytest.approx(a)
    assert spec["data"][2]["name"] == "Interleaved (v=2)" and spec["data"][3]["showlegend"] is False
    go.Figure(spec)


def test_peak_activation_bars():
    rs = [simulate("gpipe", 4, 8), simulate("1f1b", 4, 8), simulate("interleaved_1f1b", 4, 8, 2)]
    spec = peak_activations_figure(rs)
    assert spec["layout"]["title"]["text"] == "Peak activations per rank · P=4 · M=8"
    assert [t["y"] for t in spec["data"][:2]] == [[8, 8, 8, 8], [4, 3, 2, 1]]
    # Interleaved rank 0 holds 11 chunk activations = 5.5 stage-equivalents (~ P + (P-1)/v).
    assert spec["data"][2]["y"][0] == 5.5 and spec["data"][2]["customdata"][0] == 11
    go.Figure(spec)
