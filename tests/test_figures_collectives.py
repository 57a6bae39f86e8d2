"""Collectives figures: frames follow the simulated trace, payload budgets, valid Plotly specs."""

import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from core.collectives import naive_all_reduce, ring_all_reduce, scan_bytes_per_rank
from core.hardware import make_cluster
from figures.collectives import (
    R_INNER,
    R_OUTER,
    bandwidth_figure,
    bytes_per_rank_figure,
    open_at_step,
    ring_animation_figure,
    step_labels,
    time_vs_ranks_figure,
    time_vs_size_figure,
)

GIB = 2**30


def _ring_fig(n, e=None, **kw):
    x = np.random.default_rng(n).integers(0, 10, size=(n, e or n))
    trace = ring_all_reduce(x)
    kw.setdefault("bandwidth_bytes_per_s", 450e9)
    return x, trace, ring_animation_figure(trace, **kw)


@pytest.mark.parametrize("n", [2, 5, 8])
def test_one_frame_per_step_plus_the_start(n):
    _, _, fig = _ring_fig(n)
    assert len(fig["frames"]) == 2 * (n - 1) + 1
    labels = [s["label"] for s in fig["layout"]["sliders"][0]["steps"]]
    assert labels == [f["name"] for f in fig["frames"]] == step_labels(n)
    assert labels[1] == "RS 1" and labels[n - 1] == f"RS {n - 1}" and labels[-1] == f"AG {n - 1}"
    assert [b["label"] for b in fig["layout"]["updatemenus"][0]["buttons"]] == [
        "▶ Play",
        "❚❚ Pause",
    ]
    assert f"ring N={n}" in fig["layout"]["title"]["text"]
    assert all(f"ring N={n}" in f["layout"]["title"]["text"] for f in fig["frames"])


@pytest.mark.parametrize("n,budget", [(8, 500_000), (32, 3_000_000)])
def test_payload_budgets(n, budget):
    for e in (n, 16 * n):
        _, _, fig = _ring_fig(n, e, message_bytes=GIB)
        assert len(json.dumps(fig)) <= budget
        go.Figure(fig)  # a valid Plotly spec, frames included


def test_cell_colours_are_the_traced_contribution_counts():
    n = 6
    _, trace, fig = _ring_fig(n)
    for t, frame in enumerate(fig["frames"]):
        assert frame["data"][0]["marker"]["color"] == trace.contribution_counts[t].ravel().tolist()
    colours = [np.array(f["data"][0]["marker"]["color"]).reshape(n, n) for f in fig["frames"]]
    assert (colours[0] == 1).all() and (colours[-1] == n).all()
    for r in range(n):  # end of reduce-scatter: rank r holds all n contributions in chunk (r+1)
        assert colours[n - 1][r, (r + 1) % n] == n
    assert fig["data"][0]["marker"]["cmin"] == 1 and fig["data"][0]["marker"]["cmax"] == n


def test_cells_show_the_real_numbers_for_small_rings():
    x, trace, fig = _ring_fig(4)
    assert fig["frames"][0]["data"][0]["text"] == [str(v) for v in x.ravel().tolist()]
    total = x.sum(axis=0)  # independent: the column sums of the inputs
    assert fig["frames"][-1]["data"][0]["text"] == [
        str(total[c]) for _ in range(4) for c in range(4)
    ]
    _, _, big = _ring_fig(16)
    assert "text" not in big["frames"][3]["data"][0]


def test_arrows_join_sender_and_receiver_cells_of_the_sent_chunk():
    n = 8
    _, trace, fig = _ring_fig(n)
    radius = R_INNER + (R_OUTER - R_INNER) / n * (np.arange(n) + 0.5)
    assert fig["frames"][0]["data"][2]["x"] == []
    for t in range(1, 2 * n - 1):
        heads = fig["frames"][t]["data"][2]
        assert len(heads["x"]) == n
        for r, (hx, hy) in enumerate(zip(heads["x"], heads["y"])):
            chunk = (r - (t - 1)) % n if t < n else (r + 1 - (t - n)) % n  # collectives note §1
            assert math.hypot(hx, hy) == pytest.approx(radius[chunk], abs=2e-3)
            dst_angle = math.pi / 2 - 2 * math.pi * ((r + 1) % n) / n
            src_angle = math.pi / 2 - 2 * math.pi * r / n
            to_dst = math.hypot(
                hx - radius[chunk] * math.cos(dst_angle), hy - radius[chunk] * math.sin(dst_angle)
            )
            to_src = math.hypot(
                hx - radius[chunk] * math.cos(src_angle), hy - radius[chunk] * math.sin(src_angle)
            )
            assert to_dst < to_src


def test_running_bytes_and_elapsed_time_in_titles():
    _, _, fig = _ring_fig(8, message_bytes=GIB, link_name="NVLink 4")
    last = fig["frames"][-1]["layout"]["title"]["text"]
    # 2 * 7/8 * 1 GiB = 1.75 GiB; 1.75 * 2^30 B / 450e9 B/s = 4.1757 ms.
    assert "sent per GPU 1.75 GiB" in last and "elapsed 4.18 ms on NVLink 4" in last
    assert "sent per GPU 128 MiB" in fig["frames"][1]["layout"]["title"]["text"]


def test_animation_rejects_what_it_cannot_draw():
    with pytest.raises(ValueError, match="N=33 ranks is too many to animate"):
        ring_animation_figure(ring_all_reduce(np.ones((33, 33))), bandwidth_bytes_per_s=1e9)
    with pytest.raises(ValueError, match="needs a ring all-reduce trace"):
        ring_animation_figure(naive_all_reduce(np.ones((4, 4))), bandwidth_bytes_per_s=1e9)


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


@pytest.mark.parametrize("k", [0, 1, 7, 14])
def test_start_step_opens_at_that_frame_with_the_slider_there(k):
    _, trace, plain = _ring_fig(8, message_bytes=GIB)
    _, _, fig = _ring_fig(8, message_bytes=GIB, start_step=k)
    frame = fig["frames"][k]
    assert fig["layout"]["sliders"][0]["active"] == k
    assert fig["layout"]["title"]["text"] == frame["layout"]["title"]["text"]
    # The drawn traces hold frame k's data: cell colours = contributions after k steps (from the
    # trace),
    # arrows = frame k's arcs, and the untouched GPU labels stay.
    assert fig["data"][0]["marker"]["color"] == trace.contribution_counts[k].ravel().tolist()
    assert fig["data"][0]["marker"]["colorscale"] == "Viridis"  # merged, not replaced
    for i in (1, 2):
        assert (
            fig["data"][i]["x"] == frame["data"][i]["x"]
            and fig["data"][i]["y"] == frame["data"][i]["y"]
        )
    assert len(fig["data"][2]["x"]) == (0 if k == 0 else 8)  # one arrow per GPU per step
    assert fig["data"][3] == plain["data"][3] and fig["frames"] == plain["frames"]
    play = fig["layout"]["updatemenus"][0]["buttons"][0]
    assert play["args"][0] == (None if k == 0 else step_labels(8)[k:])  # ▶ runs on from step k
    go.Figure(fig)
    assert plain["layout"]["sliders"][0]["active"] == 0  # the base figure is not mutated


def test_open_at_step_rejects_a_step_outside_the_frames():
    _, _, fig = _ring_fig(4)
    with pytest.raises(ValueError, match=r"step=7 is not a frame of this animation: use 0 … 6"):
        open_at_step(fig, 7)
    assert open_at_step(fig, 6)["layout"]["title"]["text"].startswith("ring N=4 · AG 3")


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
