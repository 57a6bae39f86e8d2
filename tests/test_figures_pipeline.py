"""Pipeline figures: the boxes drawn are the simulator's ops; raster, bubble and memory charts."""

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from core.pipeline import bubble_sweep, simulate
from figures.pipeline import (
    at_time,
    bubble_vs_m_figure,
    busy_ranks,
    full_at,
    gantt_figure,
    moments,
    peak_activations_figure,
    raster,
    side_by_side,
    text,
)
from figures.style import KIND_COLOURS, schedule_colour, shade


def bars(spec):
    """Bar columns per op kind as plain lists (the figure has one trace per kind and chunk)."""
    out = {}
    for t in spec["data"]:
        if t["type"] != "bar":
            continue
        n, d = len(t["y"]), out.setdefault(t["legendgroup"], {})
        cols = {
            "y": t["y"],
            "base": t["base"],
            "x": t["x"],
            "width": t["width"],
            "offset": t["offset"],
            "color": t["marker"]["color"],
        }
        for key, col in cols.items():
            col = np.broadcast_to(np.asarray(col), n)
            if col.dtype.kind == "f":  # float32 columns (typed arrays): compare at 6 decimals
                col = col.astype(float).round(6)
            d.setdefault(key, []).extend(col.tolist())
    return out


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
    text = next(t for t in spec["data"] if t["type"] == "scatter" and t["mode"] == "text")
    # Micro-batch labels centred on the boxes: rank 0 runs F0..F3 over [0, 4), one unit each.
    first = [(x, y, t) for x, y, t in zip(text["x"], text["y"], text["text"]) if y == 0][:4]
    assert first == [(0.5, 0, "0"), (1.5, 0, "1"), (2.5, 0, "2"), (3.5, 0, "3")]
    assert len(text["x"]) == 64 and text["hoverinfo"] == "skip"
    assert spec["layout"]["yaxis"]["autorange"] == "reversed"
    go.Figure(spec)  # a valid Plotly figure


def test_gantt_shades_later_chunks_and_says_so_in_the_legend():
    r = simulate("interleaved_1f1b", 8, 32, 2)
    spec = gantt_figure(r)
    b = bars(spec)
    assert sum(len(t["y"]) for t in b.values()) == 1024
    colors = set(b["F"]["color"])
    assert colors == {KIND_COLOURS["F"], shade(KIND_COLOURS["F"], 1, 2)}
    assert spec["layout"]["title"]["text"] == "Interleaved 1F1B · P=8 · M=32 · v=2"
    legend = [t["name"] for t in spec["data"] if t.get("showlegend", True)]
    assert "F, chunk 1: later chunks lighter" in legend


def _label_spans(spec, px_per_s):
    """(rank, left px, right px, text) of every label, at CHAR_PX per character."""
    from figures.pipeline.labels import CHAR_PX

    text = [t for t in spec["data"] if t.get("mode") == "text"]
    points = []
    for t in text:
        points += zip(np.asarray(t["x"], float), np.asarray(t["y"], float), t["text"])
    # runs of narrow boxes carry an "a–b" tag (a layout annotation)
    points += [
        (a["x"], a["y"], a["text"]) for a in spec["layout"]["annotations"] if "–" in a["text"]
    ]
    out = []
    for x, y, s in points:
        half = len(s) * CHAR_PX / 2
        out.append((round(float(y)), x * px_per_s - half, x * px_per_s + half, s))
    return out


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b", "zb_h1"])
@pytest.mark.parametrize("m", [8, 16, 32, 64, 128])
def test_micro_batch_labels_never_run_together_up_to_m128(schedule, m):
    from figures.pipeline.labels import PLOT_PX

    r = simulate(schedule, 4, m)
    spec = gantt_figure(r, max_bars=10**6)
    spans = sorted(_label_spans(spec, PLOT_PX / r.makespan_s))
    for (r1, _, right, _), (r2, left, _, _) in zip(spans, spans[1:]):
        assert r1 != r2 or right <= left  # "1011121314" was four labels touching


