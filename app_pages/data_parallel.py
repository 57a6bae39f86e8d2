"""Data parallelism: why averaging gradients equals one big batch, and when it stops scaling.

Each numbered section is an `st.fragment` (issue 18): its sliders rerun it alone, and it writes
its own "How this is computed" lines into a slot at the page's end (app_pages/common/sections.py).
"""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common import dp_data as data
from app_pages.common import sections
from app_pages.common.fold import cells
from core.hardware import GPU_PRESETS, SCALE_OUT_LINKS
from figures import data_parallel as fd
from figures.data_parallel import text as text
from figures.data_parallel.drawing import dp_drawing

SIZES = {"0.125": "125M", "1.3": "1.3B", "7": "7B", "13": "13B", "70": "70B"}
NICS = common.same(SCALE_OUT_LINKS)
RADIO = dict(radio=True, horizontal=True)


@st.fragment
def proof_section(how) -> None:
    common.sections.follow_page()  # args from a page run that finished
    top = sections.chart_slot(common.settings().presenter)  # presenting: above the heading too
    st.subheader("1 · The proof: N ranks, one gradient")
    c = cells(3)
    n = common.slider("N (simulated ranks)", 2, 16, 4, key="n", where=c[0])
    b = common.slider("Samples per rank", 1, 32, 12, key="b", where=c[1])
    tip = "e.g. variable-length sequences per rank"
    uneq = common.toggle("Unequal shards", False, key="uneq", where=c[2], help=tip)
    pr = common.attempt(data.proof, n, b, uneq)
    if p := pr and pr["p"]:
        with top or st.container():
            common.chart(dp_drawing(p), key="dp_draw")
        st.caption(text.PROOF_CAPTION)
        common.metrics(text.proof_metrics(p))
        if not p.equal_shards:
            st.warning(text.unequal_warning(p), icon="⚖️")
        common.charts((pr["grad"], "grad"), (pr["loss"], "loss"))
    how.markdown("\n\n".join(fd.how_computed_lines(p, None, None, None, units, bw_units)))


@st.fragment(key="dp_scaling")
def scaling_section(how) -> None:
    common.sections.follow_page()  # args from a page run that finished
    st.subheader("2 · Scaling: compute + exposed all-reduce, 8 → 512 GPUs")
    c = cells(4)
    size = common.select("Model size (parameters)", SIZES, "7", key="size", where=c[0])
    kt = common.slider("Per-GPU batch (×1024 tokens)", 1, 64, 4, key="kt", where=c[1])
    nic = common.select("NIC", NICS, "InfiniBand NDR", key="nic", where=c[2])
    ats = common.same(data.COUNTS)
    at_n = int(common.select("Timeline at N", ats, "64", key="at", where=c[3]))
    summary = st.empty()
    with st.expander("More settings: GPU, node, NICs, all-reduce, weak/strong, buckets"):
        c = cells(4)
        gpu = common.select("GPU", common.same(GPU_PRESETS), "H100 SXM", key="gpu", where=c[0])
        gpns = common.same((1, 2, 4, 8, 16))
        gpn = int(common.select("GPUs per node", gpns, "8", key="gpn", where=c[1]))
        nics = common.slider("NICs per node", 1, 16, 8, key="nics", where=c[2])
        kind = common.select("All-reduce", data.KINDS, "NCCL", key="ar", where=c[3], **RADIO)
        c = cells(4)
        tip = "Weak: same batch per GPU. Strong: the 8-GPU run's global batch over N."
        scales = common.same(("weak", "strong"))
        scale = common.select("Scaling", scales, "weak", key="scale", where=c[0], help=tip, **RADIO)
        tip = "Off: one all-reduce after backward."
        ovl = common.toggle("Buckets + overlap", True, key="ovl", where=c[1], help=tip)
        tip = "PyTorch DDP default: 25 MiB"
        again = sections.rerun("dp_scaling", "dp_scenario")  # § 3 reads the bucket size
        bkt = common.slider(
            "Bucket size (MiB)", 1, 1024, 25, key="bkt", where=c[2], help=tip, on_change=again
        )
    summary.caption(text.settings_summary(gpu, gpn, nics, kind, scale, ovl, bkt))
    sections.share("bkt", bkt)
    controls = dict(size=size, kt=kt, gpu=gpu, gpn=gpn, nic=nic, nics=nics, ovl=ovl, bkt=bkt)
    run = data.ScalingRun(kind=kind, scale=scale, at_n=at_n, **controls)
    job = step = None
    if out := common.attempt(data.scaling, run):
        job, step = out["job"], out["step"]
        common.metrics(text.scaling_metrics(step, at_n, bw_units))
        st.caption(text.scaling_caption(job, step, at_n, units, out["other"]))
        common.charts((out["figs"][0], "steps"), (out["figs"][1], "eff"))
        common.chart(out["figs"][2], key="timeline")
    how.markdown("\n\n".join(fd.how_computed_lines(None, job, step, None, units, bw_units)))


@st.fragment(key="dp_scenario")
def scenario_section() -> None:
    common.sections.follow_page()  # args from a page run that finished
    st.subheader("3 · The scenario: it scaled to 8 GPUs, and 64 is slower")
    sn = data.scenario(sections.shared("bkt", 25), units, bw_units)
    st.markdown(sn["md"])
    common.csv_button(sn["rows"], "dp_scenario_8_vs_64.csv")
    common.chart(sn["fig"], key="scenario")


@st.fragment
def straggler_section(how) -> None:
    common.sections.follow_page()  # args from a page run that finished
    st.subheader("4 · Stragglers: the step waits for the slowest rank")
    c = cells(3)
    mu = common.slider("Mean step μ (ms)", 10, 1000, 100, key="mu", where=c[0])
    sigma = common.slider(
        "Per-rank jitter σ (ms)", 0.0, 50.0, 5.0, step=0.5, key="sigma", where=c[1]
    )
    q = common.slider("Hiccup chance per rank q (%)", 0.0, 10.0, 1.0, step=0.1, key="q", where=c[2])
    strag = data.stragglers(mu, sigma, q)
    common.chart(strag["fig"], key="stragglers")
    how.markdown("\n\n".join(fd.how_computed_lines(None, None, None, strag["c"], units, bw_units)))


q = "Why is averaging gradients across GPUs the same as one big batch, and when does it stop?"
common.start_page("Data parallelism", q)
common.walk("data_parallel")
units, bw_units = common.settings().memory_units.value, common.settings().bandwidth_units.value
s1, s2, s3, s4, tail = (st.container() for _ in range(5))
with tail:
    common.takeaway(text.takeaway(common.settings().presenter))
    st.subheader("How this is computed")
    how = [st.empty() for _ in range(3)]
    common.self_checks(text.self_checks(units, data.stragglers(100, 5.0, 1.0)["c"]))
with s1:
    proof_section(how[0])
with s2:
    scaling_section(how[1])
with s3:
    scenario_section()
with s4:
    straggler_section(how[2])
common.show_url_notices()
