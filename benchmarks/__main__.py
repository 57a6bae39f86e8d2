"""Measure page rerun time, chart payload and slider-to-chart latency; print a markdown table.

Usage: python -m benchmarks [--pages-only | --core-only] [--reruns 20] [--moves 30] [--match TEXT]
                            [--runs 2] [--markdown]

--runs N repeats the whole measurement N times (a fresh app server and browser each time) and
reports, per row, the min–max of the N runs' p50s; a budget is met only if every run meets it.
--markdown prints only the README-ready table (with the command, the machine and the load average).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from benchmarks.cases import CORE_CASES, PAGE_CASES
from benchmarks.gauge import machine_gauge_ms

ROOT = Path(__file__).resolve().parents[1]
# Issue 18's budgets where a case sets none: a page at its defaults (max-settings cases set 1 s).
DEFAULT_BUDGET = dict(first_ms=150, settled_ms=250)
LOAD_MS = 120_000  # a page's first load on a cold, shared machine (not a measured figure)


def _cell(values: list[float], budget: float | None, unit: str = "ms", scale: float = 1) -> str:
    """'96 ms' (one run) or '96–120 ms' (the spread of several), with ✅/❌ against budget."""
    lo, hi = min(values) / scale, max(values) / scale
    text = f"{lo:,.0f} {unit}" if round(lo) == round(hi) else f"{lo:,.0f}–{hi:,.0f} {unit}"
    if budget is None:
        return text
    return f"{text} (≤ {budget / scale:,.0f}) {'✅' if hi <= budget / scale else '❌'}"


def measure_rerun_and_payload(page: str, params: dict, reruns: int) -> tuple[float, int]:
    """Server-side: p50 of AppTest reruns of the page script (always the whole script: AppTest
    cannot run a fragment alone); total Plotly JSON bytes sent."""
    from streamlit.testing.v1 import AppTest

    from tests.charts import charts

    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    if at.exception:
        raise RuntimeError(f"{page} raised: {at.exception[0].value}")
    payload = sum(len(c.spec.encode()) for c in charts(at))
    times = []
    for _ in range(reruns):
        t0 = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), payload


def measure_latency(
    browser, url: str, page: str, params: dict, moves: int, slider: str | None = None
) -> tuple[float, float, float | None]:
    """Browser-side p50 ms from a key press on a slider (the case's `slider` key, else the page's
    first visible one in the main area) to (the first chart redrawn, every chart drawn, the last
    frame of a glide: None when the move glides nothing). A page whose sliders are all folded
    (the trace page) has its first folded expander opened first, as a visitor would."""
    from urllib.parse import urlencode

    from tests.e2e.harness import slider_timeline_ms, wait_for_app_run, wait_for_charts

    tab = browser.new_page(viewport={"width": 1400, "height": 1000})
    tab.set_default_navigation_timeout(LOAD_MS)
    tab.goto(url)  # the entry page first: it registers st.navigation for this server process
    wait_for_app_run(tab, LOAD_MS)
    query = ("?" + urlencode(params)) if params else ""
    tab.goto(f"{url}/{Path(page).stem}{query}")
    wait_for_app_run(tab, LOAD_MS)
    wait_for_charts(tab, LOAD_MS)
    main = tab.get_by_test_id("stMain")
    where = main.locator(f".st-key-{slider}") if slider else main
    if not where.get_by_test_id("stSlider").filter(visible=True).count():
        main.get_by_test_id("stExpander").filter(has=tab.get_by_test_id("stSlider")).first.locator(
            "summary"
        ).click()
        wait_for_app_run(tab, LOAD_MS)
        wait_for_charts(tab, LOAD_MS)
    thumb = where.get_by_test_id("stSlider").filter(visible=True).first.get_by_role("slider")
    # the input's value, not its text: a float slider at 2 reads "2.00" (the EP page's skew)
    at_max = float(thumb.input_value()) >= float(thumb.get_attribute("max"))
    first, second = ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft")
    results = []
    for i in range(moves):
        key = first if i % 2 == 0 else second  # alternate, so the case's settings barely change
        results.append(slider_timeline_ms(tab, thumb, key))
    tab.close()
    glides = [r[2] for r in results if r[2] is not None]
    return (
        statistics.median(r[0] for r in results),
        statistics.median(r[1] for r in results),
        statistics.median(glides) if glides else None,
    )


def run_pages_once(reruns: int, moves: int, cases: list, progress) -> list[dict]:
    """Every case's browser latency first, then every case's server-side AppTest reruns: AppTest
    runs the page in this process, and measured just before a case's latency it slowed the
    browser's figures (2026-12-03: tensor parallel's first chart 218–231 ms in a whole run, 158–172
    ms on its own in the same half hour)."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.harness import launch_browser, running_app

    out: list[dict] = [{} for _ in cases]
    with running_app() as url, sync_playwright() as p:
        browser = launch_browser(p)
        for i, (page, label, params, budget) in enumerate(cases):
            try:
                slider = budget.get("slider")
                first, settled, glide = measure_latency(browser, url, page, params, moves, slider)
            except Exception as err:  # one broken case must not lose the whole run's figures
                out[i] = dict(error=f"{type(err).__name__}: {str(err).splitlines()[0][:80]}")
                progress(f"{Path(page).stem} / {label}: {out[i]['error']}")
                continue
            out[i] = dict(first=first, settled=settled, glide=glide)
            progress(
                f"{Path(page).stem} / {label}: first {first:.0f} ms, drawn {settled:.0f} ms, "
                f"glide {glide or 0:.0f} ms"
            )
        browser.close()
    for i, (page, label, params, _budget) in enumerate(cases):
        if "error" in out[i]:
            continue
        try:
            out[i]["rerun"], out[i]["payload"] = measure_rerun_and_payload(page, params, reruns)
        except Exception as err:
            out[i] = dict(error=f"{type(err).__name__}: {str(err).splitlines()[0][:80]}")
            progress(f"{Path(page).stem} / {label}: {out[i]['error']}")
            continue
        progress(
            f"{Path(page).stem} / {label}: rerun {out[i]['rerun']:.0f} ms, "
            f"{out[i]['payload'] / 1000:.0f} kB"
        )
    return out


