"""Planner figures: the cluster drawing, memory and breakdown stacks, comparison, table rows."""
import plotly.graph_objects as go
import pytest

from core.hardware import make_cluster
from core.model import preset
from core.planner import Layout, Training, evaluate, search
from figures.planner import (CROSSING_COLOUR, PALETTE, breakdown_figure, cluster_figure, compare_figure,
                             memory_figure, table_rows)


@pytest.fixture(scope="module")
def pair():
    model, c = preset("GPT-3 175B"), make_cluster(num_nodes=8, gpus_per_node=8)
    tr = Training(global_batch=64, recompute="full")
    return (evaluate(model, c, Layout(dp=1, tp=8, pp=8), tr),
            evaluate(model, c, Layout(dp=1, tp=8, pp=8, order="pp-tp-dp"), tr))


def test_cluster_figure_tp_groups_inside_nodes(pair):
    good, _ = pair
    fig = cluster_figure(good.placement, colour_by="tp")
    go.Figure(fig)
    cells = fig["data"][0]
    assert len(cells["x"]) == 64 and len(fig["layout"]["shapes"]) == 8  # 64 GPUs, 8 node boxes
    # TP innermost: node k holds exactly TP group k, so each node's 8 cells share one colour.
    colours = cells["marker"]["color"]
    assert all(colours[8 * k:8 * k + 8] == [PALETTE[k]] * 8 for k in range(8))
    assert CROSSING_COLOUR not in cells["marker"]["line"]["color"]
    assert "DP 1 × PP 8 × TP 8" in fig["layout"]["title"]["text"]
    assert fig["layout"]["title"]["subtitle"]["text"].startswith("0 of 8 TP groups cross")


def test_cluster_figure_highlights_crossing_groups(pair):
    _, bad = pair
    fig = cluster_figure(bad.placement, colour_by="tp")
    assert fig["data"][0]["marker"]["line"]["color"] == [CROSSING_COLOUR] * 64
    assert "8 of 8 TP groups cross" in fig["layout"]["title"]["subtitle"]["text"]
    # Coloured by PP stage the same placement has stage r on local GPU r of every node, no crossing.
    pp = cluster_figure(bad.placement, colour_by="pp")["data"][0]
    assert pp["marker"]["color"][:8] == PALETTE[:8] and CROSSING_COLOUR not in pp["marker"]["line"]["color"]
    with pytest.raises(ValueError, match="colour_by='xx' is unknown"):
        cluster_figure(bad.placement, colour_by="xx")


def test_cluster_figure_caps_drawn_nodes():
    c = make_cluster(num_nodes=256, gpus_per_node=8)
    ev = evaluate(preset("Llama-2 7B"), c, Layout(dp=512, tp=4), Training(global_batch=512))
    fig = cluster_figure(ev.placement, max_nodes=16)
    assert len(fig["data"][0]["x"]) == 128 and "(nodes 0–15 of 256 drawn)" in fig["layout"]["title"]["text"]


def test_breakdown_bars_sum_to_step_time(pair):
    good, bad = pair
    fig = breakdown_figure(good)
    go.Figure(fig)
    assert fig["layout"]["barmode"] == "stack"
    assert sum(t["y"][0] for t in fig["data"]) == pytest.approx(good.step_time_s)
    assert {t["name"] for t in fig["data"]} >= {"compute", "exposed TP", "PP bubble", "PP p2p",
                                                 "exposed DP", "ZeRO-3 gathers"}
    assert f"MFU {good.mfu:.1%}" in fig["layout"]["title"]["subtitle"]["text"]
    two = breakdown_figure([good, bad], ["TP in node", "TP across"])
    tp = next(t for t in two["data"] if t["name"] == "exposed TP")
    assert tp["x"] == ["TP in node", "TP across"] and tp["y"][1] > tp["y"][0]


def test_memory_and_compare_figures(pair):
    good, bad = pair
    mem = memory_figure(good, units="decimal")
    go.Figure(mem)
    assert len(mem["data"][0]["x"]) == 8  # one bar per pipeline stage
    assert mem["layout"]["shapes"][0]["y0"] == pytest.approx(80)  # capacity line, GB
    assert "fits" in mem["layout"]["title"]["subtitle"]["text"]
    cmp = compare_figure(good, bad, labels=("NVLink TP", "TP across nodes"), units="decimal")
    go.Figure(cmp)
    assert f"{bad.step_time_s / good.step_time_s:.2f}× the step time" in cmp["layout"]["title"]["text"]
    assert "order pp-tp-dp" in cmp["layout"]["title"]["subtitle"]["text"]
    params = next(t for t in cmp["data"] if t["name"] == "Parameters")
    assert params["y"][0] == pytest.approx(good.memory.parameters_bytes / 1e9)


def test_table_rows_ranked_then_rejected():
    res = search(preset("Llama-2 7B"), make_cluster(num_nodes=1), Training(global_batch=16))
    rows = table_rows(res)
    assert len(rows) == len(res.ranked) + len(res.rejected)
    assert rows[0]["rank"] == 1 and rows[0]["vs_fastest"] == 0
    assert sum(r["boring"] for r in rows) == 1
    assert all(r["reason"] for r in rows[len(res.ranked):])
