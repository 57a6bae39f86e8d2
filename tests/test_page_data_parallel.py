"""AppTest for the data-parallel page: the proof's displayed difference, deep links, broken rules.

Expected numbers are derived here, independently of the page: gradients by central finite
differences
of a loss written out in numpy, step times by hand from 6·Ψ·T FLOPs and the ring's 2(p−1)/p·n bytes
over the bottleneck link, straggler values from docs/notes/collectives.md §5.
"""

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.charts import charts
from tests.registry import ROOT, assert_self_check, run_page_file

GIB = 2**30


def run(**params: str) -> AppTest:
    return run_page_file(str(ROOT / "app_pages" / "data_parallel.py"), **params)


def metric(at: AppTest, prefix: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(prefix))


def number(text: str) -> float:
    """The first number in a display string ('948 ms' → 948, '5.6e-17' → 5.6e-17, '12.5 GB/s' →
    12.5).
    """
    return float(re.search(r"[-+]?\d[\d,]*\.?\d*(?:e[-+]?\d+)?", text).group().replace(",", ""))


def titles(at: AppTest) -> list[str]:
    return [json.loads(c.spec)["layout"]["title"]["text"] for c in charts(at)]


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def finite_difference_grads(num_samples: int, sizes: list[int], seed: int = 0):
    """Full-batch and per-shard mean gradients of ½·mean((tanh(xW1+b1)·w2 + b2 − y)²), numerically.

    The data are drawn exactly as the page's problem is documented: x ~ N(0,1) (n×4), a teacher
    vector, y = sin(x·teacher) + 0.1·noise, W1 ~ N(0,1)/2, w2 ~ N(0,1)/4, zero biases.
    """
    rng = np.random.default_rng(seed)
    d, k = 4, 16
    x = rng.standard_normal((num_samples, d))
    teacher = rng.standard_normal(d)
    y = np.sin(x @ teacher) + 0.1 * rng.standard_normal(num_samples)
    w1 = rng.standard_normal((d, k)) / 2
    w2 = rng.standard_normal(k) / 4
    theta = np.concatenate([w1.ravel(), np.zeros(k), w2, [0.0]])

    def loss(t, xs, ys):
        a = np.tanh(xs @ t[: d * k].reshape(d, k) + t[d * k : d * k + k])
        return 0.5 * np.mean((a @ t[d * k + k : d * k + 2 * k] + t[-1] - ys) ** 2)

    def grad(xs, ys, h=1e-6):
        e = np.eye(theta.size) * h
        return np.array(
            [
                (loss(theta + e[i], xs, ys) - loss(theta - e[i], xs, ys)) / (2 * h)
                for i in range(theta.size)
            ]
        )

    edges = np.concatenate([[0], np.cumsum(sizes)])
    shards = [grad(x[a:b], y[a:b]) for a, b in zip(edges[:-1], edges[1:])]
    return grad(x, y), shards


@pytest.mark.parametrize("n", [2, 3, 4, 7, 16])
def test_displayed_max_difference_is_rounding_at_every_n(n):
    at = run(n=str(n))
    assert not at.error
    shown = number(metric(at, "max |ring ÷ N − full batch|"))
    assert shown < 1e-10
    assert int(metric(at, "Ring steps")) == 2 * (n - 1)
    assert f"Data parallel · N={n} · gradient proof" in titles(at)


def test_unequal_shards_show_the_plain_average_error_and_the_weighted_fix():
    at = run(n="4", b="12", uneq="true")
    # 48 samples: 1 each + the other 44 in proportion to 1:2:3:4 → 5.4, 9.8, 14.2, 18.6; floors
    # 5, 9, 14, 18 leave 2, given to the largest remainders (.8, .6): 5/10/14/19.
    assert metric(at, "Shard sizes") == "5/10/14/19"
    full, shards = finite_difference_grads(48, [5, 10, 14, 19])
    plain = np.max(np.abs(np.mean(shards, axis=0) - full))
    assert plain > 1e-3  # the plain average is genuinely wrong
    assert number(metric(at, "max |ring ÷ N − full batch|")) == pytest.approx(plain, rel=0.06)
    assert number(metric(at, "Weighted by shard size")) < 1e-10
    assert any("Unequal shards" in w.value for w in at.warning)


