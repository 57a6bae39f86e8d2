"""AppTest for the context-parallel page: the ring's proof, the balance, deep links into the long
context (values worked by hand in the comments), the guided walk and the self-checks."""

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.common import SETTINGS_KEY, Settings
from core.model import preset
from core.units import ByteSystem
from tests.registry import ROOT, assert_self_check, chart_specs, run_page_file

GIB = 2**30


def run(**params: str) -> AppTest:
    """The page alone, with binary memory units (MiB, GiB) pinned: the hand values below are in
    binary units whatever the sidebar's default."""
    at = AppTest.from_file(str(ROOT / "app_pages" / "context_parallel.py"), default_timeout=60)
    at.session_state[SETTINGS_KEY] = Settings(memory_units=ByteSystem.BINARY)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, prefix: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(prefix))


def test_defaults_prove_the_ring_and_show_the_imbalance():
    at = run()
    assert not at.error, [e.value for e in at.error]
    assert float(metric(at, "max |ring")) < 1e-12
    assert metric(at, "tokens per rank") == "12"  # S = 12·C = 48 over C = 4
    assert metric(at, "K/V blocks sent") == "3"
    # contiguous, n = 12: work 4·78 + 6·144 = 1,176 pairs; critical path 78 + 3·144 = 510;
    # idle = 1 − 1176 / (4 · 510) = 42.4 %; zig-zag: 0 %
    assert metric(at, "idle share") == "42% → 0%"
    titles = [s["layout"]["title"]["text"] for s in chart_specs(at)]
    assert len(titles) == 6 and "the ring at step 0" in titles[0]
    assert "contiguous chunks" in titles[1]


def test_llama3_405b_long_context_by_hand():
    # S = 131,072, CP = 16, TP = 8: one K/V head per rank, B_kv = 2·8192·128·2 B = 4 MiB,
    # ring = 15 blocks = 60 MiB; Ulysses impossible (1 K/V head per TP rank, CP = 16)
    at = run(lcp="16", model="Llama-3.1 405B", seq="128K", tp="8", pp="16")
    assert metric(at, "one K/V block") == "4 MiB"
    assert metric(at, "ring: sent") == "60 MiB"
    assert metric(at, "Ulysses: sent") == "impossible"


def test_ulysses_bytes_by_hand():
    # Llama-3.1 8B, S = 32,768, CP = 8, TP = 1: 2 · 7/8 · 4,096 · (32 + 8) · 128 · 2 B = 70 MiB
    at = run(lcp="8", model="Llama-3.1 8B", seq="32K", tp="1", pp="1")
    assert metric(at, "Ulysses: sent") == "70 MiB"
    assert metric(at, "ring: sent") == "112 MiB"  # 7 × (2·4096·8·128·2 B = 16 MiB)


