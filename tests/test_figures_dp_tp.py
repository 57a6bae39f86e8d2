"""Figure builders for the data- and tensor-parallel pages: valid Plotly, titles, data from core."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from core.data_parallel import (
    DpJob,
    cluster_for,
    dp_step,
    equal_shards,
    make_problem,
    prove_data_parallel,
    scaling_curve,
    scenario_cluster,
    sgd_curves,
    slower_at_scale,
    straggler_curve,
)
from core.hardware import gpu, make_cluster
from core.model import preset
from core.tensor_parallel import (
    attention_ownership,
    link_comparison,
    mlp_ownership,
    prove_sequence_parallel_mlp,
    prove_tp_attention,
    prove_tp_mlp,
    tp_sweep,
)
from figures import data_parallel as fdp
from figures import tensor_parallel as ftp


def _valid(spec: dict) -> go.Figure:
    """Plotly validates every property: a typo in a key or a bad value raises here."""
    return go.Figure(spec)


def _title(spec: dict) -> str:
    return spec["layout"]["title"]["text"]


def test_gradient_proof_figure_equal_and_unequal():
    problem = make_problem(num_samples=64, seed=0)
    eq = prove_data_parallel(problem, equal_shards(64, 8))
    spec = fdp.gradient_proof_figure(eq)
    _valid(spec)
    assert _title(spec) == "Data parallel · N=8 · gradient proof"
    assert len(spec["data"]) == 3  # full, ring, ring − full
    assert np.allclose(spec["data"][0]["y"], np.round(eq.full_grad[:40], 12))
    assert np.max(np.abs(spec["data"][2]["y"])) < 1e-14
    uneq = prove_data_parallel(problem, (4, 12, 16, 32))
    spec = fdp.gradient_proof_figure(uneq)
    assert len(spec["data"]) == 5 and "weighted" in spec["data"][2]["name"]
    assert f"{uneq.ring_max_abs_diff:.1e}" in spec["layout"]["title"]["subtitle"]["text"]


def test_loss_curves_figure():
    problem = make_problem(num_samples=64, seed=0)
    curves = sgd_curves(problem, (4, 12, 16, 32), num_steps=10)
    spec = fdp.loss_curves_figure(curves, (4, 12, 16, 32))
    _valid(spec)
    assert _title(spec) == "SGD · N=4 · loss curves"
    assert [len(t["y"]) for t in spec["data"]] == [11] * 5
    assert spec["data"][1]["y"] == curves.ring_average_loss.tolist()
    # The lower panel (yaxis2) plots each average minus the full batch, so the unequal-shard error
    # is a curve leaving zero: the plain mean's gap is the loss error the page reports, the
    # weighted mean's is rounding.
    diffs = {t["name"]: np.array(t["y"]) for t in spec["data"] if t.get("yaxis") == "y2"}
    plain = curves.ring_average_loss - curves.full_batch_loss
    weighted = curves.weighted_loss - curves.full_batch_loss
    assert np.allclose(diffs["plain average of 4 shard means − full batch"], plain, atol=1e-15)
    assert np.allclose(diffs["average weighted by shard size − full batch"], weighted, atol=1e-15)
    assert np.abs(plain).max() == pytest.approx(curves.max_abs_loss_diff_ring)
    assert np.abs(plain).max() > 1e-3 and np.abs(weighted).max() < 1e-12


def test_straggler_figure_has_closed_form_and_points():
    c = straggler_curve(rank_counts=(1, 8, 64), num_trials=50, seed=1)
    spec = fdp.straggler_figure(c)
    _valid(spec)
    assert _title(spec) == "Stragglers · μ=100 ms · σ=5 ms"
    assert spec["data"][0]["y"][1] == pytest.approx(107.118, abs=1e-3)  # 100 + 5 x 1.42360
    assert spec["data"][1]["mode"] == "markers" and len(spec["data"][1]["y"]) == 3


def test_step_time_and_efficiency_figures():
    job = DpJob(num_params=1.3e9, tokens_per_gpu=2048, bucket_bytes=None)
    c = scaling_curve(job, scenario_cluster(), (8, 64, 512))
    spec = fdp.step_time_figure(c)
    _valid(spec)
    assert _title(spec) == "Data parallel · N=512 · weak scaling"
    assert spec["data"][0]["x"] == ["8", "64", "512"]
    assert spec["data"][1]["y"][1] == pytest.approx(c.steps[1].exposed_comm_s * 1e3, abs=1e-4)
    eff = fdp.efficiency_figure({"flat ring": c})
    _valid(eff)
    assert eff["data"][0]["y"] == c.column("efficiency").tolist()


def test_bucket_timeline_splits_hidden_and_exposed():
    job = DpJob(num_params=1.3e9, tokens_per_gpu=16384, all_reduce="hierarchical")
    step = dp_step(job, cluster_for(scenario_cluster(), 64))
    spec = fdp.bucket_timeline_figure(step)
    _valid(spec)
    assert _title(spec) == f"Bucket timeline · N=64 · {len(step.bucket_bytes)} buckets"
    hidden, exposed = spec["data"][2], spec["data"][3]
    # after backward every bucket is ready, so the stream never idles: exposed bars sum to the
    # exposure
    assert sum(exposed["x"]) == pytest.approx(step.exposed_comm_s * 1e3, abs=1e-3)  # to_ms: µs
    assert sum(hidden["x"]) + sum(exposed["x"]) <= step.comm_s * 1e3 + 1e-6
    assert spec["layout"]["shapes"][0]["x0"] == pytest.approx(step.compute_s * 1e3)
    many = dp_step(
        DpJob(num_params=140e9, tokens_per_gpu=2048), cluster_for(make_cluster(num_nodes=1), 8)
    )
    assert len(many.bucket_bytes) > 10_000
    spec = fdp.bucket_timeline_figure(many, max_bars=100)
    assert sum(len(t["x"]) for t in spec["data"][2:]) <= 2 * 100 + 2


def test_scenario_figure_rows_and_title():
    s = slower_at_scale()
    spec = fdp.scenario_figure(s)
    _valid(spec)
    # NCCL ring/Simple by hand (bf16 gradients, 2.6 GB): compute 128 ms + 8.4 µs + 14 NVLink hops
    # of 3.4 µs + 4.55 GB at 300 × 0.77 GB/s = 147.8 ms; at 64 GPUs ×1.4 of (8.4 + 112·3.4 +
    # 14·14) µs + 5.12 GB at 12.5 × 0.94 GB/s = 564.5 ms
    assert _title(spec).startswith(
        "Scaled 8 → 64 GPUs on a thin network · step 147.8 ms → 564.5 ms"
    )
    assert len(spec["data"][0]["y"]) == 2 + len(s.fixes) + 2  # + the DGX-class runs
    assert "DGX-class" in spec["data"][0]["y"][-1]
    assert "19.7× less bandwidth" in spec["layout"]["title"]["subtitle"]["text"]  # 231 / 11.75


def test_ownership_heatmaps():
    own = mlp_ownership(tp=4, tokens=8, hidden=8, ffn=32)
    spec = ftp.ownership_figure(own, tp=4)
    _valid(spec)
    assert _title(spec) == "Tensor parallel · TP=4 · who holds what (MLP)"
    heat = [t for t in spec["data"] if t["type"] == "heatmap"]
    assert len(heat) == 5
    assert np.array_equal(np.array(heat[1]["z"]), own["W1 (split by columns)"] + 1)
    legend = [t["name"] for t in spec["data"] if t["type"] == "scatter"]
    assert legend == ["all GPUs (replicated)", "GPU 0", "GPU 1", "GPU 2", "GPU 3"]
    _valid(ftp.ownership_figure(attention_ownership(tp=2), tp=2, what="attention"))


def test_tp_proof_sweep_figure():
    proofs = {
        t: [prove_tp_mlp(tp=t), prove_tp_attention(tp=t), prove_sequence_parallel_mlp(tp=t)]
        for t in (1, 2, 4)
    }
    spec = ftp.proof_sweep_figure(proofs, skipped=(3,))
    _valid(spec)
    names = [t["name"] for t in spec["data"]]
    assert names[:2] == ["mlp · forward (Y)", "mlp · backward (worst gradient)"]
    assert len(names) == 3 * 2 + 1 and names[-1].startswith("float64 machine epsilon 2.2e-16")
    assert spec["data"][0]["x"] == ["TP=1", "TP=2", "TP=4"]
    # TP=1 is the unsharded layer itself: its forward output is bit-identical, drawn at the floor;
    # every other point is float64 rounding, a few ulps of O(1) values (well under 1e-12)
    assert spec["data"][0]["y"][0] == ftp.FLOOR
    assert all(ftp.FLOOR <= v < 1e-12 for t in spec["data"][:-1] for v in t["y"])
    assert (
        max(v for t in spec["data"][:-1] for v in t["y"]) > ftp.FLOOR
    )  # not all drawn at the floor
    assert "TP=3 split no whole heads" in spec["layout"]["title"]["subtitle"]["text"]
    with pytest.raises(ValueError, match="no proofs"):
        ftp.proof_sweep_figure({})


def test_comm_vs_compute_and_sweep_figures():
    m = preset("Llama-2 7B")
    times = link_comparison(m, gpu("H100 SXM"), tp=8, micro_batch=1, seq_len=4096)
    spec = ftp.comm_vs_compute_figure(times, tp=8)
    _valid(spec)
    assert _title(spec) == "Tensor parallel · TP=8 · comm vs compute per layer"
    assert spec["data"][0]["x"] == ["NVLink 4", "PCIe 5 x16", "InfiniBand NDR"]
    pts = tp_sweep(m, make_cluster(num_nodes=4), micro_batch=1, seq_len=4096)
    spec = ftp.tp_sweep_figure(pts, gpus_per_node=8)
    _valid(spec)
    assert _title(spec) == "TP sweep · 8 GPUs per node"
    assert spec["layout"]["shapes"][0]["x0"] == 3.5  # between TP=8 (index 3) and TP=16
    assert "TP=8 → TP=16" in spec["layout"]["title"]["subtitle"]["text"]
    bad = ftp.tp_sweep_figure(
        tp_sweep(preset("Llama-3.1 70B"), make_cluster(num_nodes=4), micro_batch=1, seq_len=4096),
        gpus_per_node=8,
    )
    _valid(bad)
    assert [a["text"] for a in bad["layout"]["annotations"]].count("invalid") == 2
    assert bad["data"][0]["y"][4] is None
