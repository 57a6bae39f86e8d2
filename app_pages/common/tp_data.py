"""The tensor-parallel page's cached builders: the toy layer's proofs and ownership maps, the
per-layer communication plan, the TP-degree sweep. Kept apart from app_pages/tensor_parallel.py so
the page stays within its line budget and the builders are made once per process (a cached
function defined in a page file is re-created, source hashed, on every whole rerun)."""

from __future__ import annotations

import streamlit as st

from core import tensor_parallel as tc
from core.hardware import GPU_PRESETS, link, make_cluster
from core.model import preset
from figures import tensor_parallel as ft
from figures.tensor_parallel.text import TOY

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


@st.cache_data(max_entries=64, show_spinner=False)
def proof(tp: int, sp: bool) -> dict:
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


@st.cache_data(show_spinner=False)
def proof_sweep() -> dict:
    """Every TP degree of the slider at once: the chart stays put while the slider moves."""
    ok = [t for t in range(1, 9) if TOY["heads"] % t == 0]
    return ft.proof_sweep_figure(
        {t: _proofs(t) for t in ok}, skipped=tuple(t for t in range(1, 9) if t not in ok)
    )


@st.cache_data(max_entries=64, show_spinner=False)
def comm(model: str, tp: int, mb: int, seq: int, gpu: str, nic: str, sp: bool, units: str) -> dict:
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


@st.cache_data(max_entries=64, show_spinner=False)
def sweep(model: str, mb: int, seq: int, gpu: str, nic: str) -> dict:
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
