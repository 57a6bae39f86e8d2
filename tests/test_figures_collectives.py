"""Collectives figures: the ring's frames follow a brute-force replay of the ring convention, the
chunks in flight travel between neighbouring GPU boxes, legible sizes from N = 2 to 32, payload
budgets, valid Plotly specs; the cost and traffic charts put numbers where expected.
"""

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from core.collectives import naive_all_reduce, ring_all_reduce, scan_bytes_per_rank
from core.hardware import make_cluster
from figures.collectives import (
    bandwidth_figure,
    bytes_per_rank_figure,
    open_at_step,
    replay_names,
    ring_animation_figure,
    step_caption,
    time_vs_ranks_figure,
    time_vs_size_figure,
)

GIB = 2**30


def _ring_fig(n, e=None, **kw):
    x = np.random.default_rng(n).integers(0, 10, size=(n, e or n))
    trace = ring_all_reduce(x)
    kw.setdefault("bandwidth_bytes_per_s", 450e9)
    return x, trace, ring_animation_figure(trace, **kw)


def _trace(fig, name):
    return next(d for d in fig["data"] if d["name"] == name)


def _index(fig, name):
    return next(i for i, d in enumerate(fig["data"]) if d["name"] == name)


def _frame(fig, name, trace_name):
    """A frame's update of one trace ({} when the frame leaves it alone)."""
    frame = next(f for f in fig["frames"] if f["name"] == name)
    i = _index(fig, trace_name)
    return frame["data"][frame["traces"].index(i)] if i in frame["traces"] else {}


def brute_force_counts(n):
    """Contributions per (rank, chunk) after each step, replaying the convention by hand with sets
    (README "Ring indexing"): reduce-scatter step k, rank r sends chunk (r − k) mod N to r + 1,
    which unions it into its own; all-gather step k, rank r sends chunk (r + 1 − k) mod N, which
    the receiver overwrites. Returns the counts and each step's {chunk: (src, dst)}."""
    held = [[{r} for _ in range(n)] for r in range(n)]
    out, moves = [[[len(h) for h in row] for row in held]], []
    for phase in ("rs", "ag"):
        for k in range(n - 1):
            sent = {r: ((r - k) if phase == "rs" else (r + 1 - k)) % n for r in range(n)}
            payload = {r: set(held[r][c]) for r, c in sent.items()}
            for r, c in sent.items():
                d = (r + 1) % n
                held[d][c] = held[d][c] | payload[r] if phase == "rs" else payload[r]
            moves.append({c: (r, (r + 1) % n) for r, c in sent.items()})
            out.append([[len(h) for h in row] for row in held])
    return np.array(out), moves


@pytest.mark.parametrize("n", [2, 5, 8])
def test_one_landed_frame_per_step_and_three_in_flight_before_it(n):
    _, _, fig = _ring_fig(n)
    names = [f["name"] for f in fig["frames"]]
    expected = ["0"]
    for t in range(1, 2 * (n - 1) + 1):
        expected += [f"{t}.0", f"{t}.1", f"{t}.2", str(t)]
    assert names == expected
    buttons = fig["layout"]["updatemenus"][0]["buttons"]
    assert [b["label"] for b in buttons] == ["▶ Replay this step"]  # no second step control
    assert "sliders" not in fig["layout"]
    assert all(f"ring N={n}" in f["layout"]["title"]["text"] for f in fig["frames"])


@pytest.mark.parametrize("n", [3, 6, 8])
def test_cell_colours_are_the_brute_force_contribution_counts(n):
    _, _, fig = _ring_fig(n)
    counts, _ = brute_force_counts(n)
    for t in range(2 * (n - 1) + 1):
        assert _frame(fig, str(t), "chunks")["marker"]["color"] == counts[t].ravel().tolist()
        if t:  # the senders' frame shows the cells before the step
            before = _frame(fig, f"{t}.0", "chunks")["marker"]["color"]
            assert before == counts[t - 1].ravel().tolist()
    assert (counts[-1] == n).all()


def _boxes(fig):
    return [(s["x0"], s["x1"], s["y0"], s["y1"]) for s in fig["layout"]["shapes"]]


