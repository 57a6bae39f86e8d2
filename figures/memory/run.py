"""The memory page's computation: a run (model, sequence, recipe, GPU) and a layout in, every
number and figure the page shows out (plain data; no Streamlit here).
"""

from __future__ import annotations

from dataclasses import dataclass

from core import memory as cm
from core.expert_parallel.spec import any_preset
from core.hardware import GPU_PRESETS
from core.model import ModelSpec, ParamsOnly
from core.parallel import ZERO_STAGES, Layout
from core.training import Training
from figures import memory as fm

NAMES = {str(z): s.label for z, s in ZERO_STAGES.items()} | {"hsdp": "HSDP"}
SHAPE_FIELDS = (
    "num_layers",
    "hidden_size",
    "num_heads",
    "num_kv_heads",
    "ffn_hidden_size",
    "vocab_size",
)


@dataclass(frozen=True, kw_only=True)
class Run:
    """What layouts A and B share: model, sequence, recipe, flash attention, GPU and units."""

    model: str  # a preset name, "params" (a parameter count only) or "custom" (a Llama shape)
    billions: float | None = None  # parameters, for model="params"
    shape: tuple[int, ...] = ()  # SHAPE_FIELDS' values, for model="custom"
    seq: int
    recipe: str
    flash: bool
    gpu: str
    reserve_pct: float  # of HBM kept free
    units: str


@dataclass(frozen=True, kw_only=True)
class Split:
    """One layout of the run: how it is split (DP, TP, PP, ZeRO) and its memory savers."""

    dp: int
    tp: int
    pp: int
    zero: str  # "0".."3" or "hsdp"
    mb: int
    rc: str
    sp: bool
    cp: int = 1  # context parallel: ranks splitting each sequence
    ep: int = 1  # expert parallel (MoE models): ranks splitting each layer's experts


def model_of(run: Run):
    """The run's model: a preset, a bare parameter count, or a custom Llama-style shape."""
    if run.model == "params":
        return ParamsOnly(
            num_params=round(run.billions * 1e9), name=f"{run.billions:g}B parameters"
        )
    if run.model == "custom":  # Llama-style: SwiGLU, RMSNorm, untied embeddings
        return ModelSpec(
            name="custom",
            **dict(zip(SHAPE_FIELDS, run.shape)),
            gated_mlp=True,
            tied_embeddings=False,
        )
    return any_preset(run.model)


def configs(run: Run, lay: Split):
    """Layout and Training of one run; HSDP shards over the DP ranks of one 8-GPU node."""
    dp, tp, pp, zero, mb, rc, sp = lay.dp, lay.tp, lay.pp, lay.zero, lay.mb, lay.rc, lay.sp
    seq, recipe, flash = run.seq, run.recipe, run.flash
    shard = cm.fsdp_to_zero("HYBRID_SHARD", dp, max(1, 8 // tp))[1] if zero == "hsdp" else None
    par = Layout(
        dp=dp,
        tp=tp,
        pp=pp,
        cp=lay.cp,
        ep=lay.ep,
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
        memory_headroom=run.reserve_pct / 100,  # the page's reserve slider
    )


def _capacity(run: Run, tr: Training) -> tuple[float, float]:
    """HBM of one GPU and the part of it the run keeps free: core.memory.budget's reserve."""
    b = cm.budget(0.0, GPU_PRESETS[run.gpu].hbm_bytes, tr.memory_headroom)
    return b.capacity_bytes, b.reserve_bytes


def compare(run: Run, a: Split, b: Split) -> dict:
    """Layouts A and B of one run: chart, B's metrics and verdict."""
    model, ca, cb = model_of(run), configs(run, a), configs(run, b)
    cap, reserve = _capacity(run, ca[1])
    ra, rb = cm.memory_per_gpu(model, *ca), cm.memory_per_gpu(model, *cb)
    return fm.compare_layouts(ra, rb, cap, reserve, run.units, run.gpu)


def _active(model) -> int | None:
    return getattr(model, "active_params", None)


def _traffic(ch, lay_par, stage: int, recipe: str) -> cm.ZeroComm:
    """ZeRO traffic per GPU per step: the dense part over DP × CP, the routed experts over their
    own expert-data-parallel group (core.memory.shard_degrees), as the memory bars shard them."""
    nd, nd_e = cm.shard_degrees(lay_par)
    dense = cm.zero_comm_bytes_per_gpu(ch.params_on_gpu, nd, stage, recipe)
    if not ch.expert_params_on_gpu:
        return dense
    experts = cm.zero_comm_bytes_per_gpu(ch.expert_params_on_gpu, nd_e, stage, recipe)
    return cm.ZeroComm(
        gradient_bytes=dense.gradient_bytes + experts.gradient_bytes,
        parameter_bytes=dense.parameter_bytes + experts.parameter_bytes,
    )


def compute(run: Run, lay: Split) -> dict:
    """Every number and figure of the page for one setting (plain values in, plain data out)."""
    model, units, recipe = model_of(run), run.units, run.recipe
    dp, tp, pp, zero = lay.dp, lay.tp, lay.pp, lay.zero
    par, tr = configs(run, lay)
    cap, reserve = _capacity(run, tr)
    z, nd = par.zero_stage, cm.shard_degrees(par)[0]
    res = cm.memory_by_zero_stage(model, par, tr)
    ch, shaped = res[z], isinstance(model, ModelSpec)
    comm = tuple(_traffic(ch, par, s, recipe) for s in (0, z))
    gather = cm.layer_allgather_bytes(model, tp, recipe, lay.ep) if shaped else None
    return dict(
        ch=ch,
        nd=nd,
        caption=fm.run_caption(
            dp, tp, pp, model.num_params, recipe, units, lay.cp, lay.ep, _active(model)
        ),
        metrics=fm.headline_metrics(
            ch, cap, reserve, NAMES[zero], model.num_params, recipe, run.gpu, units
        ),
        states=[r.states_bytes for r in res],
        bars=fm.zero_stages_figure(res, cap, reserve, units, run.gpu, selected=z),
        stages=pp > 1 and fm.pipeline_stages_figure(ch, cap, reserve, units, run.gpu),
        fits=fm.fits_rows(cm.what_fits(model, par, tr, cap, reserve), dp, tp, pp, cp=lay.cp),
        trade=shaped and fm.recompute_tradeoff_figure(cm.recompute_tradeoff(model, par, tr), units),
        how=fm.how_computed_blocks(res, ch, comm, gather, NAMES[zero], units, model),
    )
