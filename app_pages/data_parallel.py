"""Data parallelism: why averaging gradients equals one big batch, and when it stops scaling."""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from app_pages import common
from core import data_parallel as dp
from core.hardware import GPU_PRESETS, SCALE_OUT_LINKS, make_cluster
from core.training import Efficiency
from figures import data_parallel as fd
from figures.data_parallel import text as text
from figures.data_parallel.drawing import dp_drawing

COUNTS = (8, 16, 32, 64, 128, 256, 512)
SIZES = {"0.125": "125M", "1.3": "1.3B", "7": "7B", "13": "13B", "70": "70B"}
NICS = common.same(SCALE_OUT_LINKS)
KINDS = {k.value: k.value for k in dp.AllReduceKind}


@dataclass(frozen=True, kw_only=True)
class ScalingRun:
    """The scaling section's controls: the cache key of its curves and figures."""

    size: str  # billions of parameters, a key of SIZES
    kt: int  # per-GPU batch in units of 1,024 tokens
    gpu: str
    gpn: int
    nic: str
    nics: int
    ovl: bool  # buckets overlapped with backward
    bkt: int  # bucket size, MiB
    kind: str  # a key of KINDS
    scale: str  # weak or strong
    at_n: int  # the GPU count whose step and timeline are shown


@st.cache_data(max_entries=64)
def _proof(n: int, b: int, uneq: bool) -> dict:
    problem = dp.make_problem(num_samples=n * b)
    sizes = dp.skewed_shards(n * b, n) if uneq else dp.equal_shards(n * b, n)
    proof, curves = dp.prove_data_parallel(problem, sizes), dp.sgd_curves(problem, sizes)
    return dict(
        p=proof, grad=fd.gradient_proof_figure(proof), loss=fd.loss_curves_figure(curves, sizes)
    )


@st.cache_data(max_entries=64)
def _scaling(c: ScalingRun) -> dict:
    net = dict(gpu_name=c.gpu, inter_link_name=c.nic, nics_per_node=c.nics)
    base = make_cluster(num_nodes=1, gpus_per_node=c.gpn, **net)
    batch = dict(num_params=float(c.size) * 1e9, tokens_per_gpu=c.kt * 1024)
    job = dp.DpJob(bucket_bytes=c.bkt * 2**20 if c.ovl else None, efficiency=Efficiency(), **batch)
    job = replace(job, all_reduce=c.kind)  # every kind at the same achievable link efficiency
    jobs = {k: replace(job, all_reduce=k) for k in KINDS}
    curves = {k: dp.scaling_curve(j, base, COUNTS, scaling=c.scale) for k, j in jobs.items()}
    step = curves[c.kind].steps[COUNTS.index(c.at_n)]
    flip = replace(job, bucket_bytes=None if c.ovl else c.bkt * 2**20)  # bucketing toggled
    other = dp.dp_step(flip, dp.cluster_for(base, c.at_n), tokens_per_gpu=step.tokens_per_gpu)
    figs = (fd.step_time_figure(curves[c.kind]), fd.efficiency_figure(curves))
    return dict(job=job, step=step, other=other, figs=figs + (fd.bucket_timeline_figure(step),))


@st.cache_data(max_entries=16)
def _scenario(bkt: int, units: str, bw_units: str) -> dict:
    s = dp.slower_at_scale(bucket_bytes=bkt * 2**20)
    rows = [
        dict(zip(("quantity", f"{s.small.num_gpus} GPUs", f"{s.large.num_gpus} GPUs"), r))
        for r in fd.scenario_rows(s, units, bw_units)
    ]
    md = fd.scenario_markdown(s, dp.scenario_cluster(), units, bw_units)
    return dict(md=md, fig=fd.scenario_figure(s), rows=rows)


