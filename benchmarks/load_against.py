"""Same-hour load A/B: one app process of another commit and one of this tree, driven in turns by
the same browserless driver (benchmarks/load.py), level by level.

    python -m benchmarks.load_against e119746 --sessions 50 --seconds 20 --rounds 2

Why: this machine's speed moves by the hour (one code measured 59 and 73 reruns/s an hour apart,
docs/load.md), so "≥ 2× the reruns/s measured when issue 18 was filed" is only fair against the
old code measured in the same minutes. e119746 is the commit whose load run gave the 37.7
reruns/s that issue quotes; its pages draw with st.plotly_chart and have no fragments, so the
driver moves its first slider (N) with a whole rerun, as then, and this tree's N in its
fragment, as now. The other commit is checked out into a temporary `git worktree`; each level
runs the other commit, then this tree, `--rounds` times.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.gauge import machine_gauge_ms
from benchmarks.load import ROOT, App, measure, table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commit", help="the commit to compare this tree with (e.g. e119746)")
    ap.add_argument("--sessions", type=int, nargs="+", default=[50])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--page", default="collectives")
    args = ap.parse_args()
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run(
        [*git, "rev-parse", "--short", args.commit], check=True, capture_output=True, text=True
    ).stdout.strip()
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    lines, gauges = [], [machine_gauge_ms()]
    with tempfile.TemporaryDirectory(prefix="splitlab-load-ab-") as tmp:
        other = Path(tmp) / commit
        subprocess.run([*git, "worktree", "add", "--detach", str(other), commit], check=True)
        env = os.environ.copy()
        if "uvloop" not in (other / "requirements.txt").read_text():
            # Streamlit serves on uvloop whenever it can import it (this tree pins it): the old
            # commit ran without, so its server gets a uvloop that cannot be imported
            hide = Path(tmp) / "no-uvloop"
            hide.mkdir()
            (hide / "uvloop.py").write_text("raise ModuleNotFoundError('hidden for a baseline')\n")
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hide), env.get("PYTHONPATH")]))
        try:
            for n in args.sessions:
                for r in range(args.rounds):
                    got = []
                    for side, cwd, side_env in ((commit, other, env), ("this tree", ROOT, None)):
                        app = App([], cwd, side_env)
                        row = measure(args.page, n, args.seconds, 5000, [], remote=app)
                        got.append(row)
                        last = table([row]).splitlines()[-1]
                        say(f"{n} sessions, round {r + 1}, {side}: {last}")
                    ratio = got[1]["rate"] / got[0]["rate"]
                    lines.append(
                        f"| {n} | {r + 1} | {got[0]['rate']:.1f} | {got[0]['p95']:,.0f} | "
                        f"{got[1]['rate']:.1f} | {got[1]['p95']:,.0f} | {ratio:.2f}× |"
                    )
                gauges.append(machine_gauge_ms())
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", str(other)], check=False)
    print(
        f"`python -m benchmarks.load_against {' '.join(sys.argv[1:])}`: page /{args.page}, one "
        f"app process per side, {args.seconds:.0f} s a level; machine gauge "
        f"{min(gauges):.0f}–{max(gauges):.0f} ms (benchmarks/gauge.py).\n"
    )
    print(
        f"| Sessions | Round | {commit} reruns/s | {commit} p95 ms | this tree reruns/s | "
        "this tree p95 ms | this tree ÷ old |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