def test_memory_fits_at_cp_8_by_hand():
    # Llama-3.1 70B, S = 131,072, CP = 8, TP 8 + SP, PP 4: activations 34,304 B per token per
    # layer (its SwiGLU/GQA block, tests/test_context_parallel.py) × 16,384 tokens × 20 layers
    # × 4 in flight; states 4 B × N/32 + 12 B × N/(32·8)
    n = preset("Llama-3.1 70B").num_params
    shard = -(-n // 32)
    total = 34304 * 16384 * 20 * 4 + 4 * shard + 12 * -(-shard // 8)
    at = run(lcp="8")
    assert metric(at, "memory per GPU") == f"{total / GIB:.1f} GiB"
    assert next(m for m in at.metric if m.label == "memory per GPU").proto.delta == "fits"


def test_odd_cp_on_real_data():
    # C = 5, n = 12: work 5·78 + 10·144 = 1,830; critical 78 + 4·144 = 654; idle 1 − 1830/3270
    at = run(c="5", lay="zig-zag")
    assert not at.error
    assert metric(at, "idle share") == "44% → 0%"
    assert float(metric(at, "max |ring")) < 1e-12


def test_long_context_cp_1_does_not_fit():
    at = run(lcp="1")
    m = next(m for m in at.metric if m.label == "memory per GPU")
    assert m.proto.delta == "out of memory"


def test_tp_that_splits_no_heads_explains_the_rule():
    at = run(tp="7")
    assert any("TP=7 does not divide 64" in e.value for e in at.error)
    assert float(metric(at, "max |ring")) < 1e-12  # the ring section still draws


def test_walk_sets_the_controls_and_says_the_numbers():
    at = run(walk="2")  # step 2 sets the ring step t = 2 on contiguous chunks
    assert any("42% of rank-time idle" in i.value for i in at.info)
    assert any("the ring at step 2" in s["layout"]["title"]["text"] for s in chart_specs(at))
    at = run(walk="4")  # Llama-3.1 8B, TP 1, S = 32K, CP 8: ring 7 × 16 MiB, Ulysses 70 MiB
    assert any("the ring sends 112 MiB" in i.value and "Ulysses 70 MiB" in i.value for i in at.info)
    assert metric(at, "ring: sent") == "112 MiB" and metric(at, "Ulysses: sent") == "70 MiB"


@pytest.mark.parametrize("key, right, wrong", [("q1", 7, 6), ("q2", 4, 8), ("q3", 6, 5)])
def test_self_checks(key, right, wrong):
    assert_self_check(run(), key, right, wrong)


def test_ulysses_on_real_data_and_its_limit():
    assert float(metric(run(c="4"), "Ulysses (16 heads)")) < 1e-12
    at = run(c="5")  # 16 heads do not split over 5 ranks
    assert metric(at, "Ulysses (16 heads)") == "impossible"
    m = next(m for m in at.metric if m.label.startswith("Ulysses (16 heads)"))
    assert "CP to divide the 16 query heads" in m.help


def test_ring_step_is_url_bound_and_shows_the_held_blocks():
    # C = 4 at step 2: rank r holds the K/V of rank (r − 2) mod 4 → 2, 3, 0, 1
    ring = next(
        s for s in chart_specs(run(t="2")) if "the ring at step 2" in s["layout"]["title"]["text"]
    )
    assert ring["data"][0]["text"] == [f"r{r} · Q{r} × KV{(r - 2) % 4}" for r in range(4)]
    last = next(s for s in chart_specs(run(t="3")) if "step 3" in s["layout"]["title"]["text"])
    assert len(last["data"]) == 1  # the last step passes nothing on: no arcs


def test_memory_follows_the_sidebar_units():
    # the same 70B point in decimal GB, the sidebar's default (and MB for the self-check)
    n = preset("Llama-3.1 70B").num_params
    shard = -(-n // 32)
    total = 34304 * 16384 * 20 * 4 + 4 * shard + 12 * -(-shard // 8)
    at = run_page_file(str(ROOT / "app_pages" / "context_parallel.py"))
    assert metric(at, "memory per GPU") == f"{total / 1e9:.3g} GB"
    assert_self_check(at, "q2", 4 * 2**20 / 1e6, 4)


# Fragment guards (issue 18), against a real server (tests/fragments.py).
from tests.fragments import shared_app  # noqa: E402

PAGE = "app_pages.common:start_page"


@pytest.fixture(scope="module")
def app():
    return shared_app()


def test_ring_step_reruns_only_section_one(app):
    tab = app.open("context_parallel")
    with app.counting() as calls:
        tab.move("t", 2)
    assert tab.fragment_run and not tab.exceptions and calls[PAGE] == 0
    assert calls["app_pages.common.cp_view:long"] == 0
    assert "ring" in tab.charts and not {"gantt", "traffic", "memory"} & set(tab.charts)
    assert "t" in tab.url_bound


def test_long_context_control_reruns_only_section_three(app):
    tab = app.open("context_parallel")
    with app.counting() as calls:
        tab.move("pp", 8)
    assert tab.fragment_run and not tab.exceptions and calls[PAGE] == 0
    assert calls["app_pages.common.cp_view:ring_step"] == 0
    assert "memory" in tab.charts and not {"ring", "grid", "gantt"} & set(tab.charts)
    assert "pp" in tab.url_bound