def _inside(box, x, y):
    x0, x1, y0, y1 = box
    return x0 <= x <= x1 and y0 <= y <= y1


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32])
def test_each_chunk_in_flight_travels_from_its_sender_box_to_the_receivers(n):
    _, _, fig = _ring_fig(n)
    boxes = _boxes(fig)
    assert len(boxes) == n
    _, moves = brute_force_counts(n)
    assert _trace(fig, "in flight")["ids"] == [str(c) for c in range(n)]  # one marker per chunk
    for t in range(1, 2 * (n - 1) + 1):
        path = [_frame(fig, name, "in flight") for name in (f"{t}.0", f"{t}.1", f"{t}.2", str(t))]
        for c, (src, dst) in moves[t - 1].items():
            points = [(f["x"][c], f["y"][c]) for f in path]
            assert _inside(boxes[src], *points[0]) and not _inside(boxes[dst], *points[0])
            assert _inside(boxes[dst], *points[-1]) and not _inside(boxes[src], *points[-1])
            for x, y in points[1:3]:  # on the way: no longer where it was, not yet arrived
                assert points[0] != (x, y) != points[-1]
                assert not _inside(boxes[src], x, y) or not _inside(boxes[dst], x, y)
            # The chunk keeps its cell slot: its offset from the box centre is the same.
            (sx0, sx1, sy0, sy1), (dx0, dx1, dy0, dy1) = boxes[src], boxes[dst]
            start = (points[0][0] - (sx0 + sx1) / 2, points[0][1] - (sy0 + sy1) / 2)
            end = (points[-1][0] - (dx0 + dx1) / 2, points[-1][1] - (dy0 + dy1) / 2)
            assert start == pytest.approx(end, abs=1e-3)


@pytest.mark.parametrize("n", [2, 3, 8, 9, 16, 32])
def test_boxes_never_overlap_and_stay_inside_the_axes(n):
    _, _, fig = _ring_fig(n)
    boxes, extent = _boxes(fig), fig["layout"]["xaxis"]["range"][1]
    for i, a in enumerate(boxes):
        assert -extent < a[0] and a[1] < extent and -extent < a[2] and a[3] < extent
        for b in boxes[i + 1 :]:
            assert a[1] <= b[0] or b[1] <= a[0] or a[3] <= b[2] or b[3] <= a[2]


@pytest.mark.parametrize("n", [2, 4, 8, 12, 16, 24, 32])
def test_legible_from_2_to_32_gpus(n):
    x, _, fig = _ring_fig(n, 2 * n)  # two elements per chunk: values never printed as "5,2"
    cells, flight = _trace(fig, "chunks"), _trace(fig, "in flight")
    height = fig["layout"]["height"] - fig["layout"]["margin"]["t"] - fig["layout"]["margin"]["b"]
    x0, x1, _, _ = _boxes(fig)[0]
    px_per_unit = height / (2 * fig["layout"]["xaxis"]["range"][1])
    box_px = (x1 - x0) * px_per_unit
    assert box_px >= 22  # a GPU is still a visible box at N = 32
    assert flight["marker"]["size"] >= 18 and flight["text"] == [str(c) for c in range(n)]
    if cells["marker"]["size"] >= 15:  # big enough cells carry their chunk index
        assert cells["text"] == [str(c) for _ in range(n) for c in range(n)]
    else:  # small ones do not: the chunks in flight carry the numbers
        assert cells.get("text") is None and n > 8
    frames = [f["data"] for f in fig["frames"]]
    texts = [t for d in fig["data"] + sum(frames, []) for t in d.get("text") or []]
    assert texts and not any("," in t for t in texts)  # no "5,2"


def test_counters_follow_the_frames():
    _, _, fig = _ring_fig(8, message_bytes=GIB, link_name="NVLink 4")
    # Step 14 landed: 2 · 7/8 · 1 GiB = 1.75 GiB sent; 1.75 · 2^30 B / 450e9 B/s = 4.18 ms.
    assert _frame(fig, "14", "step")["text"][0].endswith("1.75 GiB · 4.18 ms")
    # A third of the way through step 1: a third of one 128 MiB chunk = 42.7 MiB, 99.4 µs.
    assert _frame(fig, "1.1", "step")["text"][0].endswith("42.7 MiB · 99.4 µs")
    assert "all-gather" in _frame(fig, "8", "step")["text"][0]
    assert "reduce-scatter" in _frame(fig, "7", "step")["text"][0]


