"""The training-step drawing, read back from its figure data: a frame per phase, arrows on the links
the layout implies (TP inside a node box, PP across boxes, DP between replicas), waiting GPUs
greyed, sharded state hatched.
"""

import plotly.graph_objects as go
import pytest

from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, evaluate
from core.stepplan import step_plan
from figures.step import step_figure
from figures.step import text as tx
from figures.style import COLOURS
from figures.theme import presenter

MODEL, CLUSTER = preset("Llama-2 70B"), make_cluster(num_nodes=8)  # 8 nodes x 8 H100


def _fig(lay: Layout, index: int = 0, batch: int = 64):
    plan = step_plan(MODEL, CLUSTER, lay, Training(global_batch=batch, seq_len=4096))
    return plan, step_figure(plan, index)


def _frame(fig: dict, plan, key: str) -> list[dict]:
    """The traces as Plotly shows them at a phase: the figure's, with that frame merged in."""
    frame = fig["frames"][[p.key for p in plan.phases].index(key)]
    data = list(fig["data"])
    for i, update in zip(frame["traces"], frame["data"]):
        data[i] = {**data[i], **update}
    return data


def _named(traces: list[dict], name: str) -> dict:
    return next(t for t in traces if t.get("name") == name)


def _segments(trace: dict) -> list[tuple[tuple, tuple]]:
    xs, ys = trace["x"], trace["y"]
    return [((xs[i], ys[i]), (xs[i + 1], ys[i + 1])) for i in range(0, len(xs), 3)]


def _box(fig: dict, point: tuple) -> int:
    """Index of the node box (layout shape) holding a point."""
    x, y = point
    hits = [
        i
        for i, s in enumerate(fig["layout"]["shapes"])
        if s["x0"] <= x <= s["x1"] and s["y0"] <= y <= s["y1"]
    ]
    assert len(hits) == 1, point
    return hits[0]


def _polygons(trace: dict) -> int:
    """Polygons drawn: the zero-width bars fills() keeps for the glide draw nothing."""
    xs, out, start = trace["x"], 0, 0
    for i, x in enumerate(xs):
        if x is None:
            out += max(xs[start:i]) > min(xs[start:i])
            start = i + 1
    return out


def test_a_frame_per_phase_and_a_valid_spec():
    plan, fig = _fig(Layout(dp=1, tp=8, pp=8))
    assert len(fig["frames"]) == len(plan.phases) == 5  # rest, fill, steady, drain, optimizer
    assert len({f["name"] for f in fig["frames"]}) == 5
    for i, f in enumerate(fig["frames"]):
        assert f["layout"]["title"]["text"].startswith(f"<b>Phase {i + 1} of 5")
        assert len(f["data"]) == len(f["traces"])
    go.Figure(fig)  # Plotly accepts the spec, frames included
    # A frame opened directly shows what Play reaches: same traces, phase by phase.
    for i, p in enumerate(plan.phases):
        opened = step_figure(plan, i)
        assert _frame(opened, plan, p.key) == _frame(fig, plan, p.key)


def test_slide_titles_put_the_times_in_a_subtitle_on_every_phase():
    # At 24 px "Phase 3 of 5: … (gradient accumulation) · 507 ms → 52.8 s (52.3 s)" ran off the
    # 1280 px slide (issue 15): presenting, the times sit under the title, for every phase.
    plan = step_plan(MODEL, CLUSTER, Layout(dp=1, tp=8, pp=8), Training(global_batch=64))
    fig = step_figure(plan, 2, present=True)
    titles = [f["layout"]["title"] for f in fig["frames"]] + [fig["layout"]["title"]]
    assert all(t["subtitle"]["text"] and "→" not in t["text"] for t in titles)
    assert titles[0]["subtitle"]["text"] == "t = 0 s"  # before the step: no times yet
    steady = titles[2]["subtitle"]["text"]
    assert steady == tx.timing(plan.phases[2])  # "start → end (span)", as on the laptop
    laptop = step_figure(plan, 2)["layout"]["title"]
    assert "subtitle" not in laptop and laptop["text"].endswith(f" · {steady}")