@st.cache_data(max_entries=64)
def _stragglers(mu_ms: float, sigma_ms: float, q_pct: float) -> dict:
    c = dp.straggler_curve(mean_step_s=mu_ms / 1e3, jitter_s=sigma_ms / 1e3, slow_prob=q_pct / 100)
    return dict(c=c, fig=fd.straggler_figure(c))


q = "Why is averaging gradients across GPUs the same as one big batch, and when does it stop?"
common.start_page("Data parallelism", q)
common.walk("data_parallel")
units, bw_units = common.settings().memory_units.value, common.settings().bandwidth_units.value
st.subheader("1 · The proof: N ranks, one gradient")
c = st.columns([1, 1, 1.2])
n = common.slider("N (simulated ranks)", 2, 16, 4, key="n", where=c[0])
b = common.slider("Samples per rank", 1, 32, 12, key="b", where=c[1])
tip = "e.g. variable-length sequences per rank"
uneq = common.toggle("Unequal shards", False, key="uneq", where=c[2], help=tip)
st.caption(text.PROOF_CAPTION)
pr = common.attempt(_proof, n, b, uneq)
if p := pr and pr["p"]:
    common.metrics(text.proof_metrics(p))
    if not p.equal_shards:
        st.warning(text.unequal_warning(p), icon="⚖️")
    common.chart(dp_drawing(p), key="dp_draw")
    common.charts((pr["grad"], "grad"), (pr["loss"], "loss"))

st.subheader("2 · Scaling: compute + exposed all-reduce, 8 → 512 GPUs")
c = st.columns(4)
size = common.select("Model size (parameters)", SIZES, "7", key="size", where=c[0])
kt = common.slider("Per-GPU batch (×1024 tokens)", 1, 64, 4, key="kt", where=c[1])
gpu = common.select("GPU", {g: g for g in GPU_PRESETS}, "H100 SXM", key="gpu", where=c[2])
gpns = {str(v): str(v) for v in (1, 2, 4, 8, 16)}
gpn = int(common.select("GPUs per node", gpns, "8", key="gpn", where=c[3]))
c = st.columns(4)
nic = common.select("NIC", NICS, "InfiniBand NDR", key="nic", where=c[0])
nics = common.slider("NICs per node", 1, 16, 8, key="nics", where=c[1])
radio = dict(radio=True, horizontal=True)
kind = common.select("All-reduce", KINDS, "NCCL", key="ar", where=c[2], **radio)
tip = "Weak: same batch per GPU. Strong: the 8-GPU run's global batch over N."
scales = {"weak": "weak", "strong": "strong"}
scale = common.select("Scaling", scales, "weak", key="scale", where=c[3], help=tip, **radio)
c = st.columns(4)
tip = "Off: one all-reduce after backward."
ovl = common.toggle("Buckets + overlap", True, key="ovl", where=c[0], help=tip)
tip = "PyTorch DDP default: 25 MiB"
bkt = common.slider("Bucket size (MiB)", 1, 1024, 25, key="bkt", where=c[1], help=tip)
ats = {str(v): str(v) for v in COUNTS}
at_n = int(common.select("Timeline at N", ats, "64", key="at", where=c[2]))
controls = dict(size=size, kt=kt, gpu=gpu, gpn=gpn, nic=nic, nics=nics, ovl=ovl, bkt=bkt)
if out := common.attempt(_scaling, ScalingRun(kind=kind, scale=scale, at_n=at_n, **controls)):
    common.metrics(text.scaling_metrics(out["step"], at_n, bw_units))
    st.caption(text.scaling_caption(out["job"], out["step"], at_n, units, out["other"]))
    common.charts((out["figs"][0], "steps"), (out["figs"][1], "eff"))
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

common.takeaway(text.TAKEAWAY)
job, step = out and out["job"], out and out["step"]
common.how_computed(text.how_computed(p, job, step, strag["c"], units, bw_units))
common.self_checks(text.self_checks(units, _stragglers(100, 5.0, 1.0)["c"]))
common.show_url_notices()
