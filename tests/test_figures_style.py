"""One meaning, one colour: the same quantity is drawn in the same colour on every page (and in
presenter mode), distinct quantities of one chart in distinct colours, and no figure module keeps
a colour of its own.
"""

import re
from pathlib import Path

import pytest

from core import scenarios as cs
from core.data_parallel import DpJob, cluster_for, dp_step, scenario_cluster
from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.pipeline import bubble_sweep, simulate
from core.planner import Training, evaluate
from core.traces import COMM_ONLY, COMPUTE, IDLE, OVERLAP
from figures import data_parallel as fdp
from figures import memory as fm
from figures import pipeline as fp
from figures import planner as fpl
from figures import scenarios as fs
from figures import trace as ft
from figures.theme import presenter

ROOT = Path(__file__).resolve().parents[1]
MEMORY = ("Parameters", "Gradients", "Optimizer states", "Activations", "Reserve")


def colours(fig: dict) -> dict[str, str]:
    """Legend name -> colour of every named bar or line (first trace of a name wins)."""
    out = {}
    for t in fig["data"]:
        c = (t.get("marker") or {}).get("color") or (t.get("line") or {}).get("color")
        if t.get("name") and isinstance(c, str):
            out.setdefault(t["name"], c)
    return out


@pytest.fixture(scope="module")
def ev():
    """GPT-3 175B on 8 x 8 H100, TP 8 x PP 8: every breakdown part and memory segment is drawn."""
    model, c = preset("GPT-3 175B"), make_cluster(num_nodes=8, gpus_per_node=8)
    return evaluate(model, c, Layout(dp=1, tp=8, pp=8), Training(global_batch=64))


@pytest.fixture(scope="module")
def sharding():
    return cs.ddp_vs_fsdp()


@pytest.fixture(scope="module")
def dp_timeline():
    job = DpJob(num_params=1.3e9, tokens_per_gpu=16384, all_reduce="hierarchical")
    return fdp.bucket_timeline_figure(dp_step(job, cluster_for(scenario_cluster(), 64)))


def test_memory_segments_share_one_colour_on_every_page(ev, sharding):
    s = sharding
    page = colours(fm.zero_stages_figure([s.ddp, s.fsdp], s.capacity_bytes, s.reserve_bytes))
    planner = colours(fpl.memory_figure(ev))
    both = colours(fpl.layout_figure(ev))
    compare = colours(fpl.compare_figure(ev, ev))
    assert set(MEMORY) <= set(page) and set(MEMORY[:4]) <= set(compare)
    for name in MEMORY:
        assert page[name] == planner[name] == both[name], name
    for name in MEMORY[:4]:
        assert compare[name] == page[name], name
    # The scenarios' bars stack the model states as one bar, in the parameters' colour.
    scenario = colours(fs.sharding_figure(s, "binary"))
    sizing = colours(fs.sizing_figure(cs.size_70b(), "binary"))
    for bars in (scenario, sizing):
        assert bars["Activations"] == page["Activations"]
        assert bars["Reserve"] == page["Reserve"]
        assert bars["Model states"] == page["Parameters"]
    assert len({page[n] for n in MEMORY}) == len(MEMORY)  # five segments, five colours


def test_compute_exposed_comm_and_idle_agree_across_pages(ev, dp_timeline):
    dp, breakdown = colours(dp_timeline), colours(fpl.breakdown_figure(ev))
    assert dp["backward"] == breakdown["compute"]
    assert dp["all-reduce exposed"] == breakdown["exposed TP"]
    gantt = fp.gantt_figure(simulate("1f1b", 4, 8))
    assert gantt["layout"]["plot_bgcolor"] == breakdown["PP bubble"]  # idle = pipeline bubble
    # The trace page's states: compute, comm hidden behind compute, exposed comm, idle.
    state = ft.STATE_COLOURS
    assert state[COMPUTE] == dp["backward"]
    assert state[OVERLAP] == dp["all-reduce hidden behind backward"]
    assert state[COMM_ONLY] == dp["all-reduce exposed"]
    assert state[IDLE] == gantt["layout"]["plot_bgcolor"]
    # The scenarios' placement bars stack the planner's parts in the planner's colours.
    placement = colours(fs.placement_figure(cs.placement()))
    shared = set(placement) & set(breakdown)
    assert {"compute", "exposed TP"} <= shared
    assert all(placement[n] == breakdown[n] for n in shared)