def test_step_captions_follow_chunk_0_round_the_ring():
    x, trace, _ = _ring_fig(8)
    # Reduce-scatter step 3 (k = 2): rank 2 sends chunk 2 − 2 = 0, holding ranks 0, 1, 2.
    first = x[:3, 0].sum()
    assert step_caption(trace, 3) == (
        "step 3 of 14, reduce-scatter: GPU 2 sends chunk 0 (3 contributions) to GPU 3, which "
        f"adds its own: 4 of 8 ({first} + {x[3, 0]} = {first + x[3, 0]})"
    )
    # All-gather step 1 (= step 8): rank 7 ends reduce-scatter owning chunk 7 + 1 = 0 and sends it.
    assert step_caption(trace, 8).startswith(
        "step 8 of 14, all-gather: GPU 7 sends chunk 0 (all 8 contributions, final) to GPU 0, "
        "which overwrites its copy"
    )
    assert step_caption(trace, 8).endswith(f"→ {x[:, 0].sum()})")
    assert step_caption(trace, 0).startswith("step 0 of 14: each of the 8 GPUs")


@pytest.mark.parametrize("n,budget", [(8, 150_000), (32, 1_500_000)])
def test_payload_budgets(n, budget):
    for e in (n, 16 * n):
        _, _, fig = _ring_fig(n, e, message_bytes=GIB)
        assert len(json.dumps(fig)) <= budget
        go.Figure(fig)  # a valid Plotly spec, frames included


def test_animation_rejects_what_it_cannot_draw():
    with pytest.raises(ValueError, match="N=33 ranks is too many to animate"):
        ring_animation_figure(ring_all_reduce(np.ones((33, 33))), bandwidth_bytes_per_s=1e9)
    with pytest.raises(ValueError, match="needs a ring all-reduce trace"):
        ring_animation_figure(naive_all_reduce(np.ones((4, 4))), bandwidth_bytes_per_s=1e9)


@pytest.mark.parametrize("k", [0, 1, 7, 14])
def test_open_at_step_shows_that_step_landed_and_replays_its_move(k):
    _, _, plain = _ring_fig(8, message_bytes=GIB)
    fig = open_at_step(plain, k)
    counts, _ = brute_force_counts(8)
    assert _trace(fig, "chunks")["marker"]["color"] == counts[k].ravel().tolist()
    assert _trace(fig, "chunks")["marker"]["colorscale"] == "Viridis"  # merged, not replaced
    assert f"step {k} of 14" in fig["layout"]["title"]["text"]
    replay = fig["layout"]["updatemenus"][0]["buttons"][0]["args"]
    assert replay[0] == (["0"] if k == 0 else [f"{k}.0", f"{k}.1", f"{k}.2", str(k)])
    assert replay[0] == replay_names(plain["frames"], k)
    assert replay[1]["transition"][0]["duration"] == 0  # jump to the senders, then glide
    go.Figure(fig)
    assert "step 0 of 14" in plain["layout"]["title"]["text"]  # the base figure is not mutated
    # Only this step's frames travel with the chart (the page resends it on every step).
    assert [f["name"] for f in fig["frames"]] == replay[0]
    assert fig["frames"][-1] is next(f for f in plain["frames"] if f["name"] == str(k))


def test_open_at_step_rejects_a_step_outside_the_frames():
    _, _, fig = _ring_fig(4)
    with pytest.raises(ValueError, match=r"step=7 is not a step of this animation: use 0 … 6"):
        open_at_step(fig, 7)
    assert "step 6 of 6 · all-gather" in open_at_step(fig, 6)["layout"]["title"]["text"]


def test_bytes_per_rank_points_are_measured_and_on_the_formula():
    scan = scan_bytes_per_rank([2, 4, 8, 1024], GIB)
    fig = bytes_per_rank_figure(scan)
    go.Figure(fig)
    ring = next(d for d in fig["data"] if d["name"] == "ring, simulated")
    assert ring["y"] == pytest.approx([1.0, 1.5, 1.75, 2 * 1023 / 1024])  # GiB
    naive = next(d for d in fig["data"] if d["name"] == "naive root, simulated")
    assert naive["y"] == pytest.approx([1, 3, 7, 1023])


