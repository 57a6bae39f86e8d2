"""The context- and expert-parallel figures: valid Plotly, colours by meaning, and the drawn values
equal the simulated ones."""

import plotly.graph_objects as go
import pytest

from figures.context_parallel import CpRun, long_context, toy
from figures.expert_parallel import balancing, layer, model_memory, placement
from figures.style import COLOURS, CP_SCHEME_COLOURS, RANK_COLOURS


@pytest.fixture(scope="module")
def cp_figs():
    t = toy(4, "zigzag", True)
    r = long_context(
        CpRun(
            degree=8,
            layout="zigzag",
            causal=True,
            model="Llama-3.1 70B",
            gpu="H100 SXM",
            seq_len=131072,
            tp=8,
            pp=4,
            units="binary",
        )
    )
    return t, r


def test_every_figure_is_valid_plotly(cp_figs):
    t, r = cp_figs
    lay = layer(512, 16, 2, 4, 1.0, 0.5)
    figs = [
        t["grid"],
        t["gantt"],
        r["traffic_fig"],
        r["overlap_fig"],
        r["memory_fig"],
        lay["matrix"],
        lay["load"],
        balancing(16, 2)["fig"],
        placement(4)["fig"],
        model_memory("Mixtral 8x7B", 8, 2, 8, "binary", "H100 SXM")["fig"],
    ]
    for f in figs:
        go.Figure(f)  # raises on an invalid property
        assert f["layout"]["title"]["text"]


def test_zigzag_gantt_draws_equal_steps_in_source_colours(cp_figs):
    t, _ = cp_figs
    bars = [d for d in t["gantt"]["data"] if d["xaxis"] == "x2"]  # the zig-zag panel
    # C = 4, m = 6: step 0 = 6² + 6·7 = 78 pairs = 1 unit; later steps 2·36 = 72 pairs
    widths = sorted({round(w, 9) for b in bars for w in b["x"]})
    assert widths == [round(72 / 78, 9), 1.0]
    for b in bars:
        src = int(b["name"].split()[-1])
        assert b["marker"]["color"] == RANK_COLOURS[src]


def test_block_grid_marks_what_the_mask_hides(cp_figs):
    t, _ = cp_figs
    z = t["grid"]["data"][0]["z"]
    assert all(z[i][j] is None for i in range(8) for j in range(8) if j > i)
    assert [z[i][i] for i in range(8)] == [0, 1, 2, 3, 3, 2, 1, 0]  # zig-zag owners


def test_traffic_bars_keep_the_scheme_colours(cp_figs):
    _, r = cp_figs
    ring, uly = r["traffic_fig"]["data"]
    assert ring["marker"]["color"] == CP_SCHEME_COLOURS["ring"]
    assert uly["marker"]["color"] == CP_SCHEME_COLOURS["ulysses"]
    # 70B at TP 8: 1 K/V head per rank, so Ulysses is impossible at every CP ≥ 2 drawn
    assert ring["x"] == ["CP=2", "CP=4", "CP=8", "CP=16", "CP=32"]
    assert uly["y"] == [None] * 5


def test_expert_loads_drawn_equal_the_layer():
    lay = layer(512, 16, 2, 4, 1.0, 1.0)
    r = lay["result"]
    computed, dropped = lay["load"]["data"][:2]
    assert computed["y"] == r.processed.tolist()
    assert [a + b for a, b in zip(computed["y"], dropped["y"])] == r.routed.tolist()
    assert computed["marker"]["color"] == COLOURS["compute"]
    assert dropped["marker"]["color"] == COLOURS["dropped"]
    assert lay["matrix"]["data"][0]["z"] == r.traffic_rows.tolist()