def test_equal_shards_match_finite_differences_of_the_same_batch():
    at = run(n="3", b="4")
    full, shards = finite_difference_grads(12, [4, 4, 4])
    assert np.max(np.abs(np.mean(shards, axis=0) - full)) < 1e-8  # the identity, independently
    # Chart 0 is the drawing of the batch cut into shards; chart 1 the gradient proof.
    grad = json.loads(charts(at)[1].spec)["data"][0]["y"]
    assert np.allclose(
        grad, full[: len(grad)], atol=1e-7
    )  # the page's full-batch bars are this gradient


def test_unequal_shards_with_one_sample_per_rank_name_the_rule_and_keep_the_page():
    at = run(n="16", b="1", uneq="true")
    errors = [e.value for e in at.error]
    assert (
        len(errors) == 1
        and "need more samples than ranks" in errors[0]
        and "≥ 17 samples" in errors[0]
    )
    assert "Data parallel · N=512 · weak scaling" in titles(at)  # later sections still draw
    assert any(t.startswith("Scaled 8 → 64 GPUs") for t in titles(at))


def test_more_nics_than_gpus_names_the_rule():
    at = run(gpn="4", nics="8")
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "nics_per_node=8 exceeds gpus_per_node=4" in errors[0]
    assert "use nics_per_node ≤ 4" in errors[0]
    assert "Data parallel · N=4 · gradient proof" in titles(at)


def test_deep_link_reproduces_the_64_gpu_run_by_hand():
    # 1.3B params, 2,048 tokens/GPU, A100 (312 TFLOP/s dense) at 40% MFU, one 100 GbE NIC per node,
    # no bucketing: compute = 6·1.3e9·2048 / (312e12·0.4) = 128 ms; the textbook flat ring over 8
    # nodes sends 2·63/64 · 2.6 GB (bf16) per rank through 12.5 GB/s × 0.94 (the page runs every
    # kind at the app's achievable efficiency) = 436 ms (+ < 1 ms of latency).
    at = run(
        size="1.3B",
        kt="2",
        gpu="A100 80GB",
        nic="100 GbE",
        nics="1",
        ovl="false",
        at="64",
        ar="flat ring",
    )
    compute = 6 * 1.3e9 * 2048 / (312e12 * 0.4)
    comm = 2 * 63 / 64 * 1.3e9 * 2 / (12.5e9 * 0.94)
    assert number(metric(at, "Step at N=64")) == pytest.approx((compute + comm) * 1e3, rel=0.005)
    assert number(metric(at, "Exposed all-reduce")) == pytest.approx(comm * 1e3, rel=0.005)
    assert number(metric(at, "Scaling efficiency")) == pytest.approx(
        100 * compute / (compute + comm), abs=0.6
    )
    assert metric(at, "Bottleneck") == "11.8 GB/s"
    how = markdown(at)
    sent = 2 * 63 / 64 * 2.6e9 / 1e9  # GB, the default unit (bf16 gradients)
    assert f"n = {2.6e9 / 1e9:.3g} GB → {sent:.3g} GB" in how
    assert "T = 2,048 tokens" in how and "1 bucket," in how