def test_comparison_figures_are_valid_and_put_numbers_where_expected():
    c = make_cluster(num_nodes=2, gpus_per_node=8)
    by_n = time_vs_ranks_figure(
        message_bytes=GIB,
        bandwidth_bytes_per_s=300e9,
        latency_s=0.0,
        rank_counts=[2, 8, 16],
        cluster=c,
    )
    go.Figure(by_n)
    ring = next(d for d in by_n["data"] if d["name"] == "Ring")
    assert ring["y"][1] == pytest.approx(6.2635e-3, rel=1e-4)  # docs/notes/collectives.md §1
    hier = next(d for d in by_n["data"] if d["name"].startswith("Hierarchical"))
    assert hier["x"] == [8, 16]  # only whole nodes of 8
    by_size = time_vs_size_figure(
        num_ranks=64, bandwidth_bytes_per_s=50e9, latency_s=10e-6, cluster=c
    )
    go.Figure(by_size)
    # Ring latency = bandwidth term at n = p * alpha * B = 64 * 10 us * 50 GB/s = 32 MB.
    assert by_size["layout"]["shapes"][0]["x1"] == pytest.approx(32e6)


def test_busbw_equals_link_speed_without_latency():
    fig = bandwidth_figure(
        message_bytes=1e9, bandwidth_bytes_per_s=300e9, latency_s=0.0, rank_counts=[2, 4, 8]
    )
    go.Figure(fig)
    alg, bus = fig["data"][0]["y"], fig["data"][1]["y"]
    assert bus == pytest.approx([300, 300, 300])  # GB/s: busbw is the link's bandwidth
    assert alg == pytest.approx([300, 300 * 4 / 6, 300 * 8 / 14])  # B * n / (2(n-1))


def test_time_vs_size_names_the_ring_crossover_in_its_subtitle():
    from figures.collectives import time_vs_size_figure

    spec = time_vs_size_figure(num_ranks=8, bandwidth_bytes_per_s=450e9, latency_s=3.4e-6)
    # 2(p−1)·α = 2(p−1)/p·n/B at n = p·α·B = 8 × 3.4 µs × 450 GB/s = 12.24e6 B = 11.7 MiB
    assert spec["layout"]["title"]["text"] == "All-reduce time vs message size"
    assert spec["layout"]["title"]["subtitle"]["text"].endswith(
        f"n = p·α·B = {12.24e6 / 2**20:.3g} MiB"
    )
    assert [a["text"].strip() for a in spec["layout"]["annotations"]] == [
        "latency-bound ◀",
        "▶ bandwidth-bound",
    ]


def test_time_charts_print_the_link_in_the_sidebars_bandwidth_unit():
    from figures.collectives import time_vs_ranks_figure, time_vs_size_figure

    kw = dict(bandwidth_bytes_per_s=450e9, latency_s=3.4e-6)
    by_n = time_vs_ranks_figure(message_bytes=1e9, bandwidth_system="binary", **kw)
    by_size = time_vs_size_figure(num_ranks=8, bandwidth_system="binary", **kw)
    # 450e9 B/s / 2^30 = 419.1 GiB/s
    assert "B = 419 GiB/s" in by_n["layout"]["title"]["subtitle"]["text"]
    assert "B = 419 GiB/s" in by_size["layout"]["title"]["subtitle"]["text"]
    assert (
        "B = 450 GB/s"
        in time_vs_ranks_figure(message_bytes=1e9, **kw)["layout"]["title"]["subtitle"]["text"]
    )


