"""Scenarios: eight guided design exercises, computed live, each one click from its page."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlencode

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from app_pages import common
from app_pages.common import sections
from app_pages.common.links import STEP_PATH
from core import scenarios as cs
from core.hardware import SCALE_OUT_LINKS
from figures import scenarios as fs

# Short, stable labels: Streamlit writes the label into the URL (?sc=DDP+vs+FSDP).
SCENARIOS = {
    "size": "Size 70B",
    "scale": "DP scale-out",
    "place": "3D placement",
    "pipe": "GPipe vs 1F1B",
    "fsdp": "DDP vs FSDP",
    "sentence": "The sentence",
    "ctx": "128K context",
    "moe": "MoE on 2 nodes",
}
RUN = {
    "size": cs.size_70b,
    "scale": cs.scale_out,
    "place": cs.placement,
    "pipe": cs.gpipe_vs_1f1b,
    "fsdp": cs.ddp_vs_fsdp,
    "sentence": lambda _: cs.sentence(),
    "ctx": cs.long_context,
    "moe": cs.moe_two_nodes,
}
CPS = {str(c): str(c) for c in cs.five_d.CPS}
EPS = {str(e): str(e) for e in cs.five_d.EPS}
NETS = common.same(SCALE_OUT_LINKS)
AT = {str(n): str(n) for n in (16, 32, 64, 128, 256, 512)}


@st.cache_data(max_entries=64, show_spinner=False)
def _scenario(kind: str, knob, units: str, bw_units: str) -> tuple:
    """(walkthrough, figure, links) of one scenario at one knob setting; plain values in, plain data
    out.
    """
    result = RUN[kind](knob)
    text, fig = fs.walkthrough(result, units, bw_units)
    return text, fig, result.links


def _knob(kind: str, where):
    """The one what-if control of each scenario, defaulting to the exercise as stated. Its key must
    not be one the linked page uses: Streamlit 1.67 drops a page_link query value equal to a
    same-key widget's default on the page being left."""
    if kind == "size":
        return common.slider("GPUs sharding the states (N)", 1, 128, 16, key="nd", where=where)
    if kind == "scale":
        return int(common.select("GPUs at scale", AT, "64", key="big", where=where))
    if kind == "place":
        return common.select("Link between nodes", NETS, "InfiniBand NDR", key="net", where=where)
    if kind == "pipe":
        return common.slider("Pipeline stages P", 2, 32, 8, key="stages", where=where)
    if kind == "fsdp":
        return common.slider("GPUs (DP = FSDP shard degree)", 2, 64, 8, key="gpus", where=where)
    if kind == "ctx":
        return int(common.select("Context parallel C", CPS, "8", key="ctxcp", where=where))
    if kind == "moe":
        return int(common.select("Expert parallel EP", EPS, "8", key="moeep", where=where))
    where.caption("The planner's default cluster and model: open its link to change them.")
    return None


def _open(link: cs.Link, query: dict[str, str]) -> None:
    """A page link that preloads the target's widgets; a plain link when run outside app.py's
    navigation.
    """
    try:
        st.page_link(link.page, label=link.label, query_params=query, icon="↗️")
    except StreamlitPageNotFoundError:
        st.markdown(f"↗️ [{link.label}]({Path(link.page).stem}?{urlencode(query, quote_via=quote)})")
    if link.page.endswith("/planner.py"):  # the step page reads the planner's keys (common.links)
        step = urlencode({k: v for k, v in query.items() if k != "cmp"}, quote_via=quote)
        st.markdown(
            f"🎞️ [Draw this step]({STEP_PATH}?{step}): {link.label.removeprefix('Planner: ')}"
        )


@st.fragment
def scenario(units: str, bw_units: str) -> None:
    """Everything the scenario choice and its knob feed, as one fragment: moving the knob reruns
    this section, not the page (issue 18). Presenting, the chart sits above the controls."""
    common.sections.follow_page()  # args from a page run that finished
    presenting = common.settings().presenter
    top = sections.chart_slot(presenting)
    c = st.columns([3, 1])
    kind = common.select(
        "Scenario", SCENARIOS, "size", key="sc", radio=True, horizontal=True, where=c[0]
    )
    knob = _knob(kind, c[1])
    with common.explain_errors():
        text, fig, links = _scenario(kind, knob, units, bw_units)
    st.subheader(text.title)
    st.markdown(text.intro)
    with top or st.container():
        common.chart(fig, key=f"fig_{kind}")  # the answer above the fold (issue 15), then the steps
    st.markdown("\n".join(f"{i}. {step}" for i, step in enumerate(text.steps, 1)))

    st.markdown("**Open it yourself** — each link opens the page with exactly this configuration:")
    extra = common.settings().query()  # keep the global settings
    for link in links:
        _open(link, dict(link.params) | extra)

    common.takeaway(text.headline if presenting else text.takeaway)  # one line on a slide
    with st.expander("How this is computed"):
        st.markdown(text.how)
    st.subheader("Self-check")
    common.self_check(
        text.question, text.answer, key=f"q_{kind}", unit=text.unit, explanation=text.explanation
    )


common.start_page(
    "Scenarios",
    "Can you design a training run? Eight exercises, each computed live by the "
    "cores and one click from the page that shows it in full.",
)
scenario(common.memory_units().value, common.bandwidth_units().value)
common.show_url_notices()
