"""The memory page's cached computations, its folded run controls, its layout row with keyboard
steps, the "Draw this step" link and the compare section (a fragment: layout B's controls rerun
only that section), kept apart from app_pages/memory.py so the page stays within its budget.
"""

from __future__ import annotations

import math

import streamlit as st

from app_pages import common
from app_pages.common.fold import cells
from app_pages.common.links import step_link_markdown
from app_pages.common.nudge import _nudge  # the queue behind nudges
from app_pages.common.widgets import url_int
from core.hardware import GPU_PRESETS
from core.training import RECIPES
from figures import memory as fm
from figures.memory import text as mt
from figures.memory.run import Run, Split, compare, compute, configs

# Created once per process, not on every rerun of the page (perf, board 10:56).
# plain values in, plain data out; no spinner (its messages cost the browser time: issue 18)
cached_compute = st.cache_data(max_entries=64, show_spinner=False)(compute)
cached_compare = st.cache_data(max_entries=64, show_spinner=False)(compare)
cached_seeds = st.cache_data(max_entries=4, show_spinner=False)(fm.sizing_questions)
GPUS, RECIPE_LABELS = common.same(GPU_PRESETS), {k: r.label for k, r in RECIPES.items()}
GPUS_PER_NODE = 8  # the memory page has no cluster: the step link assumes 8-GPU nodes


def _now(key: str, default, ok=None):
    """A control's current value before it is drawn (for the expander's one-line label): what
    it showed last run, else the URL's if the control would accept it (`ok`), else its default;
    a hostile URL value never reaches the label."""
    if key in st.session_state:
        return st.session_state[key]
    raw = st.query_params.get(key)
    if isinstance(ok, range):  # a whole number in the slider's range
        n = url_int(key)
        return n if n in ok else default
    return raw if ok is not None and raw in ok else default


def run_controls() -> dict:
    """Model, recipe, GPU, reserve, micro-batch, sequence, recompute, SP and flash attention,
    folded into an expander whose label lists their values (issue 15: the chart above the fold)."""
    on = {"true": "on", "false": "off", True: "on", False: "off"}
    tf = {"true", "false"}
    label = (
        f"Run: **{_now('model', 'Llama-2 13B', fm.MODEL_LABELS.values())}** · "
        f"{_now('gpu', 'H100 SXM', GPUS.values())} · "
        f"{_now('recipe', RECIPES['mixed_adam'].label, RECIPE_LABELS.values())} · micro-batch "
        f"{_now('mb', 1, range(1, 65))} × {_now('seq', 4096, range(256, 131073, 256)):,} tokens "
        "· recompute "
        f"{_now('rc', 'none', mt.RC.values())} · SP {on[_now('sp', False, tf)]} · flash "
        f"{on[_now('flash', True, tf)]} · reserve {_now('reserve', mt.RESERVE_PCT, range(51))} %"
    )
    with st.expander(label):
        c = cells(4) + cells(4)
        out = dict(
            model=common.select("Model", fm.MODEL_LABELS, "Llama-2 13B", key="model", where=c[0]),
            recipe=common.select(
                "Bytes per parameter (recipe)",
                RECIPE_LABELS,
                "mixed_adam",
                key="recipe",
                where=c[1],
                help=fm.RECIPE_HELP,
            ),
            gpu=common.select("GPU", GPUS, "H100 SXM", key="gpu", where=c[2]),
            reserve=common.slider(
                "Reserve (% of HBM)",
                0,
                50,
                mt.RESERVE_PCT,
                key="reserve",
                where=c[3],
                help=mt.HELP["reserve"],
            ),  # fmt: skip
            mb=common.slider("Micro-batch (sequences)", 1, 64, 1, key="mb", where=c[4]),
            seq=common.slider(
                "Sequence length (tokens)", 256, 131072, 4096, step=256, key="seq", where=c[5]
            ),
            rc=common.select(
                "Activation recompute",
                mt.RC,
                "none",
                key="rc",
                radio=True,
                horizontal=True,
                where=c[6],
            ),  # fmt: skip
            sp=common.toggle("Sequence parallel", False, key="sp", where=c[7]),
            flash=common.toggle(
                "Flash attention", True, key="flash", where=c[7], help=mt.HELP["flash"]
            ),
        )
    return out


