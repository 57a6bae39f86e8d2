"""A-vs-B figure, table and verdict: heatmap cells, ratios and the crossover size worked by hand."""

import plotly.graph_objects as go
import pytest

from core.collectives import example_inputs, run_algorithm
from figures.collectives.compare import timing_note, versus_figure, versus_table, versus_takeaway

GIB = 2**30
B, ALPHA = 450e9, 3.4e-6  # NVLink 4


def run(name, size=GIB, n=8, alpha=ALPHA):
    return run_algorithm(
        name, example_inputs(n, 8), message_bytes=size, bandwidth_bytes_per_s=B, latency_s=alpha
    )


def test_heatmaps_show_each_gpus_sends_per_step_on_one_colour_scale():
    fig = versus_figure(run("ring"), run("tree"), byte_system="binary")
    ring, tree = fig["data"]
    assert ring["xaxis"] == "x" and tree["xaxis"] == "x2" and tree["yaxis"] == "y2"
    assert ring["coloraxis"] == tree["coloraxis"] == "coloraxis"
    # Tree sends a whole 1 GiB per message, so the shared unit is GiB; a ring message is S/8.
    assert "GiB" in fig["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    assert fig["layout"]["coloraxis"]["cmax"] == pytest.approx(1.0)
    assert ring["z"] == [[0.125] * 14 for _ in range(8)]
    # Binomial tree on 8 GPUs, by hand: reduce at distance 1, 2, 4 (senders r with lowest bit =
    # mask),
    # then broadcast at distance 4, 2, 1 (senders: multiples of 2·mask).
    senders = [{1, 3, 5, 7}, {2, 6}, {4}, {0}, {0, 4}, {0, 2, 4, 6}]
    assert tree["z"] == [[1.0 if r in s else 0.0 for s in senders] for r in range(8)]
    assert tree["x"] == [1, 2, 3, 4, 5, 6] and tree["y"] == list(range(8))
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert (
        "A · Ring" in titles[0]
        and "14 steps" in titles[0]
        and "busiest GPU sends 1.75 GiB" in titles[0]
    )
    assert (
        "B · Binomial tree" in titles[1]
        and "6 steps" in titles[1]
        and "busiest GPU sends 3 GiB" in titles[1]
    )
    go.Figure(fig)


def test_a_side_that_broke_a_rule_is_drawn_empty_with_a_pointer_to_the_error():
    fig = versus_figure(run("ring"), None)
    assert "not run" in fig["layout"]["annotations"][1]["text"]
    assert fig["data"][1]["z"] == [[None]]
    go.Figure(fig)


def test_table_compares_steps_time_and_bytes_with_b_over_a():
    table = versus_table(run("ring"), run("tree"), byte_system="binary")
    rows = {
        m: (a, b, r)
        for m, a, b, r in zip(
            table["measure"], table["A · Ring"], table["B · Binomial tree"], table["B / A"]
        )
    }
    assert rows["steps"] == ("14", "6", f"{6 / 14:.3g}×")
    # Busiest GPU: ring 2·S·7/8 = 1.75 GiB, tree root 3·S = 3 GiB; ratio 3 / 1.75.
    assert rows["busiest GPU sends"] == ("1.75 GiB", "3 GiB", f"{3 / 1.75:.3g}×")
    assert rows["least busy GPU sends"][:2] == ("1.75 GiB", "1 GiB")
    t_ring, t_tree = 14 * ALPHA + 1.75 * GIB / B, 6 * ALPHA + 6 * GIB / B
    assert rows["time"][2] == f"{t_tree / t_ring:.3g}×"
    assert rows["max |output − true sum|"] == ("0", "0", "—")


def test_takeaway_names_the_winner_the_regime_and_the_crossover():
    # Break-even: Δ latency = 8 steps × 3.4 µs; Δ bytes = (6 − 1.75)·S/B, so S* = 27.2 µs × B / 4.25
    # = 2.88 MB = 2.75 MiB, whichever S it is computed from.
    big = versus_takeaway(run("ring"), run("tree"), byte_system="binary")
    assert big.startswith("**Ring** is") and "faster than **Binomial tree**" in big
    assert (
        "Bandwidth-bound" in big and "Below S ≈ 2.75 MiB per GPU, Binomial tree would win." in big
    )
    small = versus_takeaway(run("ring", 64e3), run("tree", 64e3), byte_system="binary")
    assert small.startswith("**Binomial tree** is") and "Latency-bound" in small
    assert "Above S ≈ 2.75 MiB per GPU, Ring would win." in small
    no_alpha = versus_takeaway(run("tree", alpha=0), run("ring", alpha=0))
    assert no_alpha.startswith("**Ring** is") and "wins on both terms" in no_alpha
    assert "same time" in versus_takeaway(run("ring"), run("ring"))


def test_timing_note_says_which_link_times_the_hierarchical_steps():
    assert "8 GPUs per node" in timing_note("NVLink 4", None)
    two_tier = timing_note(
        "NVLink 4", {"gpus_per_node": 4, "nics_per_node": 2, "inter_link_name": "InfiniBand NDR"}
    )
    assert "4 GPUs per node" in two_tier and "2 × InfiniBand NDR" in two_tier


def test_equal_bytes_give_no_crossover_from_float_noise():
    # Ring and halving-doubling on 8 GPUs move the same 2·S·7/8 bytes per GPU; halving-doubling
    # needs
    # 6 α-steps instead of 14, so it wins at every size: no "above S ≈ <huge>" sentence.
    text = versus_takeaway(run("ring"), run("halving_doubling"), byte_system="binary")
    assert text.startswith("**Halving-doubling** is") and "no message size reverses that" in text
    assert "PiB" not in text and "would win" not in text