def test_tp_arrows_stay_in_a_node_and_pp_arrows_cross():
    plan, fig = _fig(Layout(dp=1, tp=8, pp=8))
    data = _frame(fig, plan, "steady")
    tp = _segments(_named(data, tx.TRAFFIC["tp"]))
    pp = _segments(_named(data, tx.TRAFFIC["pp_forward"]))
    assert len(tp) == 8 * 8  # a ring of 8 links in each of 8 nodes
    assert all(_box(fig, a) == _box(fig, b) for a, b in tp)
    assert len(pp) == 7 * 8  # 7 stage boundaries, one send per TP rank
    assert all(_box(fig, a) != _box(fig, b) for a, b in pp)


def test_tp_across_nodes_when_the_order_puts_it_there():
    # order pp-tp-dp: TP ranks are 8 apart, one per node, so every TP link crosses a box.
    plan, fig = _fig(Layout(dp=1, tp=8, pp=8, order="pp-tp-dp"))
    tp = _segments(_named(_frame(fig, plan, "steady"), tx.TRAFFIC["tp"]))
    assert tp and all(_box(fig, a) != _box(fig, b) for a, b in tp)


def test_dp_arrows_only_in_the_gradient_sync():
    plan, fig = _fig(Layout(dp=2, tp=8, pp=4), batch=128)
    name = tx.TRAFFIC["dp_all_reduce"]
    sync = _segments(_named(_frame(fig, plan, "grad_sync"), name))
    assert len(sync) == 2 * 32  # 32 DP pairs (one per TP rank and stage), both directions
    assert all(_box(fig, a) != _box(fig, b) for a, b in sync)  # replicas sit on other nodes
    assert _named(_frame(fig, plan, "steady"), name)["x"] == []


def test_waiting_gpus_are_greyed_in_the_fill():
    lay = Layout(dp=1, tp=8, pp=8)
    plan, fig = _fig(lay)
    veil = _named(_frame(fig, plan, "fill"), "waiting (greyed)")
    # The fill lasts one forward of every stage, sum F; stage r runs P - r of them: busy
    # (8 - r) F_r / sum F. The end stages run ~2 % longer than the middle ones (the last one
    # also times the LM head and loss), which pulls stage 4 just under a half: stages 4-7 wait,
    # 8 GPUs (TP) each.
    tr = Training(global_batch=64, seq_len=4096)  # as _fig builds it
    f = [st.forward_s for st in evaluate(MODEL, CLUSTER, lay, tr).stages]
    waiting = [r for r in range(8) if (8 - r) * f[r] / sum(f) < 0.5]
    assert waiting == [4, 5, 6, 7]
    assert _polygons(veil) == len(waiting) * 8
    assert _polygons(_named(_frame(fig, plan, "steady"), "waiting (greyed)")) == 0


def test_sharded_state_is_hatched_and_replicated_is_solid():
    plan, fig = _fig(Layout(dp=8, tp=8, pp=1, zero_stage=3), batch=64)
    rest = _frame(fig, plan, "rest")
    hatched = _named(rest, f"{tx.PARTS['parameters']} (sharded: hatched)")
    assert hatched["fillpattern"]["shape"] == "/" and _polygons(hatched) == 64
    assert _polygons(_named(rest, f"{tx.PARTS['parameters']} (replicated)")) == 0
    # Each bar is filled by held / unsharded bytes: 1/8 of the track (ceil of a shard aside).
    xs = hatched["x"]
    track = 0.84
    assert xs[1] - xs[0] == pytest.approx(track / 8, abs=2e-3)
    plan, ddp = _fig(Layout(dp=1, tp=8, pp=8))
    rest = _frame(ddp, plan, "rest")
    assert _polygons(_named(rest, f"{tx.PARTS['parameters']} (replicated)")) == 64