def test_log_axes_are_labelled_only_at_round_values():
    """Issue 15 §3: Plotly's own minor labels on a log axis ("5, 2, 5, 2") read as data."""
    fig = bytes_per_rank_figure(scan_bytes_per_rank([2, 4, 8, 1024], GIB))
    # naive root sends 1 … 1023 GiB: ticks at 1, 2, 5 × 10^k from 1/2.5 to 1023 × 2.5
    y2 = fig["layout"]["yaxis2"]
    assert y2["type"] == "log" and y2["tickmode"] == "array"
    assert y2["tickvals"] == pytest.approx([0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000])
    assert y2["ticktext"][:3] == ["0.5", "1", "2"] and y2["ticktext"][-1] == "2000"
    c = make_cluster(num_nodes=2, gpus_per_node=8)
    figs = [
        fig,
        time_vs_ranks_figure(
            message_bytes=GIB, bandwidth_bytes_per_s=300e9, latency_s=0.0, rank_counts=[2, 8, 16]
        ),
        time_vs_size_figure(num_ranks=64, bandwidth_bytes_per_s=50e9, latency_s=10e-6, cluster=c),
    ]
    for f in figs:
        for name, ax in f["layout"].items():
            if name.startswith(("xaxis", "yaxis")) and ax.get("type") == "log":
                assert ax.get("tickmode") == "array", (f["layout"]["title"], name)


def test_replay_glides_each_frame_for_frame_ms():
    # The built figure is already opened at step 0 (its button replays just "0", with a 0 ms
    # jump); opened at step 3 its replay still glides: the jump to the senders takes 0 ms, each
    # of the three moves one frame (frame_ms = 250 here). They all took 0 ms before (issue 14).
    _, _, plain = _ring_fig(8, frame_ms=250)
    opts = open_at_step(plain, 3)["layout"]["updatemenus"][0]["buttons"][0]
    assert [t["duration"] for t in opts["args"][1]["transition"]] == [0, 250, 250, 250]


def test_next_opens_at_the_senders_and_glides_to_step_3():
    x, trace, plain = _ring_fig(8)
    fig = open_at_step(plain, 3, came_from=2, token="t-1")
    counts, moves = brute_force_counts(8)
    boxes = _boxes(fig)
    src, dst = moves[2][0]  # step 3 = reduce-scatter k = 2: chunk 0 goes GPU 2 → GPU 3
    assert (src, dst) == (2, 3)
    flight = _trace(fig, "in flight")
    assert _inside(boxes[2], flight["x"][0], flight["y"][0])  # where the move starts
    assert _trace(fig, "chunks")["marker"]["color"] == counts[2].ravel().tolist()  # before it
    glide = fig["layout"]["meta"]["glide"]
    assert glide["token"] == "t-1" and glide["frames"] == ["3.0", "3.1", "3.2", "3"]
    assert [t["duration"] for t in glide["opts"]["transition"]] == [0, 320, 320, 320]
    assert "step 3 of 14" in fig["layout"]["title"]["text"]  # the title says where it goes
    assert {f["name"] for f in fig["frames"]} >= set(glide["frames"])
    go.Figure(fig)
    # Without came_from (a jump, a first load) there is nothing to glide: step 3 landed.
    assert "meta" not in open_at_step(plain, 3)["layout"]


def test_back_runs_step_4_backwards_to_step_3():
    _, _, plain = _ring_fig(8)
    fig = open_at_step(plain, 3, came_from=4, token="t-2")
    counts, moves = brute_force_counts(8)
    boxes = _boxes(fig)
    assert moves[3][0] == (3, 4)  # step 4 moved chunk 0 from GPU 3 to GPU 4
    flight = _trace(fig, "in flight")
    assert _inside(boxes[4], flight["x"][0], flight["y"][0])  # starts at step 4 landed
    glide = fig["layout"]["meta"]["glide"]
    assert glide["frames"] == ["4.2<", "4.1<", "4.0<", "3"]
    assert [t["duration"] for t in glide["opts"]["transition"]] == [320, 320, 320, 0]
    frames = {f["name"]: f for f in fig["frames"]}
    i = _index(fig, "chunks")
    first = frames["4.2<"]["data"][frames["4.2<"]["traces"].index(i)]
    assert first["marker"]["color"] == counts[3].ravel().tolist()  # GPU 4's sum undone at once
    path = [
        frames[name]["data"][frames[name]["traces"].index(_index(fig, "in flight"))]
        for name in glide["frames"]
    ]
    assert _inside(boxes[3], path[-1]["x"][0], path[-1]["y"][0])  # lands back at GPU 3
    assert all("step 3 of 14" in frames[n]["layout"]["title"]["text"] for n in glide["frames"])
    go.Figure(fig)


