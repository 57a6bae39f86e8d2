"""Same-hour A/B: every page case's slider-to-chart latency on another commit and on this tree,
measured side by side in one browser, case by case, so both sides see the same machine.

    python -m benchmarks.against badc90c                  # every page case, 30 moves each
    python -m benchmarks.against badc90c --match planner  # cases whose page or label match
    python -m benchmarks.against badc90c --runs 2         # rows show the spread of two runs

Why: on this 2-core machine the same code measured ~2× apart at different hours (README,
Performance, 2026-12-03 afternoon), so tables from two sessions do not compare two commits. The
other commit is checked out into a temporary `git worktree` and served by its own
`streamlit run app.py`; the two servers run at once and the sides take turns (the other commit
first on even cases, this tree first on odd ones). Browser latency only: the server-side rerun
and payload columns of `python -m benchmarks` import this tree's modules.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.__main__ import _cell, measure_latency
from benchmarks.cases import PAGE_CASES

ROOT = Path(__file__).resolve().parents[1]


def measure(other: Path, cases: list, moves: int, runs: int, say) -> list[dict]:
    """Per case: {"first": ([other runs], [here runs]), "settled": (...)} (p50 ms per run)."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.harness import launch_browser, running_app

    got = [{"first": ([], []), "settled": ([], [])} for _ in cases]
    with running_app(cwd=other) as there, running_app() as here, sync_playwright() as p:
        browser = launch_browser(p)
        for r in range(runs):
            for i, (page, label, params, budget) in enumerate(cases):
                sides = [(0, there), (1, here)]
                for side, url in sides if i % 2 == 0 else sides[::-1]:
                    first, settled, _ = measure_latency(
                        browser, url, page, params, moves, budget.get("slider")
                    )
                    got[i]["first"][side].append(first)
                    got[i]["settled"][side].append(settled)
                a, b = got[i]["first"], got[i]["settled"]
                say(
                    f"run {r + 1} {Path(page).stem} / {label}: first {a[0][-1]:.0f} → "
                    f"{a[1][-1]:.0f} ms, drawn {b[0][-1]:.0f} → {b[1][-1]:.0f} ms"
                )
        browser.close()
    return got


def table(commit: str, here: str, cases: list, got: list[dict]) -> list[str]:
    rows = [
        f"| page | case | slider→first chart p50: {commit} → {here} | "
        f"slider→every chart drawn p50: {commit} → {here} |",
        "|---|---|---|---|",
    ]
    for (page, label, _params, budget), g in zip(cases, got):
        cells = []
        for key, limit in (("first", budget["first_ms"]), ("settled", budget["settled_ms"])):
            other, this = g[key]
            cells.append(f"{_cell(other, None)} → {_cell(this, limit)}")
        rows.append(f"| {Path(page).stem} | {label} | {cells[0]} | {cells[1]} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commit", help="the commit to compare this tree with (e.g. a hash or HEAD~3)")
    ap.add_argument("--match", default="", help="only cases whose page or label contain this")
    ap.add_argument("--moves", type=int, default=30)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run(
        [*git, "rev-parse", "--short", args.commit], check=True, capture_output=True, text=True
    ).stdout.strip()
    here = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True).stdout
    here += " + changes" if dirty.strip() else ""
    with tempfile.TemporaryDirectory(prefix="splitlab-ab-") as tmp:
        other = Path(tmp) / commit
        subprocess.run([*git, "worktree", "add", "--detach", str(other), commit], check=True)
        try:
            cases = [c for c in PAGE_CASES if (other / c[0]).exists() and args.match in c[0] + c[1]]
            say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
            got = measure(other, cases, args.moves, args.runs, say)
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", str(other)], check=False)
    load = os.getloadavg()
    print(
        f"`python -m benchmarks.against {' '.join(sys.argv[1:])}`: {args.runs} run(s) of "
        f"{args.moves} moves a side, both servers up at once, sides alternating case by case; "
        f"{os.cpu_count()} cores, load average {load[0]:.1f} at the end; a cell is the p50 "
        "(min–max over the runs); ✅ / ❌: this tree against the budget in brackets.\n"
    )
    print("\n".join(table(commit, here, cases, got)))


if __name__ == "__main__":
    main()
