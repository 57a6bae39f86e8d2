"""Memory: will this model train on these GPUs, and what does each parallelism choice save?"""
from __future__ import annotations

from urllib.parse import quote, urlencode

import pandas as pd
import streamlit as st

from core import memory as cm
from core.hardware import GPU_PRESETS
from core.model import ModelSpec, ParamsOnly, preset
from core.units import bytes_in, format_bytes, format_count, gib_or_gb
from figures import memory as fm
from app_pages import common

ZERO = {"0": "0", "1": "1", "2": "2", "3": "3", "hsdp": "HSDP"}  # URL value zero=3 etc.
NAMES = {str(z): name for z, name in cm.ZERO_STAGE_LABELS.items()} | {"hsdp": "HSDP"}
SHAPE = [("Layers", "L", 32), ("Hidden", "h", 4096), ("Heads", "a", 32), ("KV heads", "kv", 32),
         ("FFN", "f", 11008), ("Vocab", "V", 32000)]  # custom shape defaults: Llama-2 7B
SEEDS = [{"model": "N parameters", "n": 70, "dp": 1, "zero": 0},  # the sizing questions' settings
         {"model": "Llama-2 70B", "dp": 16, "zero": 3, "rc": "full"},
         {"model": "Llama-2 13B", "dp": 8, "zero": 3}]


def _model(spec: tuple):
    kind, *v = spec
    if kind == "params":
        return ParamsOnly(num_params=round(v[0] * 1e9), name=f"{v[0]:g}B parameters")
    if kind == "custom":  # Llama-style: SwiGLU, RMSNorm, untied embeddings
        names = ("num_layers", "hidden_size", "num_heads", "num_kv_heads", "ffn_hidden_size", "vocab_size")
        return ModelSpec(name="custom", **dict(zip(names, v)), gated_mlp=True, tied_embeddings=False)
    return preset(kind)