def test_nccl_default_names_what_ran_and_whether_overlap_helps():
    # NCCL's tuner (NVIDIA/nccl src/graph/tuning.cc) by hand: ring/Simple, 8.4 µs + 112 NVLink hops
    # of 3.4 µs + 14 NET hops of 14 µs, ×1.4 across nodes; 2.6 GB (bf16) at one 100 GbE NIC × 0.94.
    at = run(size="1.3B", kt="1", gpu="A100 80GB", nic="100 GbE", nics="1", ovl="false", at="64")
    comm = (8.4 + 112 * 3.4 + 14 * 14) * 1.4e-6 + 2 * 63 / 64 * 2.6e9 / (12.5e9 * 0.94)
    assert number(metric(at, "Exposed all-reduce")) == pytest.approx(comm * 1e3, rel=0.005)
    caption = "\n".join(c.value for c in at.caption)
    assert "ran: Ring / Simple" in caption
    # thin network, 1,024 tokens per GPU: a 43 ms backward hides less than 101 buckets add
    assert "Bucketing + overlap does not help here" in caption
    # the page's defaults (7B, H100, 8 NDR NICs per node, 25 MiB buckets): it helps, and the
    # buckets run NCCL's tree with LL128 (latency logarithmic in nodes)
    at = run()
    caption = "\n".join(c.value for c in at.caption)
    assert "Bucketing + overlap helps here" in caption and "Tree (double binary) / LL128" in caption
    timeline = next(
        json.loads(c.spec)["layout"]
        for c in charts(at)
        if json.loads(c.spec)["layout"]["title"]["text"].startswith("Bucket timeline")
    )
    assert "ran: Tree (double binary) / LL128" in timeline["title"]["subtitle"]["text"]


def test_strong_scaling_splits_the_8_gpu_batch():
    at = run(scale="strong", at="64")  # 8 × 4,096 tokens over 64 GPUs = 512 tokens each
    how = markdown(at)
    compute_ms = 6 * 7e9 * 512 / (989.4e12 * 0.4) * 1e3
    assert "T = 512 tokens" in how and f"→ {compute_ms:.3g} ms" in how


def test_scenario_numbers_by_hand():
    at = run()
    md = markdown(at)
    grad = 1.3e9 * 2
    assert (
        f"| bytes sent per rank (ring simulator) | {2 * 7 / 8 * grad / 1e9:.3g} GB | "
        f"{2 * 63 / 64 * grad / 1e9:.3g} GB |" in md
    )
    # achievable busbw: NVLink 3 300 × 0.77, one 100 GbE NIC 12.5 × 0.94
    assert "| its bandwidth per rank | 231 GB/s | 11.8 GB/s |" in md
    assert "19.7× slower" in md  # 231 / 11.75
    assert "**a thin network**" in md and "DGX-class network" in md
    assert f"backward lasts {2 / 3 * 6 * 1.3e9 * 2048 / (312e12 * 0.4) * 1e3:.3g} ms" in md
    # ×8 per-GPU batch: compute ×8, the all-reduce unchanged; tokens/s gain = 8·(c + a)/(8c + a).
    c = 6 * 1.3e9 * 2048 / (312e12 * 0.4)
    a = (8.4 + 112 * 3.4 + 14 * 14) * 1.4e-6 + 2 * 63 / 64 * grad / (12.5e9 * 0.94)
    gain = number(re.search(r"per-GPU batch ×8.*?tokens/s ×([\d.]+)", md).group(1))
    assert gain == pytest.approx(8 * (c + a) / (8 * c + a), rel=0.01)
    fixes = [ln for ln in md.splitlines() if ln.startswith("- **")]
    assert len(fixes) == 3
    assert not re.search(r"(?<![\d.])0%", md)  # one efficiency, never rounded to "0%"
    # compute / step: 128 / 147.8 ms and 128 / 564.5 ms (NCCL ring/Simple by hand above)
    assert "scaling efficiency (compute / step) | 87% | 23% |" in md
    for line in fixes:  # each verdict agrees with the tokens/s ratio it quotes
        ratio = float(re.search(r"tokens/s ×([\d.]+)", line).group(1))
        assert ("does not help" in line) == (ratio < 1) and ("helps:" in line) == (ratio >= 1)


def test_straggler_deep_link_matches_the_reference_integral():
    at = run(mu="200", sigma="10")
    # docs/notes/collectives.md §5: E[max of 512 N(0,1)] = 3.04390 → 200 + 10 × 3.04390 = 230.44 ms.
    spec = next(
        json.loads(c.spec)
        for c in charts(at)
        if json.loads(c.spec)["layout"]["title"]["text"].startswith("Stragglers")
    )
    assert spec["layout"]["title"]["text"] == "Stragglers · μ=200 ms · σ=10 ms"
    assert "230.44 ms expected" in spec["layout"]["title"]["subtitle"]["text"]