def page_table(cases: list, runs: list[list[dict]]) -> list[str]:
    rows = [
        "| page | case | rerun p50 (server) | payload | slider→first chart p50 | "
        "slider→every chart drawn p50 | slider→glide's last frame p50 |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, (page, label, _params, budget) in enumerate(cases):
        b = DEFAULT_BUDGET | budget
        errors = [run[i]["error"] for run in runs if "error" in run[i]]
        if errors:
            rows.append(
                f"| {Path(page).stem} | {label} | failed in {len(errors)} run(s): "
                f"{errors[0]} | | | | |"
            )
            continue
        got = {k: [run[i][k] for run in runs] for k in ("rerun", "payload", "first", "settled")}
        rows.append(
            f"| {Path(page).stem} | {label} | {_cell(got['rerun'], b.get('rerun_ms'))} | "
            f"{_cell(got['payload'], b.get('payload'), 'kB', 1000)} | "
            f"{_cell(got['first'], b.get('first_ms'))} | "
            f"{_cell(got['settled'], b.get('settled_ms'))} | {_glide(runs, i)} |"
        )
    return rows


def _glide(runs: list[list[dict]], i: int) -> str:
    """The glide's last frame (no budget: its length is the animation's design, issue 14), or a
    dash when the move glides nothing."""
    got = [run[i]["glide"] for run in runs if run[i].get("glide") is not None]
    return _cell(got, None) if got else "–"


def run_core_once(match: str) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    for label, factory, _budget in CORE_CASES:
        if match not in label:
            continue
        try:
            fn = factory()
        except (ImportError, AttributeError) as err:
            out[label] = f"not available ({err})"
            continue
        out[label] = min(_timed(fn) for _ in range(3)) * 1000
    return out


def core_table(runs: list[dict]) -> list[str]:
    rows = ["| core function | best of 3 | budget |", "|---|---|---|"]
    for label, _factory, budget_s in CORE_CASES:
        got = [run[label] for run in runs if label in run]
        missing = [g for g in got if isinstance(g, str)]
        if missing or not got:
            rows += [f"| {label} | {missing[0]} | {budget_s} s |"] if missing else []
            continue
        ok = "✅" if max(got) <= budget_s * 1000 else "❌"
        rows.append(f"| {label} | {_cell(got, None)} | ≤ {budget_s * 1000:,.0f} ms {ok} |")
    return rows


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages-only", action="store_true")
    ap.add_argument("--core-only", action="store_true")
    ap.add_argument("--reruns", type=int, default=20)
    ap.add_argument("--moves", type=int, default=30)
    ap.add_argument("--match", default="", help="only cases whose name contains this text")
    ap.add_argument("--runs", type=int, default=1, help="whole runs; rows show their spread")
    ap.add_argument("--markdown", action="store_true", help="print only the README table")
    args = ap.parse_args()
    say = (lambda line: None) if args.markdown else (lambda line: print(line, flush=True))
    cases = [c for c in PAGE_CASES if (ROOT / c[0]).exists() and args.match in c[0] + c[1]]
    core_runs, page_runs, gauges = [], [], []
    for r in range(args.runs):
        gauges.append(machine_gauge_ms())
        say(f"… whole run {r + 1} of {args.runs}: machine gauge {gauges[-1]:.0f} ms")
        if not args.pages_only:
            core_runs.append(run_core_once(args.match))
        if not args.core_only:
            page_runs.append(run_pages_once(args.reruns, args.moves, cases, say))
    load = os.getloadavg()
    out = [
        f"`python -m benchmarks {' '.join(sys.argv[1:])}`: {args.runs} whole run(s), "
        f"{os.cpu_count()} cores, load average {load[0]:.1f} at the end, machine gauge "
        f"{_cell(gauges, None)} at each run's start (`machine_gauge_ms`: a fixed Python loop; "
        "lower is a faster hour); a cell is the p50 "
        "(min–max over the runs); ✅ when every run is within the budget in brackets.",
        "",
    ]
    if core_runs:
        out += core_table(core_runs) + [""]
    if page_runs:
        out += page_table(cases, page_runs)
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    (results / "latest.md").write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
