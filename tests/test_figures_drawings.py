"""The concept drawings (DP shards, TP MLP, pipeline flow), checked from the figure data against
values worked out here independently: counts by hand, numpy means, a brute-force scan of the
simulator's op list."""

import re

import numpy as np
import pytest

from core import data_parallel as dp
from core.pipeline import simulate
from figures.data_parallel.drawing import dp_drawing, shard_colour
from figures.pipeline.drawing import pp_drawing
from figures.tensor_parallel.drawing import tp_drawing
from tests.registry import plain_arrays


def texts(fig: dict) -> list[str]:
    return [a["text"] for a in fig["layout"]["annotations"]]


@pytest.mark.parametrize("n, b, skewed", [(4, 12, False), (4, 12, True), (16, 32, False)])
def test_dp_drawing_cuts_the_batch_into_n_shards(n, b, skewed):
    total = n * b
    sizes = dp.skewed_shards(total, n) if skewed else dp.equal_shards(total, n)
    proof = dp.prove_data_parallel(dp.make_problem(num_samples=total), sizes)
    fig = plain_arrays(dp_drawing(proof))
    samples = fig["data"][0]
    colours = samples["marker"]["color"]
    assert len(colours) == total  # one square per sample
    # N shards, each its own colour, contiguous and as large as the shard
    runs = [len(list(g)) for _, g in __import__("itertools").groupby(colours)]
    assert len(runs) == n and tuple(runs) == tuple(sizes)
    assert [colours[sum(sizes[:r])] for r in range(n)] == [shard_colour(r) for r in range(n)]
    # N GPU boxes outlined in their shard's colour
    outlined = [s for s in fig["layout"]["shapes"] if s["line"]["width"] == 2]
    assert [s["line"]["color"] for s in outlined] == [shard_colour(r) for r in range(n)]
    # The update bars (the same on every GPU) are the sample-weighted mean of the per-GPU
    # gradients, drawn to the same scale as the full-batch markers.
    k = 6
    w = np.array(sizes, dtype=float) / total
    mean = (w[:, None] * proof.local_grads[:, :k]).sum(axis=0)
    bars = [t for t in fig["data"] if t["type"] == "bar"]  # the GPU row, then the update row
    assert [b["base"] for b in bars] == [3.35, 1.05]  # each bar stands on its box's middle line
    heights = np.concatenate([b["y"] for b in bars]).reshape(2 * n, k)
    local_h, update_h = heights[:n], heights[n:]  # the per-GPU row, then the update row
    scale = (
        local_h[0, np.argmax(np.abs(local_h[0]))]
        / proof.local_grads[0, np.argmax(np.abs(local_h[0]))]
    )
    assert np.allclose(local_h / scale, proof.local_grads[:, :k], atol=1e-9)
    assert np.allclose(update_h / scale, np.tile(mean, (n, 1)), atol=1e-9)
    assert bars[0]["marker"]["color"] == [shard_colour(r) for r in range(n) for _ in range(k)]
    marks = np.array(fig["data"][1]["y"]).reshape(n, k) - 1.05  # the update row's baseline
    assert np.allclose(marks / scale, np.tile(proof.full_grad[:k], (n, 1)), atol=1e-5)
    err = float(re.search(r"full batch\| = ([\d.e+-]+)", " ".join(texts(fig))).group(1))
    assert err < 1e-12  # float rounding: averaging is the full-batch gradient
    if skewed:  # the plain mean of unequal shards is visibly wrong, and the drawing says so
        assert "a plain mean of the 4 would be off by" in " ".join(texts(fig))


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_tp_drawing_shapes_match_the_megatron_split(tp):
    tokens, hidden, ffn = 24, 24, 96
    notes = texts(tp_drawing(tp=tp, tokens=tokens, hidden=hidden, ffn=ffn))
    # By hand: A is h × 4h split by columns, B is 4h × h split by rows, Y_i is tokens × 4h/tp.
    for r in range(tp):
        assert f"A<sub>{r}</sub><br>{hidden}×{ffn // tp}" in notes
        assert any(
            t.startswith(f"Y<sub>{r}</sub>") and t.endswith(f"{tokens}×{ffn // tp}") for t in notes
        )
        assert f"B<sub>{r}</sub><br>{ffn // tp}×{hidden}" in notes
        assert f"GPU {r}" in notes
    assert f"GPU {tp}" not in notes
    assert any(f"<br>{tokens}×{hidden}<br>on every GPU" in t and "X" in t for t in notes)
    assert any("forward: identity<br>backward: all-reduce" in t for t in notes)  # f
    assert any("forward: all-reduce<br>backward: identity" in t for t in notes)  # g


