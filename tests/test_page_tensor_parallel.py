"""AppTest for the tensor-parallel page: the proof's displayed differences, deep links, broken
rules.

Expected numbers are worked by hand: bytes per all-reduce b·s·h·2, ring bytes 2(t−1)/t per
all-reduce, the α-β ring time with the NVLink 4 preset (450 GB/s, 3.4 µs), a layer's forward FLOPs
2·(2hq + 2h·kv + 3hf) + 4·q·s per token (Narayanan et al. 2021, Sec. 5.1).
"""

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.common import SETTINGS_KEY, Settings
from core.units import ByteSystem
from tests.charts import charts
from tests.registry import ROOT, assert_self_check, run_page_file

MIB = 2**20


def run(**params: str) -> AppTest:
    return run_page_file(str(ROOT / "app_pages" / "tensor_parallel.py"), **params)


def metric(at: AppTest, prefix: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(prefix))


def specs(at: AppTest) -> dict[str, dict]:
    return {json.loads(c.spec)["layout"]["title"]["text"]: json.loads(c.spec) for c in charts(at)}


def table(at: AppTest) -> list[dict]:
    """Rows of the communication table (st.table of records)."""
    df = at.table[0].value
    return df.to_dict("records")


@pytest.mark.parametrize("tp", [1, 2, 3, 4, 6, 8])
def test_sharded_layer_equals_unsharded_at_every_valid_tp(tp):
    at = run(tp=str(tp))
    assert not at.error, [e.value for e in at.error]
    assert float(metric(at, "Forward")) < 1e-10
    assert float(metric(at, "Backward")) < 1e-10
    assert metric(at, "Share of each weight") == f"1/{tp}"
    proof = specs(at)["Tensor parallel · sharded = unsharded at every TP degree"]
    assert proof["data"][0]["x"] == [
        "TP=1",
        "TP=2",
        "TP=3",
        "TP=4",
        "TP=6",
        "TP=8",
    ]  # divisors of 24 heads
    own = specs(at)[f"Tensor parallel · TP={tp} · who holds what (MLP above, attention below)"]
    legend = [t["name"] for t in own["data"] if t["type"] == "scatter"]
    assert legend == ["all GPUs (replicated)"] + [f"GPU {r}" for r in range(tp)]


def test_tp_that_does_not_divide_the_heads_names_the_rule_and_keeps_the_sweep():
    at = run(tp="5")
    errors = [e.value for e in at.error]
    assert any("TP=5 does not divide 24 heads" in e for e in errors)  # the toy layer
    assert any("TP=5 does not divide 96 attention heads" in e for e in errors)  # GPT-3 175B
    assert all("use TP in" in e for e in errors)
    assert "TP sweep · 8 GPUs per node · DGX-class: 8× InfiniBand NDR per node" in specs(at)


def test_model_rule_with_a_valid_toy():
    at = run(tp="8", model="GPT-2 small")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "TP=8 does not divide 12 attention heads" in errors[0]
    assert float(metric(at, "Forward")) < 1e-10  # the toy layer still splits 8 ways


