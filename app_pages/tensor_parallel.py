"""Tensor parallelism: how one layer's math splits across GPUs, and why TP stays inside a node."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core import tensor_parallel as tc
from core import tensor_parallel as tpc
from core.hardware import GPU_PRESETS, LINK_PRESETS, make_cluster
from core.model import MODEL_PRESETS, preset
from core.units import bytes_in, format_bytes
from figures import tensor_parallel as ft

# One toy layer for the proof and the heatmaps: 24 heads (so TP = 1, 2, 3, 4, 6 and 8 all get whole
# heads) of dimension 1, FFN = 4h, 24 tokens (sequence parallelism splits them too).
TOY = dict(hidden=24, heads=24, ffn=96, tokens=24)
MODELS = {name: name.split(" (")[0] for name in MODEL_PRESETS}
NICS = {n: n for n, link in LINK_PRESETS.items() if link.latency_s >= 1e-5}  # scale-out links only
GPN = 8  # GPUs per node in the sweep's cluster (DGX/HGX)
MFU = 0.5  # achieved fraction of dense peak for the layer's compute


def _proofs(tp: int) -> list:
    h, a, f, n = TOY["hidden"], TOY["heads"], TOY["ffn"], TOY["tokens"]
    attn = tpc.prove_tp_attention(tp=tp, batch=2, seq=n // 2, hidden=h, heads=a)  # heads rule first
    return [
        tpc.prove_tp_mlp(tp=tp, tokens=n, hidden=h, ffn=f),
        attn,
        tpc.prove_sequence_parallel_mlp(tp=tp, tokens=n, hidden=h, ffn=f),
    ]


@st.cache_data(max_entries=64)
def _proof(tp: int, sp: bool) -> dict:
    h, a, f, n = TOY["hidden"], TOY["heads"], TOY["ffn"], TOY["tokens"]
    proofs = _proofs(tp)
    own = tpc.mlp_ownership(tp=tp, tokens=n, hidden=h, ffn=f, sequence_parallel=sp)
    return dict(
        fwd=max(p.forward_max_abs_diff for p in proofs),
        bwd=max(p.backward_max_abs_diff for p in proofs),
        own=ft.ownership_figure(
            own,
            tp=tp,
            what="MLP above, attention below" + ", sequence parallel" * sp,
            below=tpc.attention_ownership(tp=tp, hidden=h, heads=a),
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
    m = preset(model)
    plans = tc.plans_by_mode(m, tp=tp, micro_batch=mb, seq_len=seq, sequence_parallel=sp)
    links = tuple(dict.fromkeys((GPU_PRESETS[gpu].scale_up_link, "PCIe 5 x16", nic)))
    times = tc.link_comparison(
        m,
        GPU_PRESETS[gpu],
        tp=tp,
        micro_batch=mb,
        seq_len=seq,
        links=links,
        mfu=MFU,
        sequence_parallel=sp,
    )
    return dict(
        plan=plans[sp],
        rows=ft.comm_plan_rows(list(plans.values()), units),
        times=times,
        fig=ft.comm_vs_compute_figure(times, tp=tp),
    )


@st.cache_data(max_entries=64)
def _sweep(model: str, mb: int, seq: int, gpu: str, nic: str, nics: int) -> dict:
    cluster = make_cluster(
        num_nodes=4, gpus_per_node=GPN, gpu_name=gpu, inter_link_name=nic, nics_per_node=nics
    )
    pts = tc.tp_sweep(preset(model), cluster, micro_batch=mb, seq_len=seq, mfu=MFU)
    return dict(
        fig=ft.tp_sweep_figure(pts, gpus_per_node=GPN), note=ft.node_boundary_note(pts, GPN)
    )


def attempt(fn, *args):
    """fn(*args), or None after showing the rule it broke (the rest of the page still draws)."""
    try:
        return fn(*args)
    except ValueError as err:
        st.error(str(err), icon="🚫")


common.start_page(
    "Tensor parallelism",
    "How does one layer's math split across GPUs exactly, and why does TP stay inside a node?",
)
c = st.columns(4)
tp = common.slider("TP degree", 1, 8, 2, key="tp", where=c[0])
model = common.select("Model", MODELS, "GPT-3 175B", key="model", where=c[1])
mb = common.slider("Micro-batch b (sequences)", 1, 16, 1, key="mb", where=c[2])
seq = common.slider("Sequence length s", 256, 32768, 2048, step=256, key="seq", where=c[3])
c = st.columns(4)
gpu = common.select("GPU", {g: g for g in GPU_PRESETS}, "H100 SXM", key="gpu", where=c[0])
nic = common.select("NIC", NICS, "InfiniBand NDR", key="nic", where=c[1])
nics = common.slider("NICs per node (sweep)", 1, 8, 8, key="nics", where=c[2])
sp = common.toggle(
    "Sequence parallel",
    False,
    key="sp",
    where=c[3],
    help="Korthikanti et al. 2022: each all-reduce becomes reduce-scatter + all-gather.",
)
units = common.memory_units().value

st.subheader("1 · The split, proved with arrays")
st.caption(
    f"A toy layer: h = {TOY['hidden']}, {TOY['heads']} heads (whole heads for TP = 1, 2, 3, 4, 6, "
    "8), "
    f"FFN = {TOY['ffn']}, {TOY['tokens']} tokens. MLP: W1 split by columns, so GeLU runs locally; "
    "W2 by "
    "rows, so each GPU holds a partial Y and one all-reduce (g) sums them. Attention: each GPU "
    "owns whole "
    "heads (Wq, Wk, Wv by columns, Wo by rows). Partial sums go through the numpy ring all-reduce "
    "simulator."
)
pr = attempt(_proof, tp, sp)
if pr:
    m = st.columns(3)
    m[0].metric("Forward: max |Y − Y_unsharded|", f"{pr['fwd']:.1e}", border=True)
    m[1].metric(
        "Backward: max |grad difference|",
        f"{pr['bwd']:.1e}",
        border=True,
        help="dX and every weight gradient, all ranks' copies.",
    )
    m[2].metric(
        "Share of each weight per GPU", f"1/{tp}", help="W1, W2, Wq, Wk, Wv, Wo all split t ways."
    )
common.chart(_proof_sweep(), key="proof")
if pr:
    common.chart(pr["own"], key="own")

st.subheader("2 · Where the communication goes")
st.markdown(
    "| operator | forward | backward | where |\n|---|---|---|---|\n"
    "| **f** | identity (X is already on every GPU) | all-reduce of dX | before attention and MLP "
    "|\n"
    "| **g** | all-reduce of the partial Y | identity | after attention and MLP |\n"
    "| **g**, sequence parallel | all-gather tokens in; reduce-scatter out | reduce-scatter; "
    "all-gather "
    "| the same places, same bytes; activations between blocks stay 1/t per GPU |"
)
cm = attempt(_comm, model, tp, mb, seq, gpu, nic, sp, units)
if cm:
    pl = cm["plan"]
    m = st.columns(4)
    m[0].metric(
        "Collectives per layer per step", pl.collectives_per_layer, help="forward + backward"
    )
    m[1].metric(
        f"Bytes per {'RS / AG' if sp else 'all-reduce'} (b·s·h·2)",
        format_bytes(pl.message_bytes, units),
        border=True,
    )
    m[2].metric("Sent per GPU per layer", format_bytes(pl.bytes_sent_per_gpu_per_layer, units))
    m[3].metric(
        f"Per step ({pl.num_layers} layers)", format_bytes(pl.bytes_sent_per_gpu_per_step, units)
    )
    st.table(cm["rows"])
    common.csv_button(cm["rows"], f"tp_comm_{model.split()[0]}_tp{tp}.csv")
    st.subheader("3 · Comm time per layer on each link, beside compute")
    common.chart(cm["fig"], key="links")

st.subheader("4 · TP degree sweep: the node boundary")
sw = attempt(_sweep, model, mb, seq, gpu, nic, nics)
if sw:
    common.chart(sw["fig"], key="sweep")
    st.markdown(f"With {GPN} GPUs per node and {nics}× {nic} per node: {sw['note']}")

common.takeaway(
    "Column-then-row splitting makes each GPU's slice independent until one sum: the sharded layer "
    "equals "
    "the unsharded one to float rounding. The price is 4 all-reduces of b·s·h activations per "
    "layer per "
    "step, on the critical path and growing relative to compute as TP rises — affordable on "
    "NVLink, not "
    "over PCIe or the network. So TP stays inside the node."
)

st.subheader("How this is computed")
for formula, measured in ft.how_computed_lines(
    pr and (pr["fwd"], pr["bwd"]), cm and cm["plan"], cm and cm["times"], MFU, units
):
    st.markdown(formula)
    st.markdown(measured)

st.subheader("Self-check")
unit = "MiB" if units == "binary" else "MB"
msg = tc.tp_comm_plan(preset("Llama-2 7B"), tp=1, micro_batch=1, seq_len=4096).message_bytes
common.self_check(
    "Bytes per TP all-reduce for b = 1, s = 4096, h = 4096 (Llama-2 7B) in bf16",
    bytes_in(msg, unit),
    key="q1",
    unit=unit,
    explanation="b·s·h elements × 2 bytes.",
)
common.self_check(
    "How many TP all-reduces does one layer run per training step (no recompute)?",
    tc.tp_comm_plan(preset("Llama-2 7B"), tp=2, micro_batch=1, seq_len=4096).collectives_per_layer,
    key="q2",
    rel_tol=0.0,
    explanation="2 forward (g after attention and MLP) + 2 backward (f before them).",
)
common.show_url_notices()