@pytest.mark.parametrize("key, right, wrong", [("q1", 1.75, 1.0), ("q2", 111.72, 107.12)])
def test_self_checks_accept_the_worked_answers(key, right, wrong):
    # q1: a ring all-reduce sends 2(N−1)/N of the buffer: 1.75 GiB at N = 8.
    # q2: 100 + 5 × 2.34373 (docs/notes/collectives.md §5) = 111.72 ms; 107.12 is the p = 8 value.
    assert_self_check(run(), key, right, wrong)


# --- the core and figure helpers this page added -------------------------------------------------


def test_skewed_shards_by_hand_and_their_rules():
    from core.data_parallel import skewed_shards

    assert skewed_shards(48, 4) == (5, 10, 14, 19)  # worked in the unequal-shards test above
    assert skewed_shards(4, 2) == (1, 3)  # rounding gives 2/2; one sample moves to stay unequal
    for n in range(2, 17):
        for per_rank in (2, 3, 12, 32):
            s = skewed_shards(n * per_rank, n)
            assert (
                sum(s) == n * per_rank and min(s) >= 1 and len(set(s)) > 1 and list(s) == sorted(s)
            )
    with pytest.raises(ValueError, match="more samples than ranks"):
        skewed_shards(16, 16)
    with pytest.raises(ValueError, match="≥ 2 ranks"):
        skewed_shards(10, 1)


def test_step_splits_the_all_reduce_into_latency_and_bandwidth():
    from core.data_parallel import DpJob, all_reduce_s, dp_step
    from core.hardware import make_cluster

    node = make_cluster(num_nodes=1)  # 8 × H100, NVLink 4: 450 GB/s, α = 3.4 µs
    # 1e9 B of fp32 gradients (4 B each, stated), 25 MiB buckets, the textbook ring
    job = DpJob(
        num_params=2.5e8, tokens_per_gpu=4096, all_reduce="flat ring", grad_bytes_per_param=4
    )
    # 1 MiB first bucket, then (1e9 − 2^20) / 25 MiB = 38.1 → 38 full buckets and a tail: 40
    # buckets.
    step = dp_step(job, node)
    assert len(step.bucket_bytes) == 40
    assert step.comm_latency_s == pytest.approx(40 * 2 * 7 * 3.4e-6, rel=1e-9)
    assert step.comm_s - step.comm_latency_s == pytest.approx(2 * 7 / 8 * 1e9 / 450e9, rel=1e-9)
    assert all_reduce_s(node, 1e9, "flat ring", with_latency=False) == pytest.approx(1.75e9 / 450e9)


def test_fix_effects_are_consistent_with_the_steps():
    from core.data_parallel import fix_effects, slower_at_scale

    s = slower_at_scale()
    bucketing, batch, both = fix_effects(s)
    compute = 6 * 1.3e9 * 2048 / (312e12 * 0.4)
    # Buckets move the same bytes, but NCCL's tuner runs them with LL128 (bandwidth × 0.92,
    # NVIDIA/nccl src/graph/tuning.cc): 100 ring/LL128 buckets and a 1 MiB first one on the tree
    # (LL128 × 120/128 × ½ ×
    # treeCorrectionFactor 0.6 at log2(1 MiB / 64) = 14), against one ring/Simple all-reduce.
    b, mib, grad = 12.5e9 * 0.94, 2**20, 2.6e9
    bucketed = (grad - mib) / (0.92 * b * 64 / 126) + mib / (b * 0.92 * 120 / 128 * 0.5 * 0.6)
    bandwidth_change = bucketing.comm_change_s - bucketing.latency_change_s
    assert bandwidth_change == pytest.approx(bucketed - grad * 126 / 64 / b, rel=1e-9)
    assert (
        bucketing.hide_cap_s == pytest.approx(2 / 3 * compute)
        and bucketing.hidden_s <= bucketing.hide_cap_s
    )
    assert batch.compute_change_s == pytest.approx(7 * compute) and batch.comm_change_s == 0
    assert both.num_buckets == bucketing.num_buckets
    assert s.gpu_ratio == 8
    comm = 2 * 63 / 64 * 2.6e9 / (12.5e9 * 0.94)  # the 64-GPU all-reduce, bandwidth term
    strong = (16384 / (compute / 8 + comm)) / (16384 / s.small.step_s)
    assert s.strong_throughput_ratio == pytest.approx(strong, rel=0.01)