def test_deep_link_llama2_7b_tp8_bytes_and_times_by_hand():
    at = run(tp="8", model="Llama-2 7B", seq="4096", mb="1")
    m = 1 * 4096 * 4096 * 2  # b·s·h·2 = 33,554,432 B = 33.6 MB (32 MiB)
    assert metric(at, "Collectives per layer per micro-batch") == "4"
    assert metric(at, "Bytes per all-reduce") == "33.6 MB"  # label: b·s·h · 2 B bf16
    per_layer = 4 * 2 * 7 / 8 * m  # 235 MB
    assert metric(at, "Sent per GPU per layer") == f"{per_layer / 1e6:.3g} MB"
    assert metric(at, "Per micro-batch (32 layers)") == f"{32 * per_layer / 1e9:.3g} GB"
    rows = table(at)
    assert [r["mode"] for r in rows] == ["plain TP", "sequence parallel"]
    assert rows[1]["forward, per layer"] == "2 all-gather + 2 reduce-scatter"
    assert rows[0]["sent per GPU per layer"] == rows[1]["sent per GPU per layer"]  # same bytes
    assert rows[1]["layer input held per GPU"] == "4.19 MB"  # 33.6 MB / 8
    # NVLink 4 as NCCL runs it (NVIDIA/nccl src/graph/tuning.cc): ring/LL128, 14 + 14 × 1.9 µs
    # + 1.75 M at 450 GB/s × 0.77 (the planner's efficiency) × 0.92 (LL128), 4 per layer per
    # micro-batch.
    nvlink_ms = 4 * (40.6e-6 + 1.75 * m / (450e9 * 0.77 * 0.92)) * 1e3
    # Layer FLOPs per token: 2·(2·4096² + 2·4096² + 3·4096·11008) + 4·4096·4096; × s × 3 / t at 50%
    # MFU.
    flops = 2 * (4 * 4096**2 + 3 * 4096 * 11008) + 4 * 4096 * 4096
    compute_ms = flops * 4096 * 3 / 8 / (989.4e12 * 0.5) * 1e3
    links = specs(at)["Tensor parallel · TP=8 · comm vs compute per layer"]
    comm, comp = links["data"]
    assert comm["x"][0] == "NVLink 4"
    assert comm["y"][0] == pytest.approx(nvlink_ms, rel=1e-4)
    assert comp["y"][0] == pytest.approx(compute_ms, rel=1e-4)
    note = next(md.value for md in at.markdown if md.value.startswith("With 8 GPUs per node"))
    assert f"at most {nvlink_ms / compute_ms:.0%} of the layer's compute (TP=8)" in note


def test_sequence_parallel_toggle_swaps_the_collectives():
    at = run(sp="true")
    assert (
        metric(at, "Collectives per layer per micro-batch") == "8"
    )  # 4 all-gather + 4 reduce-scatter
    assert (
        "Tensor parallel · TP=2 · who holds what (MLP above, attention below, sequence parallel)"
        in specs(at)
    )


def test_sweep_shows_a_dgx_class_and_a_thin_network_one_nic_count_each():
    at = run()
    sp = specs(at)
    dgx = sp["TP sweep · 8 GPUs per node · DGX-class: 8× InfiniBand NDR per node"]
    thin = sp["TP sweep · 8 GPUs per node · thin network: 1× InfiniBand NDR per node"]
    assert dgx["data"][0]["customdata"][4].startswith("8× InfiniBand NDR per node (2 nodes)")
    assert thin["data"][0]["customdata"][4].startswith("1× InfiniBand NDR per node (2 nodes)")
    notes = [md.value for md in at.markdown if md.value.startswith("With 8 GPUs per node")]
    assert len(notes) == 2 and "DGX-class, one NIC per GPU" in notes[0]
    assert "thin network" in notes[1]
    lessons = next(md.value for md in at.markdown if "What keeps TP inside a node" in md.value)
    assert "4 per layer per micro-batch, 6 with full recompute" in lessons
    assert "DP gradient all-reduce" in lessons


@pytest.mark.parametrize("key, right, wrong", [("q1", 33.554432, 64), ("q2", 4, 2)])
def test_self_checks(key, right, wrong):
    # q1: 1 · 4096 · 4096 elements × 2 bytes = 33,554,432 B = 33.55 MB. q2: 2 forward + 2 backward
    # per micro-batch.
    assert_self_check(run(), key, right, wrong)


def test_units_switch_to_decimal():
    at = AppTest.from_file(str(ROOT / "app_pages" / "tensor_parallel.py"), default_timeout=60)
    at.session_state[SETTINGS_KEY] = Settings(memory_units=ByteSystem.DECIMAL)
    at.run()
    assert (
        metric(at, "Bytes per all-reduce") == f"{2048 * 12288 * 2 / 1e6:.3g} MB"
    )  # GPT-3: 50.3 MB
    assert re.search(r"\(MB\)$", at.number_input(key="q1").label)


def test_sequence_parallel_needs_tp_to_divide_the_sequence():
    at = run(tp="3", sp="true", seq="2048")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "TP=3 does not divide 2048 tokens of seq_len" in errors[0]
    assert float(metric(at, "Forward")) < 1e-10  # the toy proof (24 tokens) still runs
    assert "TP sweep · 8 GPUs per node · DGX-class: 8× InfiniBand NDR per node" in specs(at)
    at = run(tp="3", seq="2304")  # 2304 = 3 × 768: no rule broken
    assert len(table(at)) == 2 and not at.error


