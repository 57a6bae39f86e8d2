"""Planner figures: the cluster drawing, memory and breakdown stacks, comparison, table rows."""

import plotly.graph_objects as go
import pytest

from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, evaluate, search
from core.units import format_flops, format_seconds
from figures.planner import (
    bare_cluster_figure,
    breakdown_figure,
    calibration_rows,
    cluster_figure,
    compare_figure,
    filter_rows,
    headline_metrics,
    how_computed_markdown,
    layout_figure,
    memory_figure,
    no_layout_message,
    table_columns,
    table_rows,
    takeaway_text,
)
from figures.style import COLOURS, GROUP_COLOURS


def test_cluster_figure_tp_groups_inside_nodes(pair):
    good, _ = pair
    fig = cluster_figure(good.placement, colour_by="tp")
    go.Figure(fig)
    cells = fig["data"][0]
    assert len(cells["x"]) == 64 and len(fig["layout"]["shapes"]) == 8  # 64 GPUs, 8 node boxes
    # TP innermost: node k holds exactly TP group k, so each node's 8 cells share one colour.
    colours = cells["marker"]["color"]
    assert all(colours[8 * k : 8 * k + 8] == [GROUP_COLOURS[k]] * 8 for k in range(8))
    assert COLOURS["crossing"] not in cells["marker"]["line"]["color"]
    assert "DP 1 × PP 8 × TP 8" in fig["layout"]["title"]["text"]
    assert fig["layout"]["title"]["subtitle"]["text"].startswith("0 of 8 TP groups cross")


def test_cluster_figure_highlights_crossing_groups(pair):
    _, bad = pair
    fig = cluster_figure(bad.placement, colour_by="tp")
    assert fig["data"][0]["marker"]["line"]["color"] == [COLOURS["crossing"]] * 64
    assert "8 of 8 TP groups cross" in fig["layout"]["title"]["subtitle"]["text"]
    # Coloured by PP stage the same placement has stage r on local GPU r of every node, no crossing.
    pp = cluster_figure(bad.placement, colour_by="pp")["data"][0]
    assert (
        pp["marker"]["color"][:8] == GROUP_COLOURS[:8]
        and COLOURS["crossing"] not in pp["marker"]["line"]["color"]
    )
    with pytest.raises(ValueError, match="colour_by='xx' is unknown"):
        cluster_figure(bad.placement, colour_by="xx")


def test_cluster_figure_caps_drawn_nodes():
    c = make_cluster(num_nodes=256, gpus_per_node=8)
    ev = evaluate(preset("Llama-2 7B"), c, Layout(dp=512, tp=4), Training(global_batch=512))
    fig = cluster_figure(ev.placement, max_nodes=16)
    assert (
        len(fig["data"][0]["x"]) == 128
        and "(nodes 0–15 of 256 drawn)" in fig["layout"]["title"]["text"]
    )


def test_breakdown_bars_sum_to_step_time(pair):
    good, bad = pair
    fig = breakdown_figure(good)
    go.Figure(fig)
    assert fig["layout"]["barmode"] == "stack"
    assert sum(t["y"][0] for t in fig["data"]) == pytest.approx(good.step_time_s)
    assert {t["name"] for t in fig["data"]} >= {
        "compute",
        "exposed TP",
        "PP bubble",
        "PP p2p",
        "exposed DP",
        "ZeRO-3 gathers",
    }
    assert f"MFU {good.mfu:.1%}" in fig["layout"]["title"]["subtitle"]["text"]
    two = breakdown_figure([good, bad], ["TP in node", "TP across"])
    tp = next(t for t in two["data"] if t["name"] == "exposed TP")
    assert tp["x"] == ["TP in node", "TP across"] and tp["y"][1] > tp["y"][0]


