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
) -> dict[str, str]:
    """The Training step page's URL parameters for this layout (pick=custom), every key set."""
    query = {
        "nodes": nodes,
        "gpn": gpus_per_node,
        "gpu": gpu,
        "inter": inter_link,
        "model": model,
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