# --- the core and figure helpers this page added -------------------------------------------------


def test_plans_by_mode_leaves_out_an_invalid_comparison_but_raises_for_the_chosen_one():
    from core.model import preset
    from core.tensor_parallel import plans_by_mode

    gpt3 = preset("GPT-3 175B")
    assert list(plans_by_mode(gpt3, tp=2, micro_batch=1, seq_len=2048, sequence_parallel=True)) == [
        False,
        True,
    ]
    only = plans_by_mode(gpt3, tp=3, micro_batch=1, seq_len=2048, sequence_parallel=False)
    assert list(only) == [False] and only[False].message_bytes == 2048 * 12288 * 2
    with pytest.raises(ValueError, match="TP=3 does not divide 2048 tokens of seq_len"):
        plans_by_mode(gpt3, tp=3, micro_batch=1, seq_len=2048, sequence_parallel=True)


def test_proof_forward_and_backward_maxima():
    from core.tensor_parallel import TpProof

    p = TpProof(layer="mlp", tp=2, max_abs_diff={"Y": 1e-16, "dX": 3e-16, "dW1": 0.0})
    assert p.forward_max_abs_diff == 1e-16 and p.backward_max_abs_diff == 3e-16


def test_node_boundary_note_in_numbers():
    from core.tensor_parallel import TpPoint
    from figures.tensor_parallel import node_boundary_note

    pts = (
        TpPoint(
            tp=1,
            valid=True,
            reason="",
            crosses_node=False,
            link_label="NVLink 4",
            comm_s=0.0,
            compute_s=4.0,
        ),
        TpPoint(
            tp=8,
            valid=True,
            reason="",
            crosses_node=False,
            link_label="NVLink 4",
            comm_s=0.1,
            compute_s=0.5,
        ),
        TpPoint(
            tp=16,
            valid=True,
            reason="",
            crosses_node=True,
            link_label="8× NIC",
            comm_s=0.3,
            compute_s=0.25,
        ),
        TpPoint(
            tp=32,
            valid=False,
            reason="r",
            crosses_node=True,
            link_label="",
            comm_s=float("nan"),
            compute_s=float("nan"),
        ),
    )
    note = node_boundary_note(pts, 8)
    assert "at most 20% of the layer's compute (TP=8)" in note
    assert "TP=16 rides 8× NIC: communication 120% of compute" in note
    assert "invalid: TP=32" in note


# Issue 18: the TP degree and the layer settings feed sections 1-3, one st.fragment; the sweep
# (section 4) reruns only when a setting it reads changes. Driven against a real server
# (tests/fragments.py), counting calls of app_pages/common/tp_data.py's builders.
PAGE, DATA = "app_pages.common:start_page", "app_pages.common.tp_data"


@pytest.fixture(scope="module")
def spied():
    from tests.fragments import spied_app

    targets = [PAGE] + [f"{DATA}:{f}" for f in ("proof", "comm", "sweep", "proof_sweep")]
    with spied_app(*targets) as app:
        yield app


def test_tp_degree_reruns_only_sections_1_to_3(spied):
    tab = spied.open("tensor_parallel")
    assert tab.widgets["tp"][1], "the TP slider should sit inside a fragment"
    with spied.counting() as calls:
        tab.move("tp", 4)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE] == 0 and calls[f"{DATA}:sweep"] == 0 and calls[f"{DATA}:proof_sweep"] == 0
    assert calls[f"{DATA}:proof"] == 1 and calls[f"{DATA}:comm"] == 1
    assert tab.charts == ["tp_draw", "own", "links"]  # not the sweeps nor the rounding chart
    assert "tp" in tab.url_bound


def test_a_setting_the_sweep_reads_reruns_the_sweep_too_not_the_page(spied):
    tab = spied.open("tensor_parallel")
    with spied.counting() as calls:
        tab.move("mb", 2)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE] == 0 and calls[f"{DATA}:sweep"] == 1 and calls[f"{DATA}:proof_sweep"] == 0
    # the charts b changes are re-sent; an unchanged one (e.g. the toy's ownership map) may be
    # served from the browser's message cache; the rounding chart is outside both fragments
    assert {"links", "sweep8", "sweep1"} <= set(tab.charts) and "proof" not in tab.charts
    assert "mb" in tab.url_bound
