"""SplitLab entry point: page config, global settings in the sidebar, navigation, landing page."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from app_pages.common import heap, home
from app_pages.common.presenter_css import PRESENTER_CSS

_PRESENTING = str(st.query_params.get("present", "")).lower() == "true"
st.set_page_config(
    page_title="SplitLab — distributed training, explained",
    page_icon="🧩",
    layout="wide",
    initial_sidebar_state="collapsed" if _PRESENTING else "auto",
)

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
        "app_pages/context_parallel.py",
        "Context parallel",
        "🧵",
        "How do GPUs share one long sequence's attention exactly, and what does it cost?",
    ),
    (
        "app_pages/expert_parallel.py",
        "Expert parallel",
        "🧑‍🔬",
        "How are a mixture-of-experts model's tokens sent to their experts, and what does it cost?",
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
    """Home: a real ring all-reduce still, a 30-minute path, the map (app_pages/common/home.py)."""
    home.landing(_available())


pages = [st.Page(landing, title="Home", icon="🏠", default=True)]
pages += [st.Page(path, title=title, icon=icon) for path, title, icon, _ in _available()]
nav = st.navigation(pages)
common.begin_run()
if common.sidebar_settings().presenter:
    st.markdown(PRESENTER_CSS, unsafe_allow_html=True)
try:
    nav.run()
    heap.settle(nav.url_path)  # the first whole run of each page: freeze the long-lived heap
except Exception as err:  # last line of defence: never show a traceback to a learner
    st.error(
        f"Something went wrong on this page ({type(err).__name__}: {err}). Reset the controls "
        "or open the page without URL parameters; please report the link that caused it.",
        icon="🚫",
    )