def test_memory_and_compare_figures(pair):
    good, bad = pair
    mem = memory_figure(good, units="decimal")
    go.Figure(mem)
    assert len(mem["data"][0]["x"]) == 8  # one bar per pipeline stage
    # capacity line, GB: the 81,559 MiB an "80 GB" H100 reports
    assert mem["layout"]["shapes"][0]["y0"] == pytest.approx(81_559 * 2**20 / 1e9)
    assert "fits" in mem["layout"]["title"]["subtitle"]["text"]
    cmp = compare_figure(good, bad, labels=("NVLink TP", "TP across nodes"), units="decimal")
    go.Figure(cmp)
    assert (
        f"{bad.step_time_s / good.step_time_s:.2f}× the step time" in cmp["layout"]["title"]["text"]
    )
    assert "order pp-tp-dp" in cmp["layout"]["title"]["subtitle"]["text"]
    params = next(t for t in cmp["data"] if t["name"] == "Parameters")
    assert params["y"][0] == pytest.approx(good.memory.parameters_bytes / 1e9)


def test_table_rows_ranked_then_rejected():
    res = search(preset("Llama-2 7B"), make_cluster(num_nodes=1), Training(global_batch=16))
    rows = table_rows(res)
    assert len(rows) == len(res.ranked) + len(res.rejected)
    assert rows[0]["rank"] == 1 and rows[0]["vs_fastest"] == 0
    assert sum(r["boring"] for r in rows) == 1
    assert all(r["reason"] for r in rows[len(res.ranked) :])


# --- page helpers: the two-panel figure, flipped TP, picks, filters and text, each checked by hand
# ---
def test_layout_figure_time_left_memory_right(pair):
    good, _ = pair
    fig = layout_figure(good, units="decimal")
    go.Figure(fig)
    left = [t for t in fig["data"] if t.get("xaxis", "x") == "x"]
    right = [t for t in fig["data"] if t.get("xaxis") == "x2"]
    assert all(t["yaxis"] == "y2" for t in right) and len(left) == 11  # 9 parts + CP, EP
    assert sum(t["y"][0] for t in left) == pytest.approx(good.step_time_s)
    params = next(t for t in right if t["name"] == "Parameters")
    assert len(params["x"]) == 8  # PP = 8 stages
    assert params["y"][0] == pytest.approx(good.memory.stages[0].parameters_bytes / 1e9)
    line = fig["layout"]["shapes"][0]
    assert (line["xref"], line["yref"], line["y0"]) == (
        "x2 domain",
        "y2",
        pytest.approx(85.520809984),
    )  # H100: 81,559 MiB = 85.52 GB
    assert all(a["xref"] in ("x2", "x2 domain") for a in fig["layout"]["annotations"][1:])
    assert fig["layout"]["title"]["text"].endswith("fits")


def test_filter_rows():
    res = search(
        preset("Llama-2 13B"),
        make_cluster(num_nodes=2),
        Training(global_batch=32, seq_len=4096, recompute="selective"),
    )
    rows = table_rows(res)
    ranked = filter_rows(rows, "ranked", 10_000, units="decimal")
    assert len(ranked) == len(res.ranked) and {r["status"] for r in ranked} == {"ok"}
    assert ranked[0]["memory"] == pytest.approx(res.ranked[0].memory.total_bytes / 1e9)
    memory = filter_rows(rows, "memory", 5)
    assert len(memory) == 5 and all(r["status"] == "memory" and r["memory"] is None for r in memory)
    assert len(filter_rows(rows, "all", 10_000)) == len(res.ranked) + len(res.rejected)
    nothing = search(preset("Llama-3.1 405B"), make_cluster(num_nodes=1), Training(global_batch=8))
    msg = no_layout_message(nothing, 8, "Llama-3.1 405B")
    assert msg.startswith("No layout of 8 GPUs runs Llama-3.1 405B")
    assert f"memory ({sum(r.rule == 'memory' for r in nothing.rejected):,})" in msg
    assert "nothing fits" in takeaway_text(nothing)


