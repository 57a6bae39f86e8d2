"""Tensor parallelism: how one layer's math splits across GPUs, and why TP stays inside a node."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core import tensor_parallel as tc
from core.hardware import GPU_PRESETS, SCALE_OUT_LINKS, link, make_cluster
from core.model import MODEL_PRESETS, preset
from figures import tensor_parallel as ft
from figures.tensor_parallel import text as text
from figures.tensor_parallel.drawing import tp_drawing
from figures.tensor_parallel.text import TOY

MODELS = {name: name.split(" (")[0] for name in MODEL_PRESETS}
NICS = common.same(SCALE_OUT_LINKS)
GPN = 8  # GPUs per node in the sweep's cluster (DGX/HGX)
MFU = 0.5  # achieved fraction of dense peak for the layer's compute


def _proofs(tp: int) -> list:
    h, a, f, n = TOY["hidden"], TOY["heads"], TOY["ffn"], TOY["tokens"]
    attn = tc.prove_tp_attention(tp=tp, batch=2, seq=n // 2, hidden=h, heads=a)  # heads rule first
    return [
        tc.prove_tp_mlp(tp=tp, tokens=n, hidden=h, ffn=f),
        attn,
        tc.prove_sequence_parallel_mlp(tp=tp, tokens=n, hidden=h, ffn=f),
    ]


@st.cache_data(max_entries=64)
def _proof(tp: int, sp: bool) -> dict:
    h, a, f, n = TOY["hidden"], TOY["heads"], TOY["ffn"], TOY["tokens"]
    proofs = _proofs(tp)
    own = tc.mlp_ownership(tp=tp, tokens=n, hidden=h, ffn=f, sequence_parallel=sp)
    return dict(
        fwd=max(p.forward_max_abs_diff for p in proofs),
        bwd=max(p.backward_max_abs_diff for p in proofs),
        own=ft.ownership_figure(
            own,
            tp=tp,
            what="MLP above, attention below" + ", sequence parallel" * sp,
            below=tc.attention_ownership(tp=tp, hidden=h, heads=a),
        ),
    )


@st.cache_data
def _proof_sweep() -> dict:
    """Every TP degree of the slider at once: the chart stays put while the slider moves."""
    ok = [t for t in range(1, 9) if TOY["heads"] % t == 0]
    return ft.proof_sweep_figure(
        {t: _proofs(t) for t in ok}, skipped=tuple(t for t in range(1, 9) if t not in ok)
    )


@st.cache_data(max_entries=64)
def _comm(model: str, tp: int, mb: int, seq: int, gpu: str, nic: str, sp: bool, units: str) -> dict:
    m, shape = preset(model), dict(tp=tp, micro_batch=mb, seq_len=seq, sequence_parallel=sp)
    plans = tc.plans_by_mode(m, **shape)
    links = tuple(dict.fromkeys((GPU_PRESETS[gpu].scale_up_link, "PCIe 5 x16", nic)))
    times = tc.link_comparison(m, GPU_PRESETS[gpu], links=links, mfu=MFU, **shape)
    return dict(
        plan=plans[sp],
        rows=ft.comm_plan_rows(list(plans.values()), units),
        times=times,
        fig=ft.comm_vs_compute_figure(times, tp=tp),
    )


@st.cache_data(max_entries=64)
def _sweep(model: str, mb: int, seq: int, gpu: str, nic: str) -> dict:
    """Two views, one NIC count each: DGX-class (one NIC per GPU) and thin (one per node)."""
    out = {}
    for nics, view in ((GPN, "DGX-class"), (1, "thin network")):
        net = dict(gpu_name=gpu, inter_link_name=nic, nics_per_node=nics)
        cluster = make_cluster(num_nodes=4, gpus_per_node=GPN, **net)
        pts = tc.tp_sweep(preset(model), cluster, micro_batch=mb, seq_len=seq, mfu=MFU)
        view = f"{view}: {nics}× {nic} per node"
        fig = ft.tp_sweep_figure(pts, gpus_per_node=GPN, view=view)
        out[nics] = dict(pts=pts, fig=fig, note=ft.node_boundary_note(pts, GPN))
    links = (link(GPU_PRESETS[gpu].scale_up_link), link(nic))
    out["lessons"] = ft.boundary_lessons(out[GPN]["pts"], out[1]["pts"], GPN, *links)
    return out


common.start_page(
    "Tensor parallelism",
    "How does one layer's math split across GPUs exactly, and why does TP stay inside a node?",
)
common.walk("tensor_parallel")
c = st.columns(4)
tp = common.slider("TP degree", 1, 8, 2, key="tp", where=c[0])
model = common.select("Model", MODELS, "GPT-3 175B", key="model", where=c[1])
mb = common.slider("Micro-batch b (sequences)", 1, 16, 1, key="mb", where=c[2])
seq = common.slider("Sequence length s", 256, 32768, 2048, step=256, key="seq", where=c[3])
c = st.columns(3)
gpu = common.select("GPU", {g: g for g in GPU_PRESETS}, "H100 SXM", key="gpu", where=c[0])
nic = common.select("NIC", NICS, "InfiniBand NDR", key="nic", where=c[1])
sp_help = "Korthikanti et al. 2022: each all-reduce becomes reduce-scatter + all-gather."
sp = common.toggle("Sequence parallel", False, key="sp", where=c[2], help=sp_help)
units = common.settings().memory_units.value

st.subheader("1 · The split, proved with arrays")
st.caption(text.TOY_CAPTION)
if pr := common.attempt(_proof, tp, sp):
    draw = dict(tp=tp, tokens=TOY["tokens"], hidden=TOY["hidden"], ffn=TOY["ffn"])
    common.chart(tp_drawing(**draw), key="tp_draw")
    common.metrics(text.proof_metrics(pr["fwd"], pr["bwd"], tp))
    common.chart(pr["own"], key="own")
common.chart(_proof_sweep(), key="proof")  # float rounding only: below the picture

st.subheader("2 · Where the communication goes")
st.markdown(text.OPERATORS)
if cm := common.attempt(_comm, model, tp, mb, seq, gpu, nic, sp, units):
    common.metrics(text.comm_metrics(cm["plan"], sp, units))
    st.table(cm["rows"])
    common.csv_button(cm["rows"], f"tp_comm_{model.split()[0]}_tp{tp}.csv")
    st.subheader("3 · Comm time per layer on each link (one port or NIC per GPU), beside compute")
    common.chart(cm["fig"], key="links")

st.subheader("4 · TP degree sweep: the node boundary, DGX-class and thin")
if sw := common.attempt(_sweep, model, mb, seq, gpu, nic):
    for nics in (GPN, 1):
        common.chart(sw[nics]["fig"], key=f"sweep{nics}")
        st.markdown(text.sweep_note(GPN, nics, nic, sw[nics]["note"]))
    st.markdown(sw["lessons"])

common.takeaway(text.TAKEAWAY)
proof = pr and (pr["fwd"], pr["bwd"])
common.how_computed(text.how_computed(proof, cm and cm["plan"], cm and cm["times"], MFU, units))
common.self_checks(text.self_checks(units))
common.show_url_notices()
