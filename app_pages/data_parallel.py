"""Data parallelism: why averaging gradients equals one big batch, and when it stops scaling."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app_pages import common
from core import data_parallel as dp
from core import data_parallel as ds
from core import data_parallel as sc
from core import data_parallel as sg
from core.collectives import scan_bytes_per_rank
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.units import format_bandwidth, format_bytes, format_count, format_seconds, gib_or_gb
from figures import data_parallel as fd

COUNTS = (8, 16, 32, 64, 128, 256, 512)
SIZES = {"0.125": "125M", "1.3": "1.3B", "7": "7B", "13": "13B", "70": "70B"}
NICS = {n: n for n, spec in LINK_PRESETS.items() if spec.latency_s >= 1e-5}  # scale-out links only
KINDS = {k.value: k.value for k in ds.AllReduceKind}


@st.cache_data(max_entries=64)
def _proof(n: int, b: int, uneq: bool) -> dict:
    problem = dp.make_problem(num_samples=n * b)
    sizes = dp.skewed_shards(n * b, n) if uneq else dp.equal_shards(n * b, n)
    proof, curves = dp.prove_data_parallel(problem, sizes), dp.sgd_curves(problem, sizes)
    return dict(
        p=proof, grad=fd.gradient_proof_figure(proof), loss=fd.loss_curves_figure(curves, sizes)
    )


@st.cache_data(max_entries=64)
def _scaling(size, kt, gpu, g, nic, nics, ovl, bkt, kind, scale, at_n) -> dict:
    base = make_cluster(
        num_nodes=1, gpus_per_node=g, gpu_name=gpu, inter_link_name=nic, nics_per_node=nics
    )
    job = ds.DpJob(
        num_params=float(size) * 1e9,
        tokens_per_gpu=kt * 1024,
        bucket_bytes=bkt * 2**20 if ovl else None,
        all_reduce=kind,
    )
    curves = {
        k: ds.scaling_curve(replace(job, all_reduce=k), base, COUNTS, scaling=scale) for k in KINDS
    }
    step = curves[kind].steps[COUNTS.index(at_n)]
    return dict(
        job=job,
        step=step,
        figs=(
            fd.step_time_figure(curves[kind]),
            fd.efficiency_figure(curves),
            fd.bucket_timeline_figure(step),
        ),
    )


@st.cache_data(max_entries=16)
def _scenario(bkt: int, units: str, bw_units: str) -> dict:
    s = sc.slower_at_scale(bucket_bytes=bkt * 2**20)
    rows = [
        dict(zip(("quantity", f"{s.small.num_gpus} GPUs", f"{s.large.num_gpus} GPUs"), r))
        for r in fd.scenario_rows(s, units, bw_units)
    ]
    return dict(
        md=fd.scenario_markdown(s, sc.scenario_cluster(), units, bw_units),
        fig=fd.scenario_figure(s),
        rows=rows,
    )


@st.cache_data(max_entries=64)
def _stragglers(mu_ms: float, sigma_ms: float, q_pct: float) -> dict:
    c = sg.straggler_curve(mean_step_s=mu_ms / 1e3, jitter_s=sigma_ms / 1e3, slow_prob=q_pct / 100)
    return dict(c=c, fig=fd.straggler_figure(c))


def attempt(fn, *args):
    """fn(*args), or None after showing the rule it broke (the rest of the page still draws)."""
    try:
        return fn(*args)
    except ValueError as err:
        st.error(str(err), icon="🚫")


def side_by_side(*charts: tuple[dict, str]) -> None:
    for col, (fig, key) in zip(st.columns(len(charts)), charts):
        with col:
            common.chart(fig, key=key)


common.start_page(
    "Data parallelism",
    "Why is averaging gradients across GPUs the same as one big "
    "batch, and when does it stop scaling?",
)
units, bw_units = common.memory_units().value, common.bandwidth_units().value
st.subheader("1 · The proof: N ranks, one gradient")
c = st.columns([1, 1, 1.2])
n = common.slider("N (simulated ranks)", 2, 16, 4, key="n", where=c[0])
b = common.slider("Samples per rank", 1, 32, 12, key="b", where=c[1])
uneq = common.toggle(
    "Unequal shards", False, key="uneq", where=c[2], help="e.g. variable-length sequences per rank"
)
st.caption(
    "A 2-layer tanh MLP, gradient written out by hand. N × samples rows split over N ranks; each "
    "rank's mean "
    "gradient goes through the numpy ring all-reduce simulator; the sum is divided by N, as "
    "PyTorch DDP does."
)
pr = attempt(_proof, n, b, uneq)
p = pr and pr["p"]
if p:
    m = st.columns(4)
    m[0].metric("max |ring ÷ N − full batch|", f"{p.ring_max_abs_diff:.1e}", border=True)
    m[1].metric(
        "Weighted by shard size", f"{p.weighted_max_abs_diff:.1e}", help="Σ n_r·g_r / Σ n_r"
    )
    m[2].metric("Ring steps", p.ring_steps, help="2(N−1): reduce-scatter, then all-gather.")
    m[3].metric(
        "Shard sizes",
        "/".join(map(str, p.shard_sizes))
        if n <= 6
        else f"{min(p.shard_sizes)} … {max(p.shard_sizes)}",
    )
    if not p.equal_shards:
        st.warning(
            "Unequal shards: the plain average of rank means is off by up to "
            f"{p.ring_max_abs_diff:.2g} (a "
            f"rank with few samples votes like one with many); weighted by sample count: "
            f"{p.weighted_max_abs_diff:.1e}.",
            icon="⚖️",
        )
    side_by_side((pr["grad"], "grad"), (pr["loss"], "loss"))

st.subheader("2 · Scaling: compute + exposed all-reduce, 8 → 512 GPUs")
c = st.columns(4)
size = common.select("Model size (parameters)", SIZES, "7", key="size", where=c[0])
kt = common.slider("Per-GPU batch (×1024 tokens)", 1, 64, 4, key="kt", where=c[1])
gpu = common.select("GPU", {g: g for g in GPU_PRESETS}, "H100 SXM", key="gpu", where=c[2])
g = int(
    common.select(
        "GPUs per node", {str(v): str(v) for v in (1, 2, 4, 8, 16)}, "8", key="gpn", where=c[3]
    )
)
c = st.columns(4)
nic = common.select("NIC", NICS, "InfiniBand NDR", key="nic", where=c[0])
nics = common.slider("NICs per node", 1, 16, 8, key="nics", where=c[1])
kind = common.select(
    "All-reduce", KINDS, "flat ring", key="ar", radio=True, horizontal=True, where=c[2]
)
scale = common.select(
    "Scaling",
    {"weak": "weak", "strong": "strong"},
    "weak",
    key="scale",
    radio=True,
    where=c[3],
    horizontal=True,
    help="Weak: same batch per GPU. Strong: the 8-GPU run's global batch over N.",
)
c = st.columns(4)
ovl = common.toggle(
    "Buckets + overlap", True, key="ovl", where=c[0], help="Off: one all-reduce after backward."
)
bkt = common.slider(
    "Bucket size (MiB)", 1, 1024, 25, key="bkt", where=c[1], help="PyTorch DDP default: 25 MiB"
)
at_n = int(
    common.select("Timeline at N", {str(v): str(v) for v in COUNTS}, "64", key="at", where=c[2])
)
out = attempt(_scaling, size, kt, gpu, g, nic, nics, ovl, bkt, kind, scale, at_n)
if out:
    s, job = out["step"], out["job"]
    m = st.columns(4)
    m[0].metric(f"Step at N={at_n}", format_seconds(s.step_s), border=True)
    m[1].metric(
        "Exposed all-reduce",
        format_seconds(s.exposed_comm_s),
        help=f"{format_seconds(s.comm_s)} in all, {format_seconds(s.hidden_comm_s)} hidden behind "
        "backward",
    )
    m[2].metric("Efficiency", f"{s.efficiency:.0%}", help="compute / step")
    m[3].metric(
        "Bottleneck", format_bandwidth(s.bottleneck_bytes_per_s, bw_units), help=s.bottleneck_link
    )
    st.caption(
        f"{format_count(job.num_params)} parameters × {job.grad_bytes_per_param:g} B (fp32 "
        "gradients) = "
        f"{format_bytes(job.grad_bytes, units)} all-reduced per step; at N={at_n}: "
        f"{s.bottleneck_link}."
    )
    side_by_side((out["figs"][0], "steps"), (out["figs"][1], "eff"))
    common.chart(out["figs"][2], key="timeline")

st.subheader("3 · The scenario: it scaled to 8 GPUs, and 64 is slower")
sn = _scenario(bkt, units, bw_units)
st.markdown(sn["md"])
common.csv_button(sn["rows"], "dp_scenario_8_vs_64.csv")
common.chart(sn["fig"], key="scenario")

st.subheader("4 · Stragglers: the step waits for the slowest rank")
c = st.columns(3)
mu = common.slider("Mean step μ (ms)", 10, 1000, 100, key="mu", where=c[0])
sigma = common.slider("Per-rank jitter σ (ms)", 0.0, 50.0, 5.0, step=0.5, key="sigma", where=c[1])
q = common.slider("Hiccup chance per rank q (%)", 0.0, 10.0, 1.0, step=0.1, key="q", where=c[2])
strag = _stragglers(mu, sigma, q)
common.chart(strag["fig"], key="stragglers")

common.takeaway(
    "Averaging per-rank mean gradients is the full-batch gradient exactly (to float rounding) when "
    "shards are equal; otherwise weight by sample count. Scaling stops when the all-reduce — about "
    "2× "
    "the gradient per rank, whatever N — outgrows the backward it can hide behind: once the ring "
    "leaves "
    "the node the NIC, not NVLink, sets the pace. More tokens per GPU is the fix that always works."
)

st.subheader("How this is computed")
st.markdown(
    "\n\n".join(
        fd.how_computed_lines(
            p, out and out["job"], out and out["step"], strag["c"], units, bw_units
        )
    )
)

st.subheader("Self-check")
name, unit = gib_or_gb(units)
sent = scan_bytes_per_rank([8], unit, ("ring",)).max_bytes_sent["ring"][0] / unit
common.self_check(
    f"Ring all-reduce of a 1 {name} gradient on N = 8 ranks: bytes each rank sends",
    sent,
    key="q1",
    unit=name,
    explanation=f"2(N−1)/N × 1 = {sent:g}: reduce-scatter sends N−1 chunks "
    "of 1/N, all-gather N−1 more (measured by the ring simulator).",
)
ref = _stragglers(100, 5.0, 1.0)["c"]
i = ref.rank_counts.index(64)
common.self_check(
    "Per-rank step time N(μ = 100 ms, σ = 5 ms): expected synchronous step at p = 64",
    ref.expected_step_s[i] * 1e3,
    key="q2",
    rel_tol=0.005,
    unit="ms",
    explanation=f"μ + σ·E[max of 64 N(0,1)] = 100 + 5 × {ref.expected_max_z[i]:.4f}.",
)
common.show_url_notices()
