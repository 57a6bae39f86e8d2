"""core.planner.picks: the layout a page pick names, and one layout with TP flipped across nodes."""

from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, evaluate, pick_layout, search, tp_flipped


def test_tp_flipped_moves_tp_across_and_back(pair):
    good, bad = pair
    assert (
        tp_flipped(good).order == "pp-tp-dp"
    )  # first order (innermost first) putting TP across nodes
    assert tp_flipped(bad).order == "tp-pp-dp"
    one_node = evaluate(
        preset("Llama-2 7B"),
        make_cluster(num_nodes=1),
        Layout(dp=1, tp=8),
        Training(global_batch=8),
    )
    assert tp_flipped(one_node) is None  # one node: TP cannot cross anything
    no_tp = evaluate(
        preset("Llama-2 7B"), make_cluster(num_nodes=2), Layout(dp=16), Training(global_batch=16)
    )
    assert tp_flipped(no_tp) is None


def test_pick_layout_names_a_ranked_layout_or_the_boring_one():
    res = search(
        preset("Llama-2 13B"),
        make_cluster(num_nodes=2),
        Training(global_batch=32, seq_len=4096, recompute="selective"),
    )
    assert pick_layout(res, "fastest") == res.ranked[0].layout
    assert pick_layout(res, "#3") == res.ranked[2].layout
    assert pick_layout(res, "#9999") == res.ranked[-1].layout  # clamped to the slowest
    assert pick_layout(res, "boring") == res.boring.layout
    nothing = search(preset("Llama-3.1 405B"), make_cluster(num_nodes=1), Training(global_batch=8))
    assert pick_layout(nothing, "fastest") is None and pick_layout(nothing, "boring") is None