def test_how_computed_uses_the_papers_closed_forms(pair):
    good, _ = pair
    text = how_computed_markdown(good, units="decimal")
    # GPT-3 175B, B = 64, s = 2048: Korthikanti's 72 B s l h^2 (1 + s/6h + V/12lh) model FLOPs and
    # Narayanan's Eq. 3 96-form with full recompute (docs/notes/planner.md §1), by hand.
    B, s, l, h, V = 64, 2048, 96, 12288, 50257
    f_model = 72 * B * s * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h))
    f_hw = 96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h))
    assert good.model_flops == pytest.approx(f_model) and good.hardware_flops == pytest.approx(f_hw)
    assert (
        f"**F_model = {format_flops(f_model)}**" in text
        and f"**F_hw = {format_flops(f_hw)}**" in text
    )
    mfu = f_model / (64 * 989.4e12 * good.step_time_s)
    assert f"**{mfu:.1%}**" in text
    bubble = (8 - 1) * (good.stage.forward_s + good.stage.backward_s)  # 1F1B closed form, p = 8
    assert f"(p−1)(t_F + t_B)/v = {format_seconds(bubble)}" in text
    assert f"**{format_seconds(good.step_time_s)}**" in text


def test_calibration_rows_and_headline(pair):
    rows = calibration_rows()
    assert [r["published TFLOP/s"] for r in rows] == [
        137,
        138,
        142,
        135,
        138,
        140,
        148,
        155,
        163,
        163,
    ]
    assert [r["DP"] for r in rows] == [
        32,
        32,
        32,
        32,
        32,
        32,
        24,
        15,
        9,
        6,
    ]  # GPUs / (TP x PP), Table 1
    assert all(abs(r["model (fit)"] / r["published TFLOP/s"] - 1) < 0.15 for r in rows)
    good, _ = pair
    head = {label: (value, delta) for label, value, delta, _ in headline_metrics(good, "decimal")}
    assert head["GPUs"] == ("64", "DP 1 × TP 8 × PP 8")
    assert head["MFU"][0] == f"{good.mfu:.1%}"
    assert head["Memory per GPU (fullest)"][1] == "fits 85.5 GB"  # 81,559 MiB


def test_bare_cluster_figure_draws_every_gpu_grey():
    c = make_cluster(num_nodes=9)
    fig = bare_cluster_figure(c, "every layout breaks a rule")
    cells = fig["data"][0]
    assert (
        len(cells["x"]) == 72
        and cells["marker"]["color"].upper() == "#D9D9D9"
        and cells["mode"] == "markers"
    )
    assert fig["layout"]["title"]["text"] == "9 nodes × 8 H100 SXM · no layout drawn"
    assert fig["layout"]["title"]["subtitle"]["text"] == "every layout breaks a rule"


def test_table_columns_follow_the_filter():
    assert table_columns("all")[:2] == ["rank", "dp"] and "reason" in table_columns("all")
    assert "reason" not in table_columns("ranked") and "mfu" in table_columns("ranked")
    memory = table_columns("memory")
    assert "mfu" not in memory and "rank" not in memory and memory[-1] == "reason"
    # Status and memory sit right after the layout's degrees, not off-screen past the labels.
    assert table_columns("all").index("status") < table_columns("all").index("schedule_label")
    assert table_columns("all").index("memory") < 12  # after DP, TP, PP, CP, EP, ZeRO, mb…


def test_cluster_map_text_contrasts_with_each_cell():
    from figures.style import ink_on as _ink

    assert _ink("#000000") == "#ffffff" and _ink("#ffffff") == "#111111"
    assert _ink("#1f77b4") == "#ffffff"  # mid blue: L = 0.168 → white 4.8:1 beats black 4.4:1
    assert _ink("#EECA3B") == "#111111"  # yellow: L = 0.61


@pytest.mark.parametrize("nodes", [1, 3, 9, 17, 64])
def test_cluster_map_leaves_its_width_to_the_page_at_a_whole_pixel_height(nodes):
    """Streamlit 1.67 redraws a chart at its container's width and a whole-pixel height: a
    declared width or a fractional height made that second draw a full one (docs/notes/plotly.md
    §5). At 9 nodes the equal-scale height works out at 272.17 px before rounding."""
    c = make_cluster(num_nodes=nodes, gpus_per_node=8)
    tr = Training(global_batch=nodes * 8 * 4)
    ev = evaluate(preset("Llama-2 7B"), c, Layout(dp=nodes * 8), tr)
    layout = cluster_figure(ev.placement)["layout"]
    assert "width" not in layout
    assert isinstance(layout["height"], int) and 200 <= layout["height"] <= 1400