@st.cache_data(max_entries=64)
def _compute(spec, dp, tp, pp, zero, sp, mb, seq, recipe, rc, flash, gpu, reserve_pct, units) -> dict:
    """Every number and figure of the page for one setting (plain values in, plain data out)."""
    model, cap = _model(spec), GPU_PRESETS[gpu].hbm_bytes
    reserve, z, shard = cap * reserve_pct / 100, int(zero.replace("hsdp", "3")), None
    if zero == "hsdp":  # HYBRID_SHARD: shard over the DP ranks of one 8-GPU node, replicate across nodes
        shard = cm.fsdp_to_zero("HYBRID_SHARD", dp, max(1, 8 // tp))[1]
    par = cm.ParallelConfig(dp=dp, tp=tp, pp=pp, zero_stage=z, sequence_parallel=sp, shard_degree=shard)
    tr = cm.TrainingConfig(micro_batch=mb, seq_len=seq, num_microbatches=pp, recipe=recipe, recompute=rc,
                           flash_attention=flash)  # 1F1B with ≥ PP micro-batches: stage r holds PP − r
    res = cm.memory_by_zero_stage(model, par, tr)
    ch, shaped = res[z], isinstance(model, ModelSpec)
    comm = tuple(cm.zero_comm_bytes_per_gpu(ch.params_on_gpu, shard or dp, s, recipe) for s in (0, z))
    gather = cm.layer_allgather_bytes(model, tp, recipe) if shaped else None
    return dict(ch=ch, cap=cap, used=ch.total_bytes + reserve, ok=cm.fits(ch.total_bytes, cap, reserve),
                n=model.num_params, nd=shard or dp,
                whole=cm.model_state_bytes_per_gpu(model.num_params, 1, 0, recipe).total_bytes,
                states=[r.parameters_bytes + r.gradients_bytes + r.optimizer_bytes for r in res],
                bars=fm.zero_stages_figure(res, cap, reserve, units, gpu),
                stages=pp > 1 and fm.pipeline_stages_figure(ch, cap, reserve, units, gpu),
                fits=fm.fits_rows(cm.what_fits(model, par, tr, cap, reserve), dp, tp, pp),
                trade=shaped and fm.recompute_tradeoff_figure(cm.recompute_tradeoff(model, par, tr), units),
                how=fm.how_computed_markdown(res, ch, comm, gather, NAMES[zero], units, model))


_seeds = st.cache_data(max_entries=4)(fm.sizing_questions)

common.start_page("Memory per GPU", "Will this model train on these GPUs, and what does each choice — DP, TP, "
                  "PP, ZeRO stage, recompute, micro-batch — save?")
c = st.columns(4)
dp = common.slider("DP (data-parallel ranks)", 1, 1024, 8, key="dp", where=c[0])
tp = common.slider("TP (tensor-parallel ranks)", 1, 64, 1, key="tp", where=c[1])
pp = common.slider("PP (pipeline stages)", 1, 64, 1, key="pp", where=c[2])
zero = common.select("ZeRO stage", ZERO, "3", key="zero", radio=True, horizontal=True, where=c[3],
                     help="HSDP = HYBRID_SHARD: ZeRO-3 inside an 8-GPU node (8/TP ranks), replicated across.")
st.caption("ZeRO stage ↔ PyTorch: 0 = DDP / FSDP NO_SHARD · 1 = ZeroRedundancyOptimizer · 2 = SHARD_GRAD_OP"
           " · 3 = FULL_SHARD · HSDP = HYBRID_SHARD (ZeRO-3 inside a node, replicated across nodes)")
c = st.columns(4)
model_key = common.select("Model", fm.MODEL_LABELS, "Llama-2 13B", key="model", where=c[0])
recipe = common.select("Bytes per parameter (recipe)", fm.RECIPE_LABELS, "mixed_adam", key="recipe",
                       where=c[1], help=fm.RECIPE_HELP)
gpu = common.select("GPU", {g: g for g in GPU_PRESETS}, "H100 SXM", key="gpu", where=c[2])
reserve = common.slider("Reserve (% of HBM)", 0, 50, 5, key="reserve", where=c[3],
                        help="Temporaries, CUDA context, communication buffers, allocator fragmentation.")
c = st.columns(4)
mb = common.slider("Micro-batch (sequences)", 1, 64, 1, key="mb", where=c[0])
seq = common.slider("Sequence length (tokens)", 256, 131072, 4096, step=256, key="seq", where=c[1])
rc = common.select("Activation recompute", {m: m for m in cm.RECOMPUTE_MODES}, "none", key="rc",
                   radio=True, horizontal=True, where=c[2])
sp = common.toggle("Sequence parallel", False, key="sp", where=c[3])
flash = common.toggle("Flash attention", True, key="flash", where=c[3], help="Never stores the s² scores.")
spec: tuple = (model_key,)
if model_key == "custom":
    spec = ("custom", *(common.number(lbl, 1, 10**7, d, key=k, step=1, where=col)
                        for (lbl, k, d), col in zip(SHAPE, st.columns(len(SHAPE)))))
elif model_key == "params":
    spec = ("params", common.number("Parameters (billions)", 0.001, 1e5, 70.0, key="n",
                                    where=st.columns(4)[0]))

units = common.memory_units().value
with common.explain_errors():
    out = _compute(spec, dp, tp, pp, zero, sp, mb, seq, recipe, rc, flash, gpu, reserve, units)
ch, b, label = out["ch"], (lambda x: format_bytes(x, units)), NAMES[zero]
m = st.columns([1.25, 0.75, 1, 1, 1])
m[0].metric(f"{label}, per GPU", b(out["used"]), f"{b(out['cap'] - out['used'])} free" if out["ok"] else
            f"-{b(out['used'] - out['cap'])} over", border=True,
            help="The fullest GPU: model states + activations + reserve.")
m[1].metric("Verdict", "fits" if out["ok"] else "OOM", help=f"{gpu}: {b(out['cap'])} of HBM")
m[2].metric("States / GPU", b(out["states"][ch.parallel.zero_stage]),
            help="Parameters + gradients + optimizer states on the fullest GPU.")
m[3].metric("Activations / GPU", b(ch.activations_bytes))
m[4].metric("Whole model", b(out["whole"]), help=f"All model states: {out['n']:,} parameters × "
            f"{fm.RECIPE_LABELS[recipe]}")
st.caption(f"{dp * tp * pp:,} GPUs = DP {dp} × TP {tp} × PP {pp} · {format_count(out['n'])} parameters · "
           f"recipe **{fm.RECIPE_LABELS[recipe]}** · sizes in "
           f"{'GiB (2³⁰ B)' if units == 'binary' else 'GB (10⁹ B)'} (switch in the sidebar) · hover a bar "
           "for its formula and exact bytes.")
common.chart(out["bars"], key="bars", height=520)

st.subheader("Per pipeline stage")
st.caption("1F1B: stage r holds PP − r micro-batches in flight, so the first stage stores the most "
           "activations; the last also holds the output head and the logits.")
if pp > 1:
    common.chart(out["stages"], key="stages", height=440)
else:
    st.info(f"PP = 1: a single stage, the {label} bar above. Set PP > 1 to split the layers into stages.")

st.subheader("What fits")
fits = pd.DataFrame(out["fits"])
st.table(fits.set_index("ZeRO stage"))
st.download_button("what_fits.csv", lambda: fits.to_csv(index=False), "what_fits.csv", "text/csv",
                   on_click="ignore", icon="⬇️")
if out["trade"]:
    st.subheader("Activation checkpointing: a trade")
    common.chart(out["trade"], key="trade", height=420)

st.subheader("Sizing questions")
for (question, answer), q in zip(_seeds(units), SEEDS):
    url = "memory?" + urlencode(q | ({"mem": "GB"} if units == "decimal" else {}), quote_via=quote)
    st.markdown(f"**{question}** {answer} [Open this setting ↗]({url})")

common.takeaway(
    f"Sharding cuts the model states per GPU from {b(out['states'][0])} (DDP) to {b(out['states'][3])} "
    f"(ZeRO-3 over {out['nd']:,}), and TP × PP divide them too. The {b(ch.activations_bytes)} of activations "
    "do not shrink with DP at all: only TP + sequence parallel, PP, recompute, flash attention and a "
    "smaller micro-batch cut them.")
with st.expander("How this is computed", expanded=True):
    st.markdown(out["how"])

st.subheader("Self-check")
n7, (unit, _) = preset("Llama-2 7B").num_params, gib_or_gb(units)
answer = bytes_in(cm.model_state_bytes_per_gpu(n7, 8, 2).total_bytes, unit)
common.self_check(f"Llama-2 7B ({n7:,} parameters), 16 B/param mixed Adam, ZeRO-2 at DP = 8: model "
                  "states per GPU", answer, key="q", unit=unit, explanation="2Ψ + 14Ψ/8 = 3.75 Ψ bytes.")
common.show_url_notices()
