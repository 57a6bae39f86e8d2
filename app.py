"""SplitLab entry point: page config, global settings in the sidebar, navigation, landing page."""

from __future__ import annotations

import streamlit as st

from app_pages import common

_PRESENTING = str(st.query_params.get("present", "")).lower() == "true"
st.set_page_config(
    page_title="SplitLab — distributed training, explained",
    page_icon="🧩",
    layout="wide",
    initial_sidebar_state="collapsed" if _PRESENTING else "auto",
)

# Presenter mode: type readable from the back of a lecture hall (our own CSS, no outside assets).
PRESENTER_CSS = """<style>
  [data-testid="stMain"] { font-size: 1.3rem; }
  [data-testid="stMain"] h1 { font-size: 3.2rem; }
  [data-testid="stMain"] h2, [data-testid="stMain"] h3 { font-size: 2.1rem; }
  [data-testid="stMetricValue"] { font-size: 2.6rem; }
  [data-testid="stWidgetLabel"] p { font-size: 1.15rem; }
</style>"""

# (file, title, icon, the question the page answers). Order = the course order.
PAGES = [
    (
        "app_pages/collectives.py",
        "Collectives",
        "🔁",
        "How do N GPUs sum one tensor, and why does the ring scale?",
    ),
    (
        "app_pages/data_parallel.py",
        "Data parallel",
        "🧮",
        "Why is averaging gradients the same as one big batch, and when does it stop scaling?",
    ),
    (
        "app_pages/tensor_parallel.py",
        "Tensor parallel",
        "🔪",
        "How does one layer's math split across GPUs, and why does TP stay inside a node?",
    ),
    (
        "app_pages/pipeline.py",
        "Pipeline",
        "🚰",
        "Where does a pipeline sit idle, and what do micro-batches and smarter schedules buy?",
    ),
    (
        "app_pages/memory.py",
        "Memory",
        "🧠",
        "Will this model train on these GPUs, and what does each parallelism choice save?",
    ),
    (
        "app_pages/planner.py",
        "Planner",
        "🗺️",
        "Which DP × TP × PP × ZeRO layout trains fastest on this cluster, and does it fit?",
    ),
    (
        "app_pages/training_step.py",
        "Training step",
        "🎞️",
        "One step drawn: where parameters, gradients, optimizer state and activations live, what "
        "moves over which link, and when GPUs wait.",
    ),
    (
        "app_pages/reliability.py",
        "Reliability",
        "🛟",
        "A week-long run on thousands of GPUs: what do failures cost, and how often should it "
        "checkpoint?",
    ),
    (
        "app_pages/trace.py",
        "Plan vs trace",
        "🔬",
        "Does the simulated plan match a real profiler trace?",
    ),
    (
        "app_pages/scenarios.py",
        "Scenarios",
        "🧭",
        "Six guided design exercises, each computed live and one click from its preloaded page.",
    ),
    (
        "app_pages/self_check.py",
        "Self-check",
        "✅",
        "Can you derive the numbers yourself? Randomised questions with the working shown.",
    ),
]


def _available() -> list[tuple[str, str, str, str]]:
    """Pages whose file exists (pages land one issue at a time)."""
    from pathlib import Path

    root = Path(__file__).parent
    return [p for p in PAGES if (root / p[0]).exists()]


def landing() -> None:
    """What SplitLab answers, the concept map, and a card per page."""
    st.title("SplitLab")
    st.session_state["_notice_slot"] = st.empty()
    st.markdown(
        "#### See how a training run is cut across a cluster — and what every cut costs "
        "in memory, communication and idle time."
    )
    st.markdown(
        "Every chart here is computed live: the ring animation replays a real numpy all-reduce, "
        "the Gantt charts come from a dependency-respecting schedule simulator, and the memory "
        "bars add up exact parameter counts. Move a slider, copy the URL, and anyone who opens "
        "it sees the same view."
    )
    st.subheader("The map")
    st.code(
        "  one GPU can't hold it (≈16 bytes per parameter to train)  →  split it\n"
        "     │ split the DATA   │ split a LAYER     │ split the LAYERS   │ shard the STATE\n"
        "     ▼                  ▼                   ▼                    ▼\n"
        "  data parallel     tensor parallel    pipeline parallel     ZeRO / FSDP\n"
        "  all-reduce grads  all-reduce inside  bubble while the      all-gather params,\n"
        "                    every block        pipe fills & drains   reduce-scatter grads\n"
        "     └──────────────┴─── glued by collectives ─────────────────┘\n"
        "                          (all-reduce = reduce-scatter + all-gather)\n"
        "                                      ▼\n"
        "        3D parallelism on a topology: TP inside a node (NVLink), PP across nodes,\n"
        "        DP outermost — the planner maps it and proves it fits",
        language=None,
    )
    st.subheader("Pages")
    cols = st.columns(3)
    for i, (path, title, icon, question) in enumerate(_available()):
        with cols[i % 3].container(border=True):
            st.page_link(path, label=f"**{title}**", icon=icon)
            st.caption(question)
    common.show_url_notices()


pages = [st.Page(landing, title="Home", icon="🏠", default=True)]
pages += [st.Page(path, title=title, icon=icon) for path, title, icon, _ in _available()]
nav = st.navigation(pages)
common.begin_run()
if common.sidebar_settings().presenter:
    st.markdown(PRESENTER_CSS, unsafe_allow_html=True)
try:
    nav.run()
except Exception as err:  # last line of defence: never show a traceback to a learner
    st.error(
        f"Something went wrong on this page ({type(err).__name__}: {err}). Reset the controls "
        "or open the page without URL parameters; please report the link that caused it.",
        icon="🚫",
    )
