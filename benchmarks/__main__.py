"""Measure page rerun time, chart payload and slider-to-chart latency; print a markdown table.

Usage: python -m benchmarks [--pages-only | --core-only] [--reruns 20] [--moves 30] [--match TEXT]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from benchmarks.cases import CORE_CASES, PAGE_CASES

ROOT = Path(__file__).resolve().parents[1]


def _fmt_budget(value: float, budget: float | None, unit: str) -> str:
    if budget is None:
        return f"{value:,.0f} {unit}"
    mark = "✅" if value <= budget else "❌"
    return f"{value:,.0f} {unit} (≤ {budget:,.0f}) {mark}"


def measure_rerun_and_payload(page: str, params: dict, reruns: int) -> tuple[float, int]:
    """Server-side: p50 of AppTest reruns of the page script; total Plotly JSON bytes sent."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / page), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    if at.exception:
        raise RuntimeError(f"{page} raised: {at.exception[0].value}")
    payload = sum(len(c.proto.spec.encode()) for c in at.get("plotly_chart"))
    times = []
    for _ in range(reruns):
        t0 = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), payload


def measure_latency(browser, url: str, page: str, params: dict, moves: int) -> tuple[float, float]:
    """Browser-side p50 ms from a key press on the page's first slider to (the first chart redrawn,
    every chart settled)."""
    from urllib.parse import urlencode

    from tests.e2e.harness import slider_to_chart_ms, wait_for_app_run, wait_for_charts

    tab = browser.new_page(viewport={"width": 1400, "height": 1000})
    tab.goto(url)  # the entry page first: it registers st.navigation for this server process
    wait_for_app_run(tab)
    query = ("?" + urlencode(params)) if params else ""
    tab.goto(f"{url}/{Path(page).stem}{query}")
    wait_for_app_run(tab)
    wait_for_charts(tab)
    thumb = tab.get_by_test_id("stMain").get_by_test_id("stSlider").first.get_by_role("slider")
    at_max = thumb.get_attribute("aria-valuetext") == thumb.get_attribute("max")
    first, second = ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft")
    results = []
    for i in range(moves):
        key = first if i % 2 == 0 else second  # alternate, so the case's settings barely change
        results.append(slider_to_chart_ms(tab, thumb, key))
    tab.close()
    return (statistics.median(r[0] for r in results), statistics.median(r[1] for r in results))


def run_pages(reruns: int, moves: int, match: str) -> list[str]:
    from playwright.sync_api import sync_playwright

    from tests.e2e.harness import launch_browser, running_app

    rows = [
        "| page | case | rerun p50 | payload | slider→first chart redrawn p50 | "
        "slider→all charts settled p50 |",
        "|---|---|---|---|---|---|",
    ]
    cases = [c for c in PAGE_CASES if (ROOT / c[0]).exists() and match in c[0] + c[1]]
    with running_app() as url, sync_playwright() as p:
        browser = launch_browser(p)
        for page, label, params, budget in cases:
            rerun, payload = measure_rerun_and_payload(page, params, reruns)
            latency, settled = measure_latency(browser, url, page, params, moves)
            rows.append(
                f"| {Path(page).stem} | {label} | "
                f"{_fmt_budget(rerun, budget.get('rerun_ms'), 'ms')} | "
                f"{_fmt_budget(payload / 1000, (budget.get('payload') or 0) / 1000 or None, 'kB')} "
                "| "
                f"{_fmt_budget(latency, budget.get('latency_ms'), 'ms')} | "
                f"{settled:,.0f} ms |"
            )
            print(rows[-1], flush=True)
        browser.close()
    return rows


def run_core(match: str) -> list[str]:
    rows = ["| core function | best of 3 | budget |", "|---|---|---|"]
    for label, factory, budget_s in CORE_CASES:
        if match not in label:
            continue
        try:
            fn = factory()
        except (ImportError, AttributeError) as err:
            rows.append(f"| {label} | not available ({err}) | {budget_s} s |")
            continue
        best = min(_timed(fn) for _ in range(3))
        rows.append(
            f"| {label} | {best * 1000:,.0f} ms | ≤ {budget_s * 1000:,.0f} ms "
            f"{'✅' if best <= budget_s else '❌'} |"
        )
        print(rows[-1], flush=True)
    return rows


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pages-only", action="store_true")
    ap.add_argument("--core-only", action="store_true")
    ap.add_argument("--reruns", type=int, default=20)
    ap.add_argument("--moves", type=int, default=30)
    ap.add_argument("--match", default="", help="only cases whose name contains this text")
    args = ap.parse_args()
    out = []
    if not args.pages_only:
        out += run_core(args.match) + [""]
    if not args.core_only:
        out += run_pages(args.reruns, args.moves, args.match)
    results = ROOT / "benchmarks" / "results"
    results.mkdir(exist_ok=True)
    (results / "latest.md").write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
