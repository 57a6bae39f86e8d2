"""Reliability page: deep links show hand-computed numbers; broken rules show messages, not
tracebacks.
"""

import json
import math

import plotly.graph_objects as go
import plotly.io as pio
import pytest
from streamlit.testing.v1 import AppTest

from core.data_parallel import straggler_curve
from core.reliability import (
    DAY_S,
    HOUR_S,
    goodput_curve,
    interruptions,
    optimal_interval_s,
    simulate_goodput,
    useful_devices,
    waste,
)
from figures import reliability as fr
from figures.reliability import goodput_figure
from tests.charts import specs as chart_specs
from tests.registry import ROOT, plain_arrays

PAGE = str(
    ROOT / "app_pages" / "reliability.py"
)  # from_file resolves relative paths against tests/
LLAMA2_7B_PARAMS = 6_738_415_616  # Touvron et al. 2023 / HF config.json: 6.74B


def run(**params: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def metric(at: AppTest, prefix: str):
    return next(m for m in at.metric if m.label.startswith(prefix))


def charts(at: AppTest) -> dict[str, dict]:
    specs = chart_specs(at)
    return {s["layout"]["title"]["text"].split("<br>")[0]: s for s in specs}


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_deep_link_shows_job_mtbf_interruptions_and_checkpoint_by_hand():
    at = run(gpus="8192", mtbf="20000", days="14", model="Llama-2 7B", wbw="10")
    clean(at)
    assert not at.error
    # Job MTBF = 20,000 h / 8,192 GPUs = 2.4414 h; 14 d = 336 h -> 336 / 2.4414 = 137.6
    # interruptions.
    assert metric(at, "Job MTBF").value == "2.44 h"
    assert metric(at, "Interruptions in 14 d").value == "138"
    # Weights + optimizer = 2 + 12 = 14 B/param (mixed-precision Adam, ZeRO paper) at 10 GB/s.
    size = 14 * LLAMA2_7B_PARAMS
    assert metric(at, "Checkpoint size").value == f"{size / 1e9:.3g} GB" == "94.3 GB"
    assert metric(at, "Write time δ").value == f"{size / 1e10:.3g} s" == "9.43 s"
    # Young: sqrt(2 x 9.434 s x 8,789 s) = 407.2 s = 6.79 min.
    young_s = math.sqrt(2 * size / 1e10 * 20_000 * 3600 / 8192)
    assert young_s == pytest.approx(407.2, abs=0.1)
    assert metric(at, "Young").value == "6.79 min"
    # Llama 3 illustration at this per-GPU MTBF: 54 d x 24 h x 16,384 / 20,000 h = 1,061.7.
    assert "**1,062** there" in at.info[0].value


def test_defaults_reproduce_llama3_and_the_monte_carlo_agrees_with_the_closed_form():
    at = run()
    clean(at)
    # Default per-GPU MTBF is Llama 3's 419 interruptions in 54 d spread over 16,384 GPUs.
    assert metric(at, "Job MTBF").value == f"{54 * 24 / 419:.3g} h" == "3.09 h"
    assert "**419** there" in at.info[0].value
    # A week: 7 x 419 / 54 = 54.3 interruptions.
    assert metric(at, "Interruptions in 7 d").value == "54.3"
    mine = metric(at, "Goodput at your τ = 30 min")
    closed = float(mine.value.rstrip("%"))
    mc, err = (
        float(x.strip().rstrip("%")) for x in mine.delta.removeprefix("Monte Carlo").split("±")
    )
    assert abs(mc - closed) <= 2 * err + 0.1  # ±2 s.e. shown; 0.1 for display rounding
    assert len(charts(at)) == 5


def test_useful_devices_chart_matches_a_hand_computed_pipeline_and_goodput():
    at = run(gpus="1024", pp="4", mb="8", jit="0", tau="60", model="Llama-2 7B", wbw="10")
    clean(at)
    bars = charts(at)["GPUs doing useful work at the same instant"]["data"][0]
    # 1F1B, P = 4, 8 micro-batches: bubble (P-1)/(m+P-1) = 3/11; no jitter: no straggler loss.
    m, d, r, tau = (
        54 * 24 * 16_384 / 419 * HOUR_S / 1024,
        14 * LLAMA2_7B_PARAMS / 1e10,
        600.0,
        3600.0,
    )
    goodput = tau / (m * math.exp(r / m) * math.expm1((tau + d) / m))  # Daly 2006 complete model
    assert bars["y"] == pytest.approx(
        [1024, 1024 * 8 / 11, 1024 * 8 / 11, 1024 * 8 / 11 * goodput], rel=1e-6
    )


def test_zero_bandwidth_gets_a_sentence_not_an_internal_message():
    at = run(wbw="0")  # the widget's own minimum
    clean(at)
    assert not at.error and "a checkpoint never finishes" in at.warning[0].value
    assert "must be" not in at.warning[0].value and not chart_specs(at)


@pytest.mark.parametrize("wbw", ["0.0947", "0.1"])
def test_a_cluster_that_fails_faster_than_it_checkpoints_says_so(wbw):
    # 32,768 GPUs at a 1,000 h MTBF: job MTBF = 1000 h / 32768 = 109.9 s = 1.83 min. Llama-3.1 405B
    # weights + Adam state (14 B/param in the mixed recipe, ~5.68 TB) at 0.1 GB/s take ~15.8 h:
    # 500× the MTBF, so no interval completes; the page says so in words (not "goodput=0.0 must
    # be…" and not "lengthen τ toward 1.83 min" while τ is 4 h).
    at = run(gpus="32768", mtbf="1000", restart="60", tau="240", wbw=wbw)
    clean(at)
    (msg,) = [e.value for e in at.error]
    assert msg.startswith("This cluster fails faster than it can checkpoint")
    assert "1.83 min" in msg and "must be" not in msg and "Lengthen" not in msg
    assert not at.warning


def test_interval_shorter_than_the_checkpoint_write_warns_and_still_draws():
    # 405B x 14 B = 5.68 TB at 10 GB/s: a 9.47-minute write, longer than a 5-minute interval.
    at = run(wbw="10", tau="5")
    clean(at)
    assert not at.error
    assert any("shorter than the checkpoint write δ = 9.47 min" in w.value for w in at.warning)
    assert len(charts(at)) == 5


def test_checkpoint_that_outlasts_hundreds_of_mtbfs_states_the_rule():
    # Llama-3.1 405B, fp32 Adam, all states = 16 B/param = 6.5 TB at 0.05 GB/s: 130,000 s to write,
    # while 32,768 GPUs at 1,000 h each fail every 110 s: over 1,000 MTBFs per checkpoint.
    at = run(wbw="0.05", recipe="fp32_adam", ckpt="all model states", gpus="32768", mtbf="1000")
    clean(at)
    assert at.error and "fails faster than it can checkpoint" in at.error[0].value
    assert "domain" not in at.error[0].value


def test_a_restart_longer_than_many_mtbfs_says_so():
    # 1 h restarts against a 110 s job MTBF: e^(3600/110) ≈ 1.6e14 restart attempts per failure;
    # no interval keeps 1% of the wall time useful, and the page says why in a sentence.
    at = run(gpus="32768", mtbf="1000", restart="60", tau="240")
    clean(at)
    assert "fails faster than it can restart" in at.error[0].value and not chart_specs(at)


def test_invalid_url_values_fall_back_with_a_notice():
    at = run(mtbf="-5", pp="3")
    clean(at)
    notices = " ".join(w.value for w in at.warning)
    assert "`mtbf=-5`" in notices and "`pp=3`" in notices
    assert metric(at, "Job MTBF").value == "3.09 h"


def test_self_check_accepts_youngs_interval_at_twice_the_gpus():
    # Llama-2 7B at 10 GB/s: delta = 9.434 s; 2 x 8,192 GPUs at 20,000 h: M = 4,394.5 s.
    # Young = sqrt(2 x 9.434 x 4,394.5) = 287.9 s = 4.80 min.
    answer = math.sqrt(2 * 14 * LLAMA2_7B_PARAMS / 1e10 * 20_000 * 3600 / 16_384) / 60
    assert answer == pytest.approx(4.80, abs=0.01)
    at = run(gpus="8192", mtbf="20000", model="Llama-2 7B", wbw="10", q=f"{answer:.3f}")
    clean(at)
    assert any(s.value.startswith("Correct") for s in at.success)
    at = run(
        gpus="8192", mtbf="20000", model="Llama-2 7B", wbw="10", q="6.79"
    )  # the 8,192-GPU value
    assert any(e.value.startswith("Not quite") for e in at.error)


# --- core and figure changes made for this page ----------------------------------------------


def test_optimal_interval_saturates_at_the_mtbf_when_the_checkpoint_dwarfs_it():
    # With delta = 1e4 M the root of log(1 - x) + x + delta/M = 0 is 1 - e^-(1 + 1e4) (1 in floats):
    # the bisection used to step onto x = 1 and raise "math domain error".
    assert optimal_interval_s(checkpoint_s=1e6, mtbf_s=100.0) == pytest.approx(100.0)
    # Normal regime unchanged: brute-force grid of the exact goodput, M = 3 h, delta = 120 s.
    m, d = 3 * HOUR_S, 120.0
    grid = [60 + i for i in range(0, 10_000)]
    best = max(grid, key=lambda t: t / math.expm1((t + d) / m))
    assert optimal_interval_s(checkpoint_s=d, mtbf_s=m) == pytest.approx(best, abs=1.0)


def test_goodput_figure_marks_the_chosen_interval_with_its_closed_form_goodput():
    curve = goodput_curve(checkpoint_s=300, restart_s=600, mtbf_s=3 * HOUR_S)
    chosen = waste(interval_s=10 * HOUR_S, checkpoint_s=300, restart_s=600, mtbf_s=3 * HOUR_S)
    fig = goodput_figure(curve, chosen=chosen)
    go.Figure(fig)
    mark = next(t for t in fig["data"] if t["name"].startswith("your τ"))
    # By hand: tau = 36,000 s, s/M = 36,300/10,800 = 3.3611, R/M = 600/10,800 = 0.0556;
    # e^3.3611 - 1 = 27.82, e^0.0556 = 1.0571: goodput = 36,000 / 317,620 ≈ 11.33%.
    by_hand = 36_000 / (10_800 * math.exp(600 / 10_800) * math.expm1(36_300 / 10_800))
    assert by_hand == pytest.approx(0.1133, abs=1e-4)
    assert mark["x"] == [36_000, 36_000] and mark["y"][1] == pytest.approx(by_hand)
    assert mark["name"] == "your τ: 10 h, 11.3%"
    # 10 h lies beyond the default curve (it stops at 10 x the optimum of 39 min), so the drop line
    # starts at the lowest goodput shown: the chosen point's own.
    closed = next(t for t in fig["data"] if t["name"].startswith("closed form"))
    assert max(closed["x"]) < 36_000 and mark["y"][0] == pytest.approx(by_hand)


def test_ready_figures_revalidate_to_what_plotlys_validating_path_sends():
    # common.chart sends figures.theme.ready(spec) as it is (no go.Figure built on a rerun);
    # validated by plotly afterwards, it is the figure plotly's validating path builds.
    from figures.theme import ready

    kw = dict(checkpoint_s=56.8, restart_s=600, mtbf_s=11_135)
    curve, mine = goodput_curve(**kw), waste(interval_s=1800, **kw)
    specs = [
        fr.goodput_figure(
            curve, [simulate_goodput(interval_s=1800, run_work_s=7 * DAY_S, **kw)], mine
        ),
        fr.waste_figure(curve),
        fr.interruptions_figure(
            [interruptions(num_gpus=n, run_s=7 * DAY_S, gpu_mtbf_s=1e8) for n in (8, 64)]
        ),
        fr.stragglers_figure(straggler_curve(rank_counts=(1, 8), num_trials=4)),
        fr.useful_devices_figure(useful_devices(num_gpus=100, bubble_fraction=0.1, goodput=0.9)),
    ]
    for spec in specs:
        validated = json.loads(pio.to_json(go.Figure(spec), validate=False))
        fast = json.loads(pio.to_json(ready(spec), validate=False))
        # no template of its own, as on every page (Plotly.js's defaults: centred titles);
        # the validating path embeds Plotly's default one, which ready() does not send
        assert "template" not in fast["layout"]
        validated["layout"].pop("template")
        assert plain_arrays(json.loads(pio.to_json(go.Figure(fast)))) == plain_arrays(
            json.loads(pio.to_json(go.Figure(validated)))
        )


def test_figure_titles_fit_half_width_columns_and_name_the_jitter_ratio():
    strag = fr.stragglers_figure(
        straggler_curve(rank_counts=(2, 8), mean_step_s=0.1, jitter_s=0.005, num_trials=4)
    )
    assert "σ/μ = 5.0%" in strag["layout"]["title"]["subtitle"]["text"]  # 5 ms / 100 ms
    useful = fr.useful_devices_figure(
        useful_devices(num_gpus=1000, bubble_fraction=0.2, goodput=0.9)
    )
    head, sub = useful["layout"]["title"]["text"], useful["layout"]["title"]["subtitle"]["text"]
    assert head == "GPUs doing useful work at the same instant"
    assert "720 of 1,000 (72.0%)" in sub  # 1000 x 0.8 x 0.9
    scale = fr.interruptions_figure([interruptions(num_gpus=8, run_s=DAY_S, gpu_mtbf_s=1e8)])
    assert scale["layout"]["xaxis"]["dtick"] == scale["layout"]["yaxis"]["dtick"] == 1  # decades


# --- fragment guards (issue 18): a real server, spied, over the browser's protocol ---------------

PAGE_RUN = "app_pages.common:start_page"  # once per whole-page run, never in a fragment
PLAN = "app_pages.common.reliability_view:plan"  # failures, checkpoint and goodput: τ and up
USEFUL = "app_pages.common.reliability_view:_useful"  # the stragglers section's numbers


@pytest.fixture(scope="module")
def app():
    from tests.fragments import spied_app

    with spied_app(PAGE_RUN, PLAN, USEFUL) as a:
        yield a


def test_jitter_reruns_only_the_stragglers_section(app):
    tab = app.open("reliability")
    inner, outer = (tab.widgets[k][1] for k in ("jit", "gpus"))
    assert inner and outer and inner != outer  # the stragglers' fragment, inside the body's
    assert all(tab.widgets[k][1] == inner for k in ("jit", "pp", "mb"))
    with app.counting() as calls:
        tab.move("jit", 10)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE_RUN] == 0 and calls[PLAN] == 0 and calls[USEFUL] == 1
    assert tab.charts == ["stragglers", "useful"]  # goodput, waste and scale are not re-sent
    assert {"jit", "pp", "mb"} <= tab.url_bound  # still bound to the URL inside the fragment


