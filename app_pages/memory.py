"""Memory: will this model train on these GPUs, and what does each parallelism choice save?"""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pandas as pd
import streamlit as st

from app_pages import common
from core import memory as cm
from core.hardware import GPU_PRESETS
from core.model import ModelSpec, ParamsOnly, preset
from core.parallel import ZERO_STAGES, Layout
from core.training import Training
from core.units import bytes_in, format_bytes, gib_or_gb
from figures import memory as fm

ZERO = {"0": "0", "1": "1", "2": "2", "3": "3", "hsdp": "HSDP"}  # URL value zero=3 etc.
RC = {m: m for m in cm.RECOMPUTE_MODES}
NAMES = {str(z): s.label for z, s in ZERO_STAGES.items()} | {"hsdp": "HSDP"}
SHAPE = [
    ("Layers", "L", 32),
    ("Hidden", "h", 4096),
    ("Heads", "a", 32),
    ("KV heads", "kv", 32),
    ("FFN", "f", 11008),
    ("Vocab", "V", 32000),
]  # custom shape defaults: Llama-2 7B
SEEDS = [
    {"model": "N parameters", "n": 70, "dp": 1, "zero": 0},  # the sizing questions' settings
    {"model": "Llama-2 70B", "dp": 16, "zero": 3, "rc": "full"},
    {"model": "Llama-2 13B", "dp": 8, "zero": 3},
]


def _model(spec: tuple):
    kind, *v = spec
    if kind == "params":
        return ParamsOnly(num_params=round(v[0] * 1e9), name=f"{v[0]:g}B parameters")
    if kind == "custom":  # Llama-style: SwiGLU, RMSNorm, untied embeddings
        names = (
            "num_layers",
            "hidden_size",
            "num_heads",
            "num_kv_heads",
            "ffn_hidden_size",
            "vocab_size",
        )
        return ModelSpec(
            name="custom", **dict(zip(names, v)), gated_mlp=True, tied_embeddings=False
        )
    return preset(kind)


