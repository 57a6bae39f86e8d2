"""The data-parallel page's cached builders: the proof, the scaling sweep, the 8 → 64 scenario and
the straggler curve, each from the core and drawn by figures.data_parallel. Kept apart from
app_pages/data_parallel.py so the page stays within its line budget."""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from core import data_parallel as dp
from core.hardware import make_cluster
from core.training import Efficiency
from figures import data_parallel as fd

COUNTS = (8, 16, 32, 64, 128, 256, 512)
KINDS = {k.value: k.value for k in dp.AllReduceKind}


@dataclass(frozen=True, kw_only=True)
class ScalingRun:
    """The scaling section's controls: the cache key of its curves and figures."""

    size: str  # billions of parameters
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


@st.cache_data(max_entries=64, show_spinner=False)
def proof(n: int, b: int, uneq: bool) -> dict:
    problem = dp.make_problem(num_samples=n * b)
    sizes = dp.skewed_shards(n * b, n) if uneq else dp.equal_shards(n * b, n)
    p, curves = dp.prove_data_parallel(problem, sizes), dp.sgd_curves(problem, sizes)
    return dict(p=p, grad=fd.gradient_proof_figure(p), loss=fd.loss_curves_figure(curves, sizes))


@st.cache_data(max_entries=64, show_spinner=False)
def scaling(c: ScalingRun) -> dict:
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


@st.cache_data(max_entries=16, show_spinner=False)
def scenario(bkt: int, units: str, bw_units: str) -> dict:
    s = dp.slower_at_scale(bucket_bytes=bkt * 2**20)
    rows = [
        dict(zip(("quantity", f"{s.small.num_gpus} GPUs", f"{s.large.num_gpus} GPUs"), r))
        for r in fd.scenario_rows(s, units, bw_units)
    ]
    md = fd.scenario_markdown(s, dp.scenario_cluster(), units, bw_units)
    return dict(md=md, fig=fd.scenario_figure(s), rows=rows)


@st.cache_data(max_entries=64, show_spinner=False)
def stragglers(mu_ms: float, sigma_ms: float, q_pct: float) -> dict:
    c = dp.straggler_curve(mean_step_s=mu_ms / 1e3, jitter_s=sigma_ms / 1e3, slow_prob=q_pct / 100)
    return dict(c=c, fig=fd.straggler_figure(c))