def test_tau_reruns_the_body_not_the_page_nor_the_tau_free_work(app):
    """τ feeds the goodput chart, its metrics and the useful GPUs: it reruns the page's body
    fragment, not the title and sidebar; the curve, Monte Carlo, waste and scale charts are cached
    apart from τ."""
    tab = app.open("reliability")
    with app.counting() as calls:
        tab.move("tau", 45)
    assert tab.fragment_run and calls[PAGE_RUN] == 0 and calls[PLAN] == 1
    assert {"goodput", "stragglers", "useful"} <= set(tab.charts)


def test_tau_free_work_is_shared_across_tau():
    # The plan at τ = 45 min reuses the τ-free curve and Monte Carlo; its own point is the last,
    # seeded as before (one seed per curve point, then τ's), so numbers do not move with caching.
    from app_pages.common.reliability_view import Job, plan

    kw = dict(gpus=1024, mtbf_h=20_000.0, days=7, restart_s=600.0, model="Llama-2 7B")
    kw |= dict(recipe="mixed_adam", contents="weights+optimizer", bw_bytes_per_s=1e10)
    a, b = plan(Job(tau_s=1800.0, **kw)), plan(Job(tau_s=2700.0, **kw))
    assert a["curve"] == b["curve"] and a["mc"][:-1] == b["mc"][:-1]
    assert (a["mc"][-1].interval_s, b["mc"][-1].interval_s) == (1800.0, 2700.0)
    assert b["mine"].goodput == pytest.approx(waste(interval_s=2700.0, **_kw(b)).goodput)


def _kw(p: dict) -> dict:
    return dict(checkpoint_s=p["ck"].write_s, restart_s=600.0, mtbf_s=p["run"].job_mtbf_s)