def test_timeline_marks_the_phase_and_presenter_keeps_the_veil_grey():
    plan, fig = _fig(Layout(dp=1, tp=8, pp=8), index=1)
    marker = fig["data"][-1]
    assert marker["xaxis"] == "x2" and max(x for x in marker["x"] if x is not None) > 0.0
    assert fig["layout"]["title"]["text"].startswith("<b>Phase 2 of 5")
    shown = presenter(fig)
    veils = [t for t in _frame(shown, plan, "fill") if t.get("name") == "waiting (greyed)"]
    assert veils[0]["fillcolor"] == COLOURS["idle_veil"]


def test_a_phase_outside_the_step_is_refused():
    plan = step_plan(MODEL, CLUSTER, Layout(dp=1, tp=8, pp=8), Training(global_batch=64))
    with pytest.raises(ValueError, match="0 … 4"):
        step_figure(plan, 5)


def test_open_at_equals_building_at_that_phase():
    from figures.step import open_at

    plan, fig = _fig(Layout(dp=2, tp=8, pp=4), batch=128)
    for i in range(len(plan.phases)):
        built, opened = step_figure(plan, i), open_at(fig, i)
        assert opened["data"] == built["data"]
        assert opened["layout"]["title"] == built["layout"]["title"]
        # One step control (the page's URL-bound stepper): no in-chart Play, no frames sent.
        assert "updatemenus" not in opened["layout"] and "frames" not in opened


def _ends(fig: dict, plan, name: str) -> set[tuple[int, int]]:
    """(sender, receiver) ranks of a traffic trace's arrows: each end's nearest drawn GPU cell."""
    from figures.step import grid

    geo = grid.geometry(plan.placement, plan.drawn)

    def near(x, y):
        return min(
            geo.centres, key=lambda r: (geo.centres[r][0] - x) ** 2 + (geo.centres[r][1] - y) ** 2
        )

    t = _named(fig["data"], name)
    xs, ys = t["x"], t["y"]
    return {(near(xs[i], ys[i]), near(xs[i + 1], ys[i + 1])) for i in range(0, len(xs), 3)}


def test_cp_and_ep_arrows_join_their_groups():
    from core.expert_parallel.spec import any_preset
    from figures.step import open_at

    # Llama-2 7B on 2 nodes: DP 2 x CP 2 x TP 2 x PP 2 on the planner's grid (CP right after TP,
    # order tp-pp-dp: rank = t + 2 c + 4 p + 8 d), so CP ring partners differ by 2, in one node.
    node2, tr = make_cluster(num_nodes=2), Training(global_batch=64, seq_len=4096)
    plan = step_plan(preset("Llama-2 7B"), node2, Layout(dp=2, tp=2, pp=2, cp=2), tr)
    steady = [p.key for p in plan.phases].index("steady")
    fig = open_at(step_figure(plan), steady)
    assert _ends(fig, plan, tx.TRAFFIC["cp_ring"]) == {(r, r ^ 2) for r in range(16)}
    rest = open_at(step_figure(plan), 0)
    assert _named(rest["data"], tx.TRAFFIC["cp_ring"])["x"] == []  # no traffic before the step
    # Mixtral DP 4 x TP 2 x PP 2, EP 2 (rank = t + 2 p + 4 d): an EP group is 2 consecutive
    # members t + 2 p + 4 d of a DP group, DP coordinates {0, 1} and {2, 3}: partners r and r + 4.
    moe = step_plan(any_preset("Mixtral 8x7B"), node2, Layout(dp=4, tp=2, pp=2, ep=2), tr)
    want = {(r, r ^ 4) for r in range(16)}
    fig = open_at(step_figure(moe), steady)
    assert _ends(fig, moe, tx.TRAFFIC["ep_all_to_all"]) == want  # EP 2: the same DP pairs
    # Kinds no phase draws stay out of the legend (the legend sits above the grid).
    shown = {t["name"] for t in fig["data"] if t.get("name") and t.get("showlegend", True)}
    assert tx.TRAFFIC["ep_all_to_all"] in shown and tx.TRAFFIC["cp_ring"] not in shown
    assert fig["layout"]["legend"]["y"] < 1  # inside the plot area: presenter keeps it on top