def test_fix_notes_state_the_verdict_and_the_cap():
    from core.data_parallel import FixEffect
    from figures.data_parallel import fix_notes

    worse = FixEffect(
        label="x",
        tokens_per_s_gain=0.9,
        step_change_s=0.01,
        compute_change_s=0.0,
        comm_s=1.0,
        comm_change_s=0.1,
        latency_change_s=0.1,
        hidden_s=0.05,
        hide_cap_s=0.05,
        num_buckets=10,
    )
    (line,) = fix_notes((worse,))
    assert "**does not help**: tokens/s ×0.9 (-10.0%)" in line
    assert "overlap hides 50 ms of the 1 s all-reduce (all it can: backward lasts 50 ms)" in line
    assert "10 buckets add 100 ms of per-message latency" in line


def test_log_ticks_1_2_5():
    from figures.style import ticks_125

    t = ticks_125([0.3, 47, None, float("nan")])
    assert t["tickvals"] == pytest.approx([0.2, 0.5, 1, 2, 5, 10, 20, 50, 100])
    assert t["ticktext"][:3] == ["0.2", "0.5", "1"]
    assert ticks_125([0, None]) == {}


# Issue 18: each section is an st.fragment, so a slider reruns only its section. Driven against
# a real server (tests/fragments.py: AppTest always reruns the whole script), counting calls of
# the page's builders (app_pages/common/dp_data.py) and start_page (once per whole-page run).
PAGE, DATA = "app_pages.common:start_page", "app_pages.common.dp_data"
BUILDERS = {f"{DATA}:{name}" for name in ("proof", "scaling", "scenario", "stragglers")}


@pytest.fixture(scope="module")
def spied():
    from tests.fragments import spied_app

    with spied_app(PAGE, *sorted(BUILDERS)) as app:
        yield app


@pytest.mark.parametrize(
    "key, value, builder, charts",
    [
        ("n", 5, "proof", ["dp_draw", "grad", "loss"]),
        ("kt", 8, "scaling", ["steps", "eff", "timeline"]),
        ("mu", 200, "stragglers", ["stragglers"]),
    ],
)
def test_a_slider_reruns_only_its_section(spied, key, value, builder, charts):
    tab = spied.open("data_parallel")
    assert tab.widgets[key][1], f"{key} should sit inside a fragment"
    with spied.counting() as calls:
        tab.move(key, value)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE] == 0  # the page body did not rerun
    assert calls[f"{DATA}:{builder}"] == 1
    assert all(calls[b] == 0 for b in BUILDERS - {f"{DATA}:{builder}"})  # nor other sections
    assert tab.charts == charts  # only this section's charts re-sent
    assert key in tab.url_bound  # the slider is still bound to the URL inside its fragment


def test_the_bucket_size_reruns_its_section_and_the_scenario_that_reads_it(spied):
    tab = spied.open("data_parallel")
    with spied.counting() as calls:
        tab.move("bkt", 100)
    assert tab.fragment_run and not tab.exceptions  # two keyed fragments, not the page
    assert calls[PAGE] == 0 and calls[f"{DATA}:proof"] == 0 and calls[f"{DATA}:stragglers"] == 0
    assert calls[f"{DATA}:scenario"] == 1
    assert tab.charts == ["steps", "eff", "timeline", "scenario"] and "bkt" in tab.url_bound
