"""Issue 14's visuals in Chromium, asserted from the figure data Plotly holds in the page (not
pixels): the ring's chunks in flight move between GPU boxes across frames and on screen, fast
stepping lands where the presses say with no URL notice, and compared Gantts share their x-range.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser

RING = """() => [...document.querySelectorAll('.js-plotly-plot')]
            .find(g => g.layout.title && g.layout.title.text.startsWith('ring N='))"""


def _ring(page, expr: str):
    """Evaluate `expr` with `g` bound to the ring chart's plot element."""
    return page.evaluate(f"() => {{ const g = ({RING})(); return {expr}; }}")


def _inside(box, x, y):
    return box["x0"] <= x <= box["x1"] and box["y0"] <= y <= box["y1"]


def test_ring_chunk_in_flight_moves_between_gpus_across_frames(page, app_url):
    page.goto(f"{app_url}/collectives?step=3")
    wait_for_app_run(page)
    wait_for_charts(page)
    page.wait_for_function(
        f"""() => {{ const g = ({RING})();
            return g && g._transitionData && g._transitionData._frames.length === 4; }}""",
        timeout=15_000,
    )
    frames = _ring(
        page,
        """Object.fromEntries(g._transitionData._frames.filter(f => f.name.split('.')[0] === '3')
             .map(f => [f.name, f.data[f.traces.indexOf(
                 g.data.findIndex(d => d.name === 'in flight'))]]))""",
    )
    boxes = _ring(page, "g.layout.shapes")
    assert sorted(frames) == ["3", "3.0", "3.1", "3.2"] and len(boxes) == 8
    # Step 3 is reduce-scatter k = 2: GPU 2 sends chunk 0 to GPU 3 (README "Ring indexing").
    path = [(frames[n]["x"][0], frames[n]["y"][0]) for n in ("3.0", "3.1", "3.2", "3")]
    assert _inside(boxes[2], *path[0]) and _inside(boxes[3], *path[-1])
    # On the way it leaves GPU 2's box before it enters GPU 3's: out on the link between them.
    assert any(not _inside(boxes[2], *p) and not _inside(boxes[3], *p) for p in path[1:3])
    assert len(set(path)) == 4  # four distinct positions: it travels

    # On screen: ▶ Replay this step moves chunk 0's marker through several positions.
    page.evaluate(
        f"""() => {{ window.__pos = new Set(); window.__probe = setInterval(() => {{
              const g = ({RING})(); const layer = [...g.querySelectorAll('.scatterlayer .trace')]
                [g.data.findIndex(d => d.name === 'in flight')];
              const p = layer && layer.querySelector('.point');
              if (p) window.__pos.add(p.getAttribute('transform')); }}, 30); }}"""
    )
    page.locator(".updatemenu-item-text", has_text="Replay this step").first.click()
    page.wait_for_timeout(2500)
    seen = page.evaluate("() => { clearInterval(window.__probe); return window.__pos.size; }")
    assert seen >= 4


def _press(page, key: str) -> None:
    if key == "Next":
        page.get_by_role("button", name="Next ▶").click()
    else:
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        page.keyboard.press(key)
    page.wait_for_timeout(300)  # 0.3 s between presses: faster than a rerun on this machine


def test_five_fast_steps_land_on_step_5_with_no_notice(page, app_url):
    page.goto(f"{app_url}/collectives")
    wait_for_app_run(page)
    wait_for_charts(page)
    for key in ("ArrowRight", "Next", "ArrowRight", "Next", "ArrowRight"):
        _press(page, key)
    expect(page).to_have_url(re.compile(r"[?&]step=5(&|$)"), timeout=15_000)
    wait_for_app_run(page)
    page.wait_for_timeout(800)
    wait_for_app_run(page)
    expect(page.get_by_test_id("stMetricValue").first).to_have_text("5 of 14")
    story = page.get_by_text(re.compile(r"^step 5 of 14, reduce-scatter: GPU 4 sends chunk 0"))
    expect(story).to_have_count(1)
    assert "step 5 of 14" in _ring(page, "g.layout.title.text")
    step_slider = page.get_by_test_id("stSlider").filter(has_text="Step (0 = inputs)")
    expect(step_slider.get_by_role("slider")).to_have_attribute("aria-valuetext", "5")
    alerts = " ".join(page.get_by_test_id("stAlert").all_text_contents())
    assert "was ignored" not in alerts
    _press(page, "ArrowLeft")
    expect(page).to_have_url(re.compile(r"[?&]step=4(&|$)"), timeout=15_000)


def test_compared_gantts_share_their_time_axis(page, app_url):
    page.goto(f"{app_url}/pipeline?cmp=true&sched=GPipe&sched2=ZB-H1&m=16")
    wait_for_app_run(page)
    wait_for_charts(page)
    gantts = """() => [...document.querySelectorAll('.js-plotly-plot')]
                 .filter(g => / · P=4 · M=16/.test((g.layout.title || {}).text || ''))"""
    page.wait_for_function(f"() => ({gantts})().length === 2", timeout=15_000)
    ranges = page.evaluate(
        f"() => ({gantts})().map(g => [g.layout.title.text, g.layout.xaxis.range])"
    )
    assert [t for t, _ in ranges] == ["GPipe · P=4 · M=16", "ZB-H1 · P=4 · M=16"]
    # GPipe: (M + P − 1)(t_F + t_B) = 19 · 3 = 57 s, the longer one: both axes end there.
    assert ranges[0][1] == ranges[1][1] and ranges[0][1][1] == pytest.approx(57)
    notes = page.evaluate(
        """() => [...document.querySelectorAll('.js-plotly-plot')]
                 .filter(g => ((g.layout.title || {}).text || '').startsWith('ZB-H1'))
                 .map(g => (g.layout.annotations || []).map(a => a.text).join('|'))"""
    )
    assert "done at" in notes[0]  # the faster schedule's end is marked on the shared axis


def test_pipeline_keys_double_m_and_step_p(page, app_url):
    page.goto(f"{app_url}/pipeline")
    wait_for_app_run(page)
    wait_for_charts(page)
    for key in ("ArrowRight", "ArrowRight", "ArrowUp"):  # M 8 → 16 → 32, P 4 → 5
        _press(page, key)
    expect(page).to_have_url(re.compile(r"[?&]m=32(&|$)"), timeout=15_000)
    expect(page).to_have_url(re.compile(r"[?&]p=5(&|$)"), timeout=15_000)
    wait_for_app_run(page)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.js-plotly-plot')]
                 .some(g => ((g.layout.title || {}).text || '') === '1F1B · P=5 · M=32')""",
        timeout=15_000,
    )
    assert "was ignored" not in " ".join(page.get_by_test_id("stAlert").all_text_contents())