def test_open_at_step_glides_one_step_at_a_time():
    _, _, plain = _ring_fig(4)
    with pytest.raises(ValueError, match=r"came_from=1 is not a neighbour of step 3: .* pass 2"):
        open_at_step(plain, 3, came_from=1)
    with pytest.raises(ValueError, match="came_from=7 is not a neighbour of step 6"):
        open_at_step(plain, 6, came_from=7)


def test_zoom_frames_gpu_5_and_its_neighbours_with_numbered_cells():
    _, trace, whole = _ring_fig(32)
    _, _, fig = _ring_fig(32, zoom=5)
    boxes = _boxes(fig)
    (x0, x1), (y0, y1) = fig["layout"]["xaxis"]["range"], fig["layout"]["yaxis"]["range"]
    for r in (4, 5, 6):  # GPU 5 and both neighbours are wholly in view ...
        bx0, bx1, by0, by1 = boxes[r]
        assert x0 < bx0 and bx1 < x1 and y0 < by0 and by1 < y1
    for r in (2, 8, 21):  # ... GPUs further round are not
        bx0, bx1, by0, by1 = boxes[r]
        assert bx1 < x0 or x1 < bx0 or by1 < y0 or y1 < by0
    # The cells are large enough to carry their chunk numbers, as they are not in the whole ring.
    assert _trace(whole, "chunks").get("text") is None
    cells = _trace(fig, "chunks")
    assert cells["text"] == [str(c) for _ in range(32) for c in range(32)]
    assert cells["marker"]["size"] >= 12
    # The GPU labels and the note stay inside the zoomed plot; the caption tells the story.
    assert _trace(fig, "GPUs")["cliponaxis"] is True
    assert _frame(fig, "3", "receiver")["x"] == [None]
    with pytest.raises(ValueError, match=r"zoom=32 is not a GPU of this ring: use 0 … 31"):
        _ring_fig(32, zoom=32)


def test_zoomed_caption_follows_the_chunk_the_zoomed_gpu_receives():
    x = np.arange(64).reshape(8, 8)
    trace = ring_all_reduce(x)
    # Reduce-scatter step 3 (k = 2): GPU 4 sends chunk (4 − 2) mod 8 = 2 to GPU 5, which then
    # holds GPUs 2, 3, 4, 5's inputs: 4 of 8. Element 0 of chunk 2 is column 2.
    line = step_caption(trace, 3, 5)
    sent = x[2, 2] + x[3, 2] + x[4, 2]
    assert line.startswith("step 3 of 14, reduce-scatter: GPU 4 sends chunk 2 (3 contributions)")
    assert f"to GPU 5, which adds its own: 4 of 8 ({sent} + {x[5, 2]} = {sent + x[5, 2]})" in line


def test_compact_ring_keeps_its_numbers_on_the_projected_slide():
    # The slide draws the chart 1.25× `height` (figures.theme.presenter). N = 8: 3 × 3 cells a box,
    # side 0.74 · 2 sin(π/8) = 0.566 plot units, cell 0.566 / 3.5 = 0.162; the view spans
    # 2 · (1 + hypot(0.283, 0.283) + 0.09 + 0.17 + 0.05) = 3.42 units. Laptop: (320 − 56 − 74) px /
    # 3.42 = 56 px a unit, cells 9 px: no numbers. Slide: (320 − 24) · 1.25 / 3.42 = 108, 17.5 px.
    _, _, laptop = _ring_fig(8, height=320)
    _, _, slide = _ring_fig(8, height=320, compact=True)
    chunks = [next(t for t in f["data"] if t.get("name") == "chunks") for f in (laptop, slide)]
    assert chunks[0]["mode"] == "markers" and chunks[0]["text"] is None
    assert chunks[1]["mode"] == "markers+text"
    assert chunks[1]["text"][:8] == [str(c) for c in range(8)]
    # No title and no colour bar on the slide (the page says the step and the scale beside it);
    # the replay button moves to the top left where the title was.
    assert slide["layout"]["title"]["text"] == "" and laptop["layout"]["title"]["text"]
    assert chunks[1]["marker"]["showscale"] is False
    assert chunks[0]["marker"]["showscale"] is True
    assert slide["layout"]["updatemenus"][0]["y"] == 1
    assert all(f["layout"]["title"]["text"] == "" for f in slide["frames"])