def test_one_chart_never_gives_two_meanings_one_colour(ev, dp_timeline):
    """The planner's two panels side by side: every step-time part and memory segment differs."""
    for fig in (fpl.layout_figure(ev), dp_timeline):
        named = colours(fig)
        assert len(set(named.values())) == len(named), named
    # Presenter mode maps each figure afresh, yet parameters and compute stay apart there too.
    big = colours(presenter(fpl.layout_figure(ev)))
    assert big["Parameters"] != big["compute"] and big["Activations"] != big["exposed TP"]


def test_presenter_keeps_a_meaning_in_one_colour_across_pages(ev, sharding, dp_timeline):
    s = sharding
    page = colours(presenter(fm.zero_stages_figure([s.ddp], s.capacity_bytes, s.reserve_bytes)))
    planner = colours(presenter(fpl.layout_figure(ev)))
    for name in MEMORY:
        assert page[name] == planner[name], name
    dp = colours(presenter(dp_timeline))
    assert dp["backward"] == planner["compute"]
    assert dp["all-reduce exposed"] == planner["exposed TP"]


def test_schedules_keep_their_colour_between_pipeline_and_scenarios():
    sweep = colours(fp.bubble_vs_m_figure([bubble_sweep("gpipe", 4, (4, 8))], {"gpipe": "GPipe"}))
    scenario = colours(fs.schedules_figure(cs.gpipe_vs_1f1b(4)))
    assert sweep["GPipe"] == scenario["GPipe"]


HEX = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b")
NAMED = re.compile(r"""["'](?:white|black)["']""", re.IGNORECASE)  # named colours, as values
STYLE = {"figures/style.py", "figures/theme.py"}  # the palette and the presenter palette


def hex_literals(text: str) -> list[str]:
    """'#rrggbb' / '#rgb' colours and the named "white" / "black" in code, not in comments."""
    code = [line.split("# ")[0] for line in text.splitlines()]
    return [m for line in code for pattern in (HEX, NAMED) for m in pattern.findall(line)]


def test_no_figure_module_but_the_style_keeps_a_colour_literal():
    found = {
        str(p.relative_to(ROOT)): hex_literals(p.read_text())
        for p in sorted((ROOT / "figures").rglob("*.py"))
        if str(p.relative_to(ROOT)) not in STYLE
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_the_scan_can_fail():
    assert hex_literals('X = {"a": "#1f77b4"}\nY = "#abc"  # see #ffffff') == ["#1f77b4", "#abc"]
    found = hex_literals('c = "white" if x else \'Black\'  # not "black"\nbg = "whiteboard"')
    assert found == ['"white"', "'Black'"]


def test_every_step_time_part_and_memory_segment_keeps_one_projector_colour(ev):
    """Each meaning the planner draws side by side has a fixed presenter colour, all different;
    only the declared families share one: bad / exposed (vermillion), ok / hidden (green)."""
    from figures.style import COLOURS, PART_COLOURS, PRESENTER_COLOURS, WINE

    meanings = [*PART_COLOURS.values(), COLOURS["forward"]]
    meanings += [COLOURS[k] for k in ("parameters", "gradients", "optimizer", "activations")]
    meanings += [COLOURS["reserve"], COLOURS["hidden"]]
    assert all(m in PRESENTER_COLOURS for m in meanings if m != COLOURS["idle"])  # idle: grey
    projected = [PRESENTER_COLOURS.get(m, m) for m in meanings]
    assert len(set(projected)) == len(projected), projected
    assert PRESENTER_COLOURS[COLOURS["bad"]] == PRESENTER_COLOURS[COLOURS["exposed"]]
    assert PRESENTER_COLOURS[COLOURS["ok"]] == PRESENTER_COLOURS[COLOURS["hidden"]]
    # exposed DP was handed the free green ("hidden") in one planner figure: now wine everywhere
    big = colours(presenter(fpl.layout_figure(ev)))
    assert big["exposed DP"] == WINE != big.get("all-reduce hidden behind backward", WINE + "x")


def test_the_optimum_is_not_drawn_in_the_colour_of_exposed_or_lost_work():
    from figures.style import COLOURS, PRESENTER_COLOURS, RELIABILITY_COLOURS

    star = RELIABILITY_COLOURS["optimum"]
    red = {COLOURS["exposed"], COLOURS["bad"], RELIABILITY_COLOURS["lost"]}
    assert star not in red
    assert PRESENTER_COLOURS.get(star, star) not in {PRESENTER_COLOURS[c] for c in red}
