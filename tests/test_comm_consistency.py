"""Issue 13, communication items: the same configuration through every page and core path that
shows it gives the same bytes and seconds, with the traffic dtype and what is compared stated.
Expected values are derived by hand here (NVIDIA/nccl src/graph/tuning.cc constants, b·s·h·2 B
messages, the app's one Efficiency), not copied from the code under test."""

from pathlib import Path

import pytest

from core import data_parallel as dp
from core import scenarios as cs
from core import tensor_parallel as tc
from core.hardware import gpu, make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner import Training, evaluate
from core.training import get_recipe
from figures.scenarios import placement_text, scale_out_text, sharding_text
from figures.scenarios.sentence import sentence_text

ROOT = Path(__file__).resolve().parents[1]


# ---------- item 9: one TP time, one set of efficiencies ----------
def test_tp_page_and_planner_give_one_layers_tp_time():
    model = preset("GPT-3 175B")
    c = make_cluster(num_nodes=8, gpus_per_node=8)
    tr = Training(global_batch=64, seq_len=2048, recompute="none")
    ev = evaluate(model, c, Layout(dp=1, tp=8, pp=8), tr)
    per_layer_planner = ev.breakdown.tp_s / (64 * 96 // 8)  # micro-batches × layers per stage
    page = {
        t.link.name: t
        for t in tc.link_comparison(model, gpu("H100 SXM"), tp=8, micro_batch=1, seq_len=2048)
    }
    assert page["NVLink 4"].comm_s == pytest.approx(per_layer_planner, rel=1e-9)
    # by hand: M = 2048 × 12288 × 2 B; NCCL ring/Simple 8.4 + 14 × 3.4 µs + 1.75 M at 450 × 0.77
    m = 2048 * 12288 * 2
    assert per_layer_planner == pytest.approx(4 * (56e-6 + 1.75 * m / (450e9 * 0.77)), rel=1e-9)
    assert page["NVLink 4"].efficiency == 0.77  # shown on the page (hover, how-computed)


# ---------- item 8: one traffic dtype, stated ----------
def test_dp_page_and_planner_all_reduce_the_same_gradient_bytes_in_the_same_time():
    model = preset("Llama-2 7B")
    c = make_cluster(num_nodes=8, gpus_per_node=8)
    tr = Training(global_batch=64, seq_len=2048, overlap_dp=False)
    ev = evaluate(model, c, Layout(dp=64), tr)
    job = dp.DpJob(
        num_params=model.num_params, tokens_per_gpu=2048, bucket_bytes=None, all_reduce="NCCL"
    )
    assert job.grad_bytes_per_param == get_recipe("mixed_adam").grad_bytes == 2  # bf16
    step = dp.dp_step(job, dp.cluster_for(make_cluster(num_nodes=1), 64))
    assert step.comm_s == pytest.approx(ev.breakdown.dp_s, rel=1e-9)
    # by hand: ring/Simple over 8 nodes, 2.6.. GB bf16 gradients at min(NVLink, 8 NICs) × efficiency
    n = model.num_params * 2
    ring = (8.4 + 112 * 3.4 + 14 * 14) * 1.4e-6 + 126 / 64 * n / (450e9 * 0.77)
    assert step.comm_s == pytest.approx(ring, rel=1e-9)


def test_every_dp_message_states_its_dtype():
    s = cs.scale_out()
    assert "2-byte (bf16) gradients" in scale_out_text(s, "decimal", "decimal").intro
    fsdp = sharding_text(cs.ddp_vs_fsdp(), "decimal")
    per_step = next(x for x in fsdp.steps if x.startswith("**Per step**"))
    assert "both in bf16" in per_step
    # on one dtype basis FULL_SHARD sends reduce-scatter + 2 all-gathers = 3Ψ against DDP's 2Ψ
    assert "(1.5×)" in per_step


# ---------- item 9: TP bytes against a pipeline hop, like with like ----------
def test_tp_vs_pipeline_bytes_are_compared_per_gpu_per_microbatch_both_ways():
    p = cs.placement()
    # GPT-3 175B, TP 8 × PP 8, full recompute: 12 layers per stage × 6 all-reduces × 2·7/8 of
    # b·s·h·2, against an interior stage's activation out + gradient back, 2 × b·s·h·2: 63×
    w = placement_text(p, "decimal")
    assert "63× less than its TP traffic" in " ".join(w.steps)
    assert "forward + backward" in w.takeaway and "126" not in w.takeaway
    s = sentence_text(cs.sentence(), "decimal")
    # Llama-2 70B, TP 8 × PP 2: 40 layers × 4 × 1.75 / 2 = 140×
    assert s.answer == pytest.approx(40 * 4 * 1.75 / 2)


# ---------- item 11: wording ----------
def test_tp_collectives_are_per_layer_per_microbatch_six_with_recompute():
    m = preset("Llama-2 7B")
    assert tc.tp_comm_plan(m, tp=2, micro_batch=1, seq_len=4096).collectives_per_layer == 4
    full = tc.tp_comm_plan(m, tp=2, micro_batch=1, seq_len=4096, full_recompute=True)
    assert full.collectives_per_layer == 6
    from figures.tensor_parallel import text

    assert "per layer per micro-batch (6 with full recompute)" in text.TAKEAWAY
    assert "per step" not in text.TAKEAWAY
    labels = [x["label"] for x in text.comm_metrics(full, False, "binary")]
    assert "Collectives per layer per micro-batch" in labels


def test_planner_calibration_is_labelled_a_fit():
    doc = (ROOT / "docs" / "calibration.md").read_text()
    assert doc.startswith("# Planner calibration: a fit to Megatron-LM weak scaling")
    assert "**This table is a fit, not a prediction**" in doc
    assert "| Model (fit) |" in doc and "Predicted" not in doc
    from figures.planner import calibration_rows
    from figures.planner.text import CALIBRATION

    assert "**fit**, not a prediction" in CALIBRATION
    assert "model (fit)" in calibration_rows()[0]