def _brute_force(ops: list, t: float, p: int) -> tuple[list, list]:
    """Running op and held micro-batches per rank at t, by scanning every op."""
    running, held = ["idle"] * p, []
    for r in range(p):
        mine = [o for o in ops if o.rank == r]
        for o in mine:
            if o.start_s <= t < o.end_s:
                running[r] = f"{o.kind}{o.microbatch}"
        fwd = [(o.microbatch, o.chunk) for o in mine if o.kind == "F" and o.end_s <= t]
        back = {(o.microbatch, o.chunk) for o in mine if o.kind in "BI" and o.end_s <= t}
        held.append(sorted(m for m, c in fwd if (m, c) not in back))
    return running, held


@pytest.mark.parametrize(
    "sched, p, m, v",
    [("1f1b", 4, 8, 1), ("gpipe", 4, 8, 1), ("zb_h1", 3, 6, 1), ("interleaved_1f1b", 2, 4, 2)],
)
def test_pp_drawing_frames_follow_the_simulators_events(sched, p, m, v):
    result = simulate(sched, p, m, num_chunks=v)
    ops = list(result.ops)
    fig = plain_arrays(pp_drawing(result))
    times = sorted({o.start_s for o in ops} | {o.end_s for o in ops})
    assert [float(f["name"]) for f in fig["frames"]] == pytest.approx(times)
    for frame, t in zip(fig["frames"], times):
        boxes, dots, clock = frame["data"]
        running, held = _brute_force(ops, t, p)
        assert boxes["text"] == running, (sched, t)
        # one dot per held micro-batch, under its rank's box (rank r's dots sit around x = r)
        per_rank = [
            sorted(int(s) for x, s in zip(dots["x"], dots["text"]) if abs(x - r) < 0.5)
            for r in range(p)
        ]
        assert per_rank == held, (sched, t)
    last = fig["frames"][-1]["data"][2]["text"][0]
    assert f"{m} of {m} micro-batches done" in last
    peak = max(len(h) for t in times for h in _brute_force(ops, t, p)[1])
    if sched == "gpipe":
        assert peak == m  # GPipe holds every micro-batch before the first backward
    if sched == "1f1b":
        assert peak == p  # 1F1B: rank 0 holds P


def test_pp_drawing_refuses_a_pipeline_too_big_to_watch():
    # P = 32, M = 128 under 1F1B: hundreds of moments (every op start and end), on 32 GPUs.
    with pytest.raises(ValueError, match=r"P=32, M=128 .* at most 160 moments .* use P ≤ 8"):
        pp_drawing(simulate("1f1b", 32, 128))
    assert len(pp_drawing(simulate("1f1b", 8, 32))["frames"]) <= 160


@pytest.mark.parametrize("which", ["dp", "tp"])
def test_drawing_text_grows_with_presenter_mode(which):
    """Issue 15 §2: a drawing's words are read from the back of a hall. Every label inherits the
    figure's font size (12 px on a laptop), so presenter mode's 20 px reaches each of them; an
    emphasised label is a percentage of it, never a fixed px size."""
    from figures.theme import presenter

    if which == "dp":
        proof = dp.prove_data_parallel(dp.make_problem(num_samples=48), dp.equal_shards(48, 4))
        fig = dp_drawing(proof)
    else:
        fig = tp_drawing(tp=2, tokens=24, hidden=24, ffn=96)
    labels = [a for a in fig["layout"]["annotations"] if a["text"]]
    assert labels and all("size" not in a.get("font", {}) for a in labels)
    assert fig["layout"]["font"]["size"] == 12
    shown = presenter(fig)
    assert shown["layout"]["font"]["size"] == 20
    assert all("size" not in a.get("font", {}) for a in shown["layout"]["annotations"])
    sizes = re.findall(r"font-size:(\d+)%", " ".join(a["text"] for a in labels))
    assert all(int(s) >= 100 for s in sizes)