def layout_row(moe: bool) -> dict:
    """DP, TP, PP, CP, EP and ZeRO, with keyboard steps: ←/→ halve/double DP, ↓/↑ halve/double TP
    (buttons with shortcuts, as on the pipeline page)."""
    c = st.columns([1, 1, 1, 1, 1, 3.2])
    out = dict(
        dp=common.slider("DP", 1, 1024, 8, key="dp", where=c[0], help=mt.HELP["dp"]),
        tp=common.slider("TP", 1, 64, 1, key="tp", where=c[1], help=mt.HELP["tp"]),
        pp=common.slider("PP", 1, 64, 1, key="pp", where=c[2], help=mt.HELP["pp"]),
        cp=common.slider("CP", 1, 64, 1, key="cp", where=c[3], help=mt.HELP["cp"]),
        ep=common.slider("EP", 1, 256, 1, key="ep", where=c[4],
                         help=mt.HELP["ep"] if moe else mt.HELP["ep_dense"], disabled=not moe),
        zero=common.select("ZeRO stage", mt.ZERO, "3", key="zero", radio=True, horizontal=True,
                           where=c[5], help=mt.HELP["zero"] + " " + mt.ZERO_CAPTION),
    )  # fmt: skip
    half, double = (lambda v: max(1, v // 2)), (lambda v: v * 2)
    row = c[5].container(horizontal=True, gap="small")  # one row of four keyboard steps
    for key, label, shortcut, move in (
        ("dp", "DP ÷2", "Left", half),
        ("dp", "DP ×2", "Right", double),
        ("tp", "TP ÷2", "Down", half),
        ("tp", "TP ×2", "Up", double),
    ):
        row.button(label, key=f"{key}_{shortcut}", shortcut=shortcut, on_click=_nudge,
                   args=(key, move))  # fmt: skip
    out["ep"] = out["ep"] if moe else 1  # a dense model has no experts to split
    return out


def step_link(run: Run, lay: Split) -> None:
    """ "Draw this step" on the training-step page, with the cluster and batch this page implies
    (it has neither), said next to the link."""
    par, tr = configs(run, lay)
    gpus = par.world_size
    nodes = math.ceil(gpus / GPUS_PER_NODE)
    link = step_link_markdown(
        par,
        nodes=nodes,
        gpus_per_node=GPUS_PER_NODE,
        gpu=run.gpu,
        model=run.model,
        seq_len=run.seq,
        global_batch=tr.global_batch,
        recompute=lay.rc,
        settings=common.settings().query(),
        cp=par.cp,
        ep=par.ep,
    )
    st.markdown(mt.step_link_note(link, gpus, nodes, GPUS_PER_NODE, par, tr.global_batch))


@st.fragment
def compare_section(run: Run, lay_a: Split) -> None:
    """Layout B beside A: its controls rerun only this section."""
    common.sections.follow_page()  # args from a page run that finished
    if not common.toggle("Compare with layout B", False, key="cmp", help=mt.HELP["cmp"]):
        return
    st.subheader("Layout A vs layout B")
    c = cells(4) + cells(4)  # two rows: the layout, then the micro-batch and savers
    lay_b = Split(
        dp=common.slider("B: DP", 1, 1024, 8, key="b_dp", where=c[0]),
        tp=common.slider("B: TP", 1, 64, 1, key="b_tp", where=c[1]),
        pp=common.slider("B: PP", 1, 64, 1, key="b_pp", where=c[2]),
        zero=common.select(
            "B: ZeRO stage", mt.ZERO, "1", key="b_zero", radio=True, horizontal=True, where=c[3]
        ),
        mb=common.slider("B: micro-batch", 1, 64, 1, key="b_mb", where=c[4]),
        rc=common.select(
            "B: recompute", mt.RC, "none", key="b_rc", radio=True, horizontal=True, where=c[5]
        ),
        sp=common.toggle("B: sequence parallel", False, key="b_sp", where=c[6]),
        cp=common.slider("B: CP", 1, 64, 1, key="b_cp", where=c[7]),
        ep=lay_a.ep,  # B keeps A's experts split (EP shows only for MoE models)
    )
    st.caption(mt.compare_caption(st.query_params.to_dict()))
    if cmp := common.attempt(cached_compare, run, lay_a, lay_b, prefix="Layout B: "):
        common.metrics(cmp["metrics"], 4, border=True)
        st.markdown(cmp["sentence"])
        common.chart(cmp["fig"], key="cmp_bars", height=480)
