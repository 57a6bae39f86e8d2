"""Links that open the Training step page on a given layout ("draw this step"), for the planner,
memory and scenarios pages.

A relative markdown link, not st.page_link: page_link drops a value that equals the default of a
widget with the same key on the page being left (CONTRIBUTING.md), and the memory and planner
pages use the keys dp, tp, pp and zero with their own defaults.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from app_pages.common import settings
from core.parallel import ZERO_STAGES, Layout
from core.schedule_names import SCHEDULES
from figures.planner.run import Run
from figures.step.run import MODELS

STEP_PATH = "training_step"  # Streamlit serves app_pages/training_step.py here


def step_query(
    layout: Layout,
    *,
    nodes: int,
    gpus_per_node: int = 8,
    gpu: str = "H100 SXM",
    model: str = "Llama-2 70B",
    seq_len: int = 4096,
    global_batch: int = 1152,
    recompute: str = "selective",
    inter_link: str = "InfiniBand NDR",
    phase: int = 0,
    settings: dict[str, str] | None = None,
    cp: int | None = None,
    ep: int | None = None,
) -> dict[str, str]:
    """The Training step page's URL parameters for this layout (pick=custom), every key set.
    cp, ep: context- and expert-parallel degrees (default: the layout's); dp stays pure DP:
    DP × TP × PP × CP = the GPUs (Megatron-Core)."""
    query = {
        "nodes": nodes,
        "gpn": gpus_per_node,
        "gpu": gpu,
        "inter": inter_link,
        "model": MODELS.get(model, model),  # the step page's label ("Mixtral 8x7B (MoE)")
        "seq": seq_len,
        "gb": global_batch,
        "rc": recompute,
        "pick": "custom",
        "dp": layout.dp,
        "tp": layout.tp,
        "pp": layout.pp,
        "zero": ZERO_STAGES[layout.zero_stage].label,
        "order": layout.order,
        "mb": layout.micro_batch,
        "sched": SCHEDULES[layout.schedule].label,
        "v": max(2, layout.num_chunks),
        "sp": str(layout.sequence_parallel).lower(),
        "cp": layout.cp if cp is None else cp,
        "ep": layout.ep if ep is None else ep,
        "phase": phase,
    }
    return {k: str(v) for k, v in query.items()} | (settings or {})


def step_url(layout: Layout, **kwargs) -> str:
    """Relative URL of the Training step page drawing this layout (see step_query)."""
    return f"{STEP_PATH}?" + urlencode(step_query(layout, **kwargs), quote_via=quote)


def step_link_markdown(layout: Layout, label: str = "🎞️ Draw this step", **kwargs) -> str:
    """A markdown link for st.markdown: "[label](training_step?…)"."""
    return f"[{label}]({step_url(layout, **kwargs)})"


def run_step_link(run: Run, layout: Layout, label: str = "🎞️ Draw this step") -> str:
    """step_link_markdown for a planner Run (its cluster, model and training) and the sidebar
    settings. The step page has no recipe, efficiency, NIC-count or intra-node link inputs: it
    draws at its own defaults for those.
    """
    cl, tr = run.cluster, run.training
    return step_link_markdown(
        layout,
        label,
        nodes=cl.num_nodes,
        gpus_per_node=cl.gpus_per_node,
        gpu=cl.gpu.name,
        model=run.model,
        seq_len=tr.seq_len,
        global_batch=tr.global_batch,
        recompute=tr.recompute,
        inter_link=cl.inter_link.name,
        settings=settings().query(),
    )


def memory_step_url(
    *,
    dp: int,
    tp: int,
    pp: int,
    zero: int | str,
    mb: int,
    seq: int,
    model: str,
    recompute: str,
    sp: bool,
    nodes: int,
    global_batch: int,
    cp: int = 1,
    ep: int = 1,
    gpus_per_node: int = 8,
    settings: dict[str, str] | None = None,
) -> str | None:
    """ "Draw this step" from the memory page's inputs: the Training step page's URL, or None for a
    layout the drawing cannot show (HSDP: zero="hsdp"). An MoE model name of
    core.expert_parallel.MOE_PRESETS is written as the step page lists it ("… (MoE)")."""
    if str(zero) not in ("0", "1", "2", "3"):
        return None
    lay = Layout(dp=dp, tp=tp, pp=pp, zero_stage=int(zero), sequence_parallel=sp, micro_batch=mb)
    query = step_query(
        lay,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        model=model,
        seq_len=seq,
        global_batch=global_batch,
        recompute=recompute,
        settings=settings,
        cp=cp,
        ep=ep,
    )
    return f"{STEP_PATH}?" + urlencode(query, quote_via=quote)