def _configs(dp, tp, pp, zero, mb, rc, sp, seq, recipe, flash):
    """Layout and Training of one run; HSDP shards over the DP ranks of one 8-GPU node."""
    shard = cm.fsdp_to_zero("HYBRID_SHARD", dp, max(1, 8 // tp))[1] if zero == "hsdp" else None
    par = Layout(
        dp=dp,
        tp=tp,
        pp=pp,
        zero_stage=int(zero.replace("hsdp", "3")),
        sequence_parallel=sp,
        micro_batch=mb,
        shard_degree=shard,
    )
    return par, Training(
        global_batch=pp * dp * mb,  # PP micro-batches per pipeline: 1F1B stage r holds PP − r
        seq_len=seq,
        recipe=recipe,
        recompute=rc,
        flash_attention=flash,
        memory_headroom=0.05,  # the page's default reserve
    )


@st.cache_data(max_entries=64)
def _compare(spec, a: tuple, b: tuple, seq, recipe, flash, gpu, reserve_pct, units) -> dict:
    """Layouts A and B, each (dp, tp, pp, zero, mb, rc, sp), of one run: chart, B's metrics and
    verdict.
    """
    model, cap = _model(spec), GPU_PRESETS[gpu].hbm_bytes
    ra, rb = (cm.memory_per_gpu(model, *_configs(*lay, seq, recipe, flash)) for lay in (a, b))
    return fm.compare_layouts(ra, rb, cap, cap * reserve_pct / 100, units, gpu)


@st.cache_data(max_entries=64)
def _compute(
    spec, dp, tp, pp, zero, sp, mb, seq, recipe, rc, flash, gpu, reserve_pct, units
) -> dict:
    """Every number and figure of the page for one setting (plain values in, plain data out)."""
    model, cap = _model(spec), GPU_PRESETS[gpu].hbm_bytes
    par, tr = _configs(dp, tp, pp, zero, mb, rc, sp, seq, recipe, flash)
    reserve, z, nd = cap * reserve_pct / 100, par.zero_stage, par.shard_degree or dp
    res = cm.memory_by_zero_stage(model, par, tr)
    ch, shaped = res[z], isinstance(model, ModelSpec)
    comm = tuple(cm.zero_comm_bytes_per_gpu(ch.params_on_gpu, nd, s, recipe) for s in (0, z))
    gather = cm.layer_allgather_bytes(model, tp, recipe) if shaped else None
    return dict(
        ch=ch,
        nd=nd,
        caption=fm.run_caption(dp, tp, pp, model.num_params, recipe, units),
        metrics=fm.headline_metrics(
            ch, cap, reserve, NAMES[zero], model.num_params, recipe, gpu, units
        ),
        states=[r.states_bytes for r in res],
        bars=fm.zero_stages_figure(res, cap, reserve, units, gpu),
        stages=pp > 1 and fm.pipeline_stages_figure(ch, cap, reserve, units, gpu),
        fits=fm.fits_rows(cm.what_fits(model, par, tr, cap, reserve), dp, tp, pp),
        trade=shaped and fm.recompute_tradeoff_figure(cm.recompute_tradeoff(model, par, tr), units),
        how=fm.how_computed_blocks(res, ch, comm, gather, NAMES[zero], units, model),
    )


_seeds = st.cache_data(max_entries=4)(fm.sizing_questions)

common.start_page(
    "Memory per GPU",
    "Will this model train on these GPUs, and what does each choice — DP, TP, "
    "PP, ZeRO stage, recompute, micro-batch — save?",
)
c = st.columns(4)
dp = common.slider("DP (data-parallel ranks)", 1, 1024, 8, key="dp", where=c[0])
tp = common.slider("TP (tensor-parallel ranks)", 1, 64, 1, key="tp", where=c[1])
pp = common.slider("PP (pipeline stages)", 1, 64, 1, key="pp", where=c[2])
zero = common.select(
    "ZeRO stage",
    ZERO,
    "3",
    key="zero",
    radio=True,
    horizontal=True,
    where=c[3],
    help="HSDP = HYBRID_SHARD: ZeRO-3 inside an 8-GPU node (8/TP ranks), replicated across.",
)
st.caption(
    "ZeRO stage ↔ PyTorch: 0 = DDP / FSDP NO_SHARD · 1 = ZeroRedundancyOptimizer · 2 = "
    "SHARD_GRAD_OP"
    " · 3 = FULL_SHARD · HSDP = HYBRID_SHARD (ZeRO-3 inside a node, replicated across nodes)"
)
c = st.columns(4)
model_key = common.select("Model", fm.MODEL_LABELS, "Llama-2 13B", key="model", where=c[0])
recipe = common.select(
    "Bytes per parameter (recipe)",
    fm.RECIPE_LABELS,
    "mixed_adam",
    key="recipe",
    where=c[1],
    help=fm.RECIPE_HELP,
)
gpu = common.select("GPU", {g: g for g in GPU_PRESETS}, "H100 SXM", key="gpu", where=c[2])
reserve = common.slider(
    "Reserve (% of HBM)",
    0,
    50,
    5,
    key="reserve",
    where=c[3],
    help="Temporaries, CUDA context, communication buffers, allocator fragmentation.",
)
c = st.columns(4)
mb = common.slider("Micro-batch (sequences)", 1, 64, 1, key="mb", where=c[0])
seq = common.slider("Sequence length (tokens)", 256, 131072, 4096, step=256, key="seq", where=c[1])
rc = common.select(
    "Activation recompute", RC, "none", key="rc", radio=True, horizontal=True, where=c[2]
)
sp = common.toggle("Sequence parallel", False, key="sp", where=c[3])
flash = common.toggle(
    "Flash attention", True, key="flash", where=c[3], help="Never stores the s² scores."
)
spec: tuple = (model_key,)
if model_key == "custom":
    spec = (
        "custom",
        *(
            common.number(lbl, 1, 10**7, d, key=k, step=1, where=col)
            for (lbl, k, d), col in zip(SHAPE, st.columns(len(SHAPE)))
        ),
    )
elif model_key == "params":
    spec = (
        "params",
        common.number("Parameters (billions)", 0.001, 1e5, 70.0, key="n", where=st.columns(4)[0]),
    )

units = common.memory_units().value
with common.explain_errors():
    out = _compute(spec, dp, tp, pp, zero, sp, mb, seq, recipe, rc, flash, gpu, reserve, units)
ch, b, label = out["ch"], (lambda x: format_bytes(x, units)), NAMES[zero]
for col, kw in zip(st.columns([1.25, 0.75, 1, 1, 1]), out["metrics"]):
    col.metric(**kw)
st.caption(out["caption"])
common.chart(out["bars"], key="bars", height=520)

if common.toggle(
    "Compare with layout B", False, key="cmp", help="A second layout of the same run, side by side."
):
    st.subheader("Layout A vs layout B")
    c = [
        *st.columns(4),
        *st.columns(4),
    ]  # two rows: the layout, then the micro-batch and memory savers
    lay_b = (
        common.slider("B: DP", 1, 1024, 8, key="b_dp", where=c[0]),
        common.slider("B: TP", 1, 64, 1, key="b_tp", where=c[1]),
        common.slider("B: PP", 1, 64, 1, key="b_pp", where=c[2]),
        common.select(
            "B: ZeRO stage", ZERO, "1", key="b_zero", radio=True, horizontal=True, where=c[3]
        ),
        common.slider("B: micro-batch", 1, 64, 1, key="b_mb", where=c[4]),
        common.select(
            "B: recompute", RC, "none", key="b_rc", radio=True, horizontal=True, where=c[5]
        ),
        common.toggle("B: sequence parallel", False, key="b_sp", where=c[6]),
    )
    here = {**st.query_params.to_dict(), "cmp": "true", "b_dp": "4", "b_tp": "2", "b_zero": "1"}
    st.caption(
        "B shares A's model, recipe, GPU, reserve, sequence length and flash attention: one run, "
        "two "
        "layouts. B starts at DP 8 with ZeRO-1 (A's default layout, the other ZeRO stage): no "
        "weight "
        "all-gathers, but every GPU keeps whole weights and gradients. "
        f"[Try B = TP 2 × DP 4, ZeRO-1 with this A](memory?{urlencode(here, quote_via=quote)}): TP "
        "halves the weights per GPU instead."
    )
    try:
        cmp = _compare(
            spec, (dp, tp, pp, zero, mb, rc, sp), lay_b, seq, recipe, flash, gpu, reserve, units
        )
    except ValueError as err:
        st.error(f"Layout B: {err}", icon="🚫")
    else:
        for col, kw in zip(st.columns(4), cmp["metrics"]):
            col.metric(**kw, border=True)
        st.markdown(cmp["sentence"])
        common.chart(cmp["fig"], key="cmp_bars", height=480)

st.subheader("Per pipeline stage")
st.caption(
    "1F1B: stage r holds PP − r micro-batches in flight, so the first stage stores the most "
    "activations; the last also holds the output head and the logits."
)
if pp > 1:
    common.chart(out["stages"], key="stages", height=440)
else:
    st.info(
        f"PP = 1: a single stage, the {label} bar above. Set PP > 1 to split the layers into "
        "stages."
    )

st.subheader("What fits")
fits = pd.DataFrame(out["fits"])
st.table(fits.set_index("ZeRO stage"))
st.download_button(
    "what_fits.csv",
    lambda: fits.to_csv(index=False),
    "what_fits.csv",
    "text/csv",
    on_click="ignore",
    icon="⬇️",
)
if out["trade"]:
    st.subheader("Activation checkpointing: a trade")
    common.chart(out["trade"], key="trade", height=420)

st.subheader("Sizing questions")
for (question, answer), q in zip(_seeds(units), SEEDS):
    url = "memory?" + urlencode(q | ({"mem": "GB"} if units == "decimal" else {}), quote_via=quote)
    st.markdown(f"**{question}** {answer} [Open this setting ↗]({url})")

common.takeaway(
    f"Sharding cuts the model states per GPU from {b(out['states'][0])} (DDP) to "
    f"{b(out['states'][3])} "
    f"(ZeRO-3 over {out['nd']:,}), and TP × PP divide them too. The {b(ch.activations_bytes)} of "
    "activations "
    "do not shrink with DP at all: only TP + sequence parallel, PP, recompute, flash attention and "
    "a "
    "smaller micro-batch cut them."
)
with st.expander("How this is computed", expanded=False):
    for block in out["how"]:  # separate elements: a block whose text is unchanged is not redrawn
        st.markdown(block)

st.subheader("Self-check")
n7, (unit, _) = preset("Llama-2 7B").num_params, gib_or_gb(units)
answer = bytes_in(cm.model_state_bytes_per_gpu(n7, 8, 2).total_bytes, unit)
common.self_check(
    f"Llama-2 7B ({n7:,} parameters), 16 B/param mixed Adam, ZeRO-2 at DP = 8: model "
    "states per GPU",
    answer,
    key="q",
    unit=unit,
    explanation="2Ψ + 14Ψ/8 = 3.75 Ψ bytes.",
)
common.show_url_notices()