def test_open_at_came_from_opens_there_and_carries_the_move():
    from figures.step import open_at

    plan, fig = _fig(Layout(dp=2, tp=8, pp=4), batch=128)
    fill = [p.key for p in plan.phases].index("fill")
    opened = open_at(fig, fill + 1, came_from=fill, token="step-7")
    # The traces open at the fill (where the move starts), the caption at the steady state.
    assert opened["data"] == open_at(fig, fill)["data"]
    assert opened["layout"]["title"] == open_at(fig, fill + 1)["layout"]["title"]
    glide = opened["layout"]["meta"]["glide"]
    assert glide["token"] == "step-7"
    move, target = opened["frames"]
    assert glide["frames"] == [move["name"], target["name"]]
    assert target == fig["frames"][fill + 1]  # exactly the steady state's frame, at the end
    # The glide frame: the steady state's own values of the traces it moves.
    by_trace = dict(zip(target["traces"], target["data"]))
    assert move["traces"] and all(by_trace[k] == d for k, d in zip(move["traces"], move["data"]))
    assert "updatemenus" not in opened["layout"]  # still one step control: the page's stepper
    back = open_at(fig, fill, came_from=fill + 1, token="step-8")
    assert back["data"] == open_at(fig, fill + 1)["data"]


def test_every_frame_keeps_each_bar_traces_point_count():
    plan, fig = _fig(Layout(dp=8, tp=8, pp=1, zero_stage=3), batch=64)
    bars = [
        k
        for k, t in enumerate(fig["data"])
        if t.get("fill") == "toself" and "(" in t.get("name", "")
    ]
    bars = [k for k in bars if "waiting" not in fig["data"][k]["name"]]
    assert len(bars) == 7  # 3 parts x (solid, hatched) + activations
    # 64 GPUs drawn, one 5-point rectangle plus its None each, in every phase.
    for f in fig["frames"]:
        for k, t in zip(f["traces"], f["data"]):
            if k in bars:
                assert len(t["x"]) == len(fig["data"][k]["x"]) == 64 * 6


def test_open_at_refuses_a_came_from_that_is_not_a_neighbour():
    from figures.step import open_at

    plan, fig = _fig(Layout(dp=1, tp=8, pp=8))
    for bad in (0, 2, 4):  # phase 2's neighbours are 1 and 3
        with pytest.raises(ValueError, match="one phase at a time.*pass 1 .Next. or 3 .Back."):
            open_at(fig, 2, came_from=bad)
    with pytest.raises(ValueError, match="within 0 … 4"):
        open_at(fig, 4, came_from=5)


def test_slide_legend_is_one_short_column_beside_the_grid_with_the_same_colours():
    """Issue 15: at 1280×720 the laptop's legend took three rows above the grid. A slide's is one
    column right of the plot (Plotly's paper x > 1) in short names, the grid reaching the plot's
    top; each trace keeps its colour and dash (one meaning per colour, figures/style.py)."""
    lay = Layout(dp=2, tp=8, pp=4, zero_stage=1)
    plan = step_plan(MODEL, CLUSTER, lay, Training(global_batch=128, seq_len=4096))
    laptop, slide = step_figure(plan, 2), step_figure(plan, 2, present=True)
    spot = slide["layout"]["legend"]
    assert spot["orientation"] == "v" and spot["x"] > 1 and spot["xanchor"] == "left"
    assert laptop["layout"]["legend"]["orientation"] == "h"  # the laptop page is unchanged
    assert slide["layout"]["yaxis"]["domain"][1] == 1 > laptop["layout"]["yaxis"]["domain"][1]
    shown = [t["name"] for t in slide["data"] if t.get("name") and t.get("showlegend", True)]
    # 21 characters at 16 px (~8.8 px each) + a 40 px sample: a ≈ 225 px column of the 1,120 px
    assert shown and max(map(len, shown)) <= 21, shown
    assert "TP all-reduce" in shown and "parameters" in shown and "optimizer (sharded)" in shown
    for a, b in zip(laptop["data"], slide["data"], strict=True):
        assert (a.get("fillcolor"), a.get("line")) == (b.get("fillcolor"), b.get("line"))
        assert a.get("showlegend", True) == b.get("showlegend", True)