def test_a_run_of_narrow_boxes_gets_one_range_label():
    # GPipe P=4, M=16, t_F = 1, t_B = 2: T = (M + P − 1)(t_F + t_B) = 57 s. Rank 0's 16 forwards
    # run back to back over [0, 16): 820/57 = 14 px each, too narrow for "10" but not for "0–15".
    r = simulate("gpipe", 4, 16)
    spans = _label_spans(gantt_figure(r), 820 / 57)
    rank0 = sorted((s for s in spans if s[0] == 0), key=lambda s: s[1])
    assert rank0[0][3] == "0–15" and (rank0[0][1] + rank0[0][2]) / 2 == pytest.approx(8 * 820 / 57)
    assert not [s for s in rank0 if s[3] in {"10", "11", "12"} and s[1] < 16 * 820 / 57]


def test_compared_gantts_share_one_time_axis():
    fast, slow = simulate("zb_h1", 4, 8), simulate("gpipe", 4, 8)
    assert fast.makespan_s < slow.makespan_s  # 8·3 + 3·1 = 27 s vs (8 + 3)·3 = 33 s
    a = gantt_figure(fast, time_range_s=slow.makespan_s)
    b = gantt_figure(slow, time_range_s=slow.makespan_s)
    assert a["layout"]["xaxis"]["range"] == b["layout"]["xaxis"]["range"] == [0, 33.0]
    white = a["layout"]["shapes"][0]  # after the faster step ends: not idle grey
    assert (white["x0"], white["x1"]) == (fast.makespan_s, 33.0)
    assert a["layout"]["annotations"][0]["text"].strip() == f"done at {fast.makespan_s:.4g} s"
    assert not b["layout"]["shapes"]


def test_time_cursor_covers_the_future_and_counts_busy_ranks():
    # GPipe, P = 4, M = 8, t_F = 1, t_B = 2: rank r runs F(j) over [r + j, r + j + 1), so at t = 0
    # only rank 0 works, and t = 3 (rank 3's first F) is the first moment all four do: full.
    r = simulate("gpipe", 4, 8)  # T = (M + P − 1)(t_F + t_B) = 33 s
    assert (busy_ranks(r, 0.0), busy_ranks(r, 2.5), busy_ranks(r, 5.5)) == (1, 3, 4)
    assert full_at(r) == 3.0
    assert full_at(simulate("1f1b", 4, 1)) is None  # one micro-batch: one rank at a time
    fig = gantt_figure(r)
    assert "frames" not in fig and "sliders" not in fig["layout"]  # one control: the page's
    cover, line = at_time(fig, 5.5)["layout"]["shapes"][-2:]
    assert (cover["x0"], cover["x1"], line["x0"], line["x1"]) == (5.5, 33.0, 5.5, 5.5)
    assert at_time(fig, 33.0) is fig and fig["layout"]["shapes"] == []  # the whole step
    # Compared schedules share the cursor: ZB-H1 (27 s) and GPipe (33 s) moments, united.
    ts = moments(simulate("zb_h1", 4, 8), r)
    assert ts[0] == 0.0 and ts[-1] == 33.0 and 27.0 in ts and ts == sorted(set(ts))
    words = text.cursor_caption(27.0, [(0, 4, 27.0, 3.0), (busy_ranks(r, 27.0), 4, 33.0, 3.0)])
    # GPipe at t = 27: rank 3 ran B(j) over [11 + 2j, 13 + 2j), so it is done; ranks 2, 1, 0 (B
    # one stage-time later each) run B7 [27, 29), B6 [27, 29), B5 [27, 29): 3 busy, 1 idle.
    assert words == "t = 27 s · done at 27 s · 3 of 4 ranks busy, 1 idle"
    assert text.cursor_caption(3.0, [(4, 4, 33.0, 3.0)]).endswith(
        "4 of 4 ranks busy, the pipe is full"
    )
    assert text.cursor_caption(1.0, [(2, 4, 33.0, 3.0)]).endswith("2 of 4 ranks busy, filling")
    assert text.cursor_caption(33.0, [(0, 4, 33.0, 3.0)]).startswith("The whole step (33 s)")
    go.Figure(at_time(fig, 5.5))


def test_shade_mixes_toward_white():
    assert shade("#000000", 0, 2) == "#000000"
    assert shade("#000000", 1, 2) == "#8c8c8c"  # 55% of 255 = 140.25 -> 0x8c
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


