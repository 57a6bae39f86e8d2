"""AppTest for the expert-parallel page: the dispatch proof, capacity drops, placement costs
worked by hand, MoE model counts, broken layout rules, the walk and the self-checks."""

import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_pages.common import SETTINGS_KEY, Settings
from core.expert_parallel import route, token_batch
from core.units import ByteSystem
from tests.registry import ROOT, assert_self_check, chart_specs, run_page_file


def run(**params: str) -> AppTest:
    """The page alone, with binary memory units (MiB, GiB) pinned: the hand values below are in
    binary units whatever the sidebar's default."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "expert_parallel.py"), default_timeout=60)
    at.session_state[SETTINGS_KEY] = Settings(memory_units=ByteSystem.BINARY)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, prefix: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(prefix))


def test_defaults_prove_the_dispatch():
    at = run()
    assert not at.error, [e.value for e in at.error]
    assert float(metric(at, "max |EP")) < 1e-12
    assert metric(at, "dropped pairs") == "0"  # dropless by default
    assert len(chart_specs(at)) == 5


def test_capacity_drops_the_overflow():
    # T = 1,024, top-2, E = 64, CF 1.0: capacity ⌈1024·2/64⌉ = 32 rows per expert; the routed
    # counts from the router alone, the overflow summed by hand
    at = run(cf="1.0", skew="0.5")
    _, logits = token_batch(1024, 64, skew=0.5, seed=0)
    idx, _ = route(logits, 2)
    routed = np.bincount(idx.ravel(), minlength=64)
    assert metric(at, "dropped pairs") == f"{int(np.maximum(routed - 32, 0).sum()):,}"


def test_placement_costs_by_hand():
    at = run()
    # 4,096 tokens × top-8 × 7,168 × 1 B = 234,881,024 B = 224 MiB per GPU
    assert metric(at, "dispatch buffer") == "224 MiB"
    # one node: 7/8 of it over NVLink 4 (450 GB/s) + 7 × 3.4 µs = 480.5 µs
    s = 234_881_024
    assert metric(at, "all-to-all, EP=8") == f"{(s * 7 / 8 / 450e9 + 7 * 3.4e-6) * 1e6:.0f} µs"
    # 8 nodes: 56/64 of it through one 50 GB/s NIC per GPU + 56 × 14 µs = 4.89 ms
    assert metric(at, "all-to-all, EP=64") == f"{(s * 56 / 64 / 50e9 + 56 * 14e-6) * 1e3:.3g} ms"


def test_deepseek_v3_counts():
    at = run(moe="DeepSeek-V3", mep="64", mdp="64", mpp="16")
    assert metric(at, "total parameters") == "671B"
    assert metric(at, "active per token") == "37.6B"


def test_ep_that_does_not_divide_the_experts_explains_the_rule():
    at = run(e="8", ep="16")
    assert any("EP=16 does not divide 8 experts" in e.value for e in at.error)
    assert len(chart_specs(at)) == 3  # the other sections still draw


def test_expert_layout_rule_for_the_model():
    at = run(moe="DeepSeek-V3", mep="64", mdp="8")
    assert any("EP × ETP = 64 does not divide TP × DP = 8" in e.value for e in at.error)


def test_ep_above_the_expert_count_names_the_divisors():
    at = run(mep="64")  # Mixtral has 8 experts
    assert any("EP=64 does not divide the 8 experts" in e.value for e in at.error)


def test_walk_sets_the_controls_and_says_the_numbers():
    at = run(walk="2")  # skew 1.0 and capacity factor 1.0: capacity ⌈1024·2/64⌉ = 32
    said = " ".join(i.value for i in at.info)
    assert "caps each expert at 32 rows" in said
    assert f"drops {metric(at, 'dropped pairs')} pairs" in said  # the sentence = the metric
    at = run(walk="4")
    assert any("Placement" in i.value and "481 µs" in i.value for i in at.info)


@pytest.mark.parametrize(
    "key, right, wrong",
    [
        ("q1", 12.88, 46.7),
        ("q2", 160, 128),
        ("q3", 8 * (1 - math.comb(224, 8) / math.comb(256, 8)), 4),
    ],
)
def test_self_checks(key, right, wrong):
    assert_self_check(run(), key, right, wrong)


def test_expert_tensor_parallel_splits_the_experts_again():
    # Mixtral, EP 8 × ETP 2 over DP 16: each GPU holds 1/16 of the routed experts (2.82B → 1.41B
    # at PP 2: 45.1B routed / (8 · 2 · 2))
    at = run(mep="8", etp="2", mdp="16", mpp="2")
    routed = 32 * 8 * 3 * 4096 * 14336
    assert metric(at, "expert params per GPU") == f"{routed / 32 / 1e9:.3g}B"
    at = run(mep="8", etp="2", mdp="8")
    assert any("EP × ETP = 16 does not divide TP × DP = 8" in e.value for e in at.error)


def test_defaults_speak_decimal_units():
    # the sidebar's default: 4,096 × 8 × 7,168 × 1 B = 234,881,024 B = 235 MB, no binary unit
    at = run_page_file(str(ROOT / "app_pages" / "expert_parallel.py"))
    assert metric(at, "dispatch buffer") == "235 MB"
    shown = [m.value for m in (*at.markdown, *at.caption, *at.info)] + [
        f"{m.value} {m.proto.delta}" for m in at.metric
    ]
    assert not [s for s in shown if any(u in s for u in ("KiB", "MiB", "GiB", "TiB"))]


# Fragment guards (issue 18), against a real server (tests/fragments.py).

from tests.fragments import shared_app  # noqa: E402

PAGE = "app_pages.common:start_page"


@pytest.fixture(scope="module")
def app():
    return shared_app()


def test_node_limit_reruns_only_the_placement_section(app):
    tab = app.open("expert_parallel")
    with app.counting() as calls:
        tab.move("m", 2)
    assert tab.fragment_run and not tab.exceptions and calls[PAGE] == 0
    assert calls["app_pages.common.ep_view:layer"] == 0
    assert calls["app_pages.common.ep_view:model_memory"] == 0
    assert tab.charts == ["placement"]
    assert "m" in tab.url_bound


def test_model_pp_reruns_only_the_memory_section(app):
    tab = app.open("expert_parallel")
    with app.counting() as calls:
        tab.move("mpp", 4)
    assert tab.fragment_run and not tab.exceptions and calls[PAGE] == 0
    assert calls["app_pages.common.ep_view:placement"] == 0
    assert tab.charts == ["fit"]
    assert "mpp" in tab.url_bound