def test_bubble_vs_m_highlights_one_schedule_and_marks_this_run():
    sweeps = [bubble_sweep("gpipe", 4, (1, 8)), bubble_sweep("1f1b", 4, (1, 8))]
    spec = bubble_vs_m_figure(
        sweeps, {"gpipe": "GPipe", "1f1b": "1F1B"}, highlight="1f1b", here=(8, 3 / 11)
    )
    flipped = bubble_vs_m_figure(sweeps[::-1], highlight="1f1b")
    assert [t["legendgroup"] for t in flipped["data"]] == ["gpipe", "gpipe", "1f1b", "1f1b"]
    gpipe, one_f = spec["data"][0], spec["data"][2]
    assert one_f["name"] == "1F1B" and one_f["legendrank"] > gpipe["legendrank"]  # drawn on top
    # GPipe and 1F1B share a curve, (P−1)/(M+P−1): the chosen 1F1B is a bold line on top, GPipe a
    # wide translucent band under it, named as the same curve, so neither hides the other.
    assert one_f["line"]["dash"] == "solid" and one_f["opacity"] == 1
    assert gpipe["name"] == "GPipe (= 1F1B)" and gpipe["opacity"] < 1
    assert gpipe["line"]["width"] >= 2 * one_f["line"]["width"]
    assert spec["data"][1]["marker"]["symbol"] != spec["data"][3]["marker"]["symbol"]
    star = spec["data"][-1]
    assert star["name"] == "this run (M=8)" and (star["x"], star["y"]) == ([8], [3 / 11])
    assert gpipe["line"]["color"] == schedule_colour("gpipe") != schedule_colour("1f1b")


def test_peak_bars_use_the_schedule_colours_and_thin_ticks_at_large_p():
    rs = [simulate("gpipe", 32, 4), simulate("zb_h1", 32, 4)]
    spec = peak_activations_figure(rs)
    assert [t["marker"]["color"] for t in spec["data"]] == [
        schedule_colour("gpipe"),
        schedule_colour("zb_h1"),
    ]
    assert spec["layout"]["xaxis"]["dtick"] == 4  # 32 rank labels would collide
    assert peak_activations_figure([simulate("gpipe", 4, 4)])["layout"]["xaxis"]["dtick"] == 1
    assert schedule_colour("unknown", 1) == schedule_colour("1f1b")  # falls back by position


def test_gantt_rows_stay_readable_from_p2_to_p32():
    heights = {p: gantt_figure(simulate("gpipe", p, 1))["layout"]["height"] for p in (2, 8, 16, 32)}
    # ≥ 40 px per rank up to P = 8, ≥ 16 px at P = 32, and one screen (≤ 700 px) at the top end.
    assert heights[2] >= 2 * 40 + 100 and heights[8] >= 8 * 40 + 100
    assert heights[32] >= 32 * 16 and max(heights.values()) <= 700


def test_labels_skip_narrow_boxes_and_sit_on_overlapped_halves():
    # t_W = 0.125 on a ~22 s step is under 1/70 of it: W boxes get no label; F, I do.
    r = simulate("zb_h1", 2, 4, forward_s=1.0, backward_input_s=1.0, backward_weight_s=0.125)
    text = [t for t in gantt_figure(r)["data"] if t.get("mode") == "text"][0]
    assert r.makespan_s / 70 > 0.125 and len(text["x"]) == 2 * 2 * 4  # F and I only
    # DualPipeV pairs: the F label sits on the upper half of the row (y − 0.2), B on the lower.
    d = simulate("dualpipe_v", 2, 4, 2)
    text = [t for t in gantt_figure(d)["data"] if t.get("mode") == "text"][0]
    pairs = [op for op in d.ops if op.overlapped]
    ys = {round(float(y) - round(float(y)), 3) for y in text["y"]}
    assert pairs and ys == {-0.2, 0.0, 0.2}


def test_side_by_side_keeps_both_plots_their_axes_and_titles():
    left = bubble_vs_m_figure([bubble_sweep("1f1b", 4, (1, 8))], {"1f1b": "1F1B"})
    right = peak_activations_figure([simulate("gpipe", 4, 8), simulate("1f1b", 4, 8)])
    spec = side_by_side(left, right, gap=0.1)
    lay = spec["layout"]
    assert len(spec["data"]) == len(left["data"]) + len(right["data"])
    bars = [t for t in spec["data"] if t["type"] == "bar"]
    assert {(t["xaxis"], t["yaxis"]) for t in bars} == {("x2", "y2")}
    assert [t["y"] for t in bars] == [[8, 8, 8, 8], [4, 3, 2, 1]]  # the data is not touched
    assert lay["xaxis"]["type"] == "log" and lay["xaxis"]["domain"] == [0.0, 0.45]
    assert lay["xaxis2"]["domain"] == [0.55, 1.0] and lay["yaxis2"]["anchor"] == "x2"
    assert lay["barmode"] == "group"
    texts = [a["text"] for a in lay["annotations"]]
    assert texts == [
        "<b>Bubble vs M · P=4</b>",
        "lines: closed form · dots: simulated",
        "<b>Peak activations per rank · P=4 · M=8</b>",
        "colours as in the legend",
    ]
    assert "xaxis" not in left["data"][0]  # inputs are not mutated
    go.Figure(spec)


def test_side_by_side_shares_one_legend_by_schedule():
    left = bubble_vs_m_figure([bubble_sweep("gpipe", 4, (8,)), bubble_sweep("1f1b", 4, (8,))])
    right = peak_activations_figure([simulate("gpipe", 4, 8), simulate("zb_v", 4, 8, 2)])
    spec = side_by_side(left, right)
    bars = [t for t in spec["data"] if t["type"] == "bar"]
    assert [(t["name"], t["legendgroup"], t["showlegend"]) for t in bars] == [
        ("GPipe", "gpipe", False),
        ("ZB-V (v=2)", "zb_v", False),
    ]
    line = next(t for t in spec["data"] if t.get("legendgroup") == "gpipe" and t["mode"] == "lines")
    assert line["line"]["color"] == bars[0]["marker"]["color"]  # one colour per schedule
    # One legend, below both plots (a legend between them collided with narrow layouts).
    assert spec["layout"]["legend"]["orientation"] == "h" and spec["layout"]["legend"]["y"] < 0


def test_gantt_hover_data_and_compact_payload():
    r = simulate("interleaved_1f1b", 8, 32, 2)  # 1,024 boxes in 4 traces (F, B × 2 chunks)
    spec = gantt_figure(r)
    traces = [t for t in spec["data"] if t["type"] == "bar"]
    assert [(t["name"][0], t["marker"]["color"], t["showlegend"]) for t in traces] == [
        ("F", KIND_COLOURS["F"], True),
        ("F", shade(KIND_COLOURS["F"], 1, 2), True),  # "later chunks lighter" in the legend
        ("B", KIND_COLOURS["B"], True),
        ("B", shade(KIND_COLOURS["B"], 1, 2), False),
    ]
    # Hover columns: (stage, micro-batch, start, end) of each box, checked against the op list.
    late_f = traces[1]
    ops = [op for op in r.ops if op.kind == "F" and op.chunk == 1]
    want = [(op.stage, op.microbatch, op.start_s, op.end_s) for op in ops]
    assert np.allclose(np.asarray(late_f["customdata"]), want)
    assert "chunk 1" in late_f["hovertemplate"]
    # Typed arrays instead of per-box lists: 1,024 boxes fit in well under 100 kB of JSON.
    assert len(pio.to_json(spec, validate=False)) < 100_000


def test_bubble_vs_m_tells_schedules_apart_by_more_than_colour_and_never_yellow():
    from core.schedule_names import SCHEDULES
    from figures.theme import presenter

    labels = {k: s.short_label for k, s in SCHEDULES.items()}
    sweeps = [
        bubble_sweep(
            s, 4, (4, 8), 2 if s in {"interleaved_1f1b", "looped_bfs", "zb_v", "dualpipe_v"} else 1
        )
        for s in labels
    ]
    for chosen in labels:
        spec = bubble_vs_m_figure(sweeps, labels, highlight=chosen)
        lines = [t for t in spec["data"] if t["mode"] == "lines" and t["opacity"] == 1]
        dots = [t for t in spec["data"] if t["mode"] == "markers"]
        styles = {(t["line"]["dash"], t["line"]["width"]) for t in lines}
        assert len(styles) == len(lines)  # every line its own dash (or the chosen one's width)
        assert len({t["marker"]["symbol"] for t in dots}) == len(dots)
        right = peak_activations_figure(
            [
                simulate(
                    chosen,
                    4,
                    8,
                    2 if chosen in {"interleaved_1f1b", "looped_bfs", "zb_v", "dualpipe_v"} else 1,
                )
            ]
        )
        shown = presenter(side_by_side(spec, right))
        colours = {t.get("line", {}).get("color") for t in shown["data"]}
        colours |= {t.get("marker", {}).get("color") for t in shown["data"]}
        assert "#F0E442" not in colours  # Okabe-Ito yellow: unreadable on white
