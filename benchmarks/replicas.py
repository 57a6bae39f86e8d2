"""Load test through the two-replica nginx setup (deploy/run_replicas.sh) instead of one process.

Starts deploy/run_replicas.sh --background on free loopback ports, then runs benchmarks.load's
levels against nginx's port; CPU and memory are summed over the two replicas (/proc). Each
simulated tab opens one WebSocket without cookies, so nginx's split_clients spreads the tabs over
the replicas (the browser's cookie would then pin a tab's later requests to its replica). Every
process the script started is stopped at the end, also on failure.

Usage: python -m benchmarks.replicas [--sessions 100] [--seconds 20] [--page collectives]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.gauge import machine_gauge_ms
from benchmarks.load import ROOT, Remote, free_ports, measure, table
from tests.registry import registered_pages, url_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[100])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--max-reruns", type=int, default=10000)
    ap.add_argument("--page", default=url_path(registered_pages()[0][0]))
    ap.add_argument("--slider", default="", help="as in benchmarks.load")
    ap.add_argument("--whole-page", action="store_true", help="as in benchmarks.load")
    args = ap.parse_args()
    prefix = Path(tempfile.mkdtemp(prefix="splitlab-replicas-"))
    ports = dict(zip(("PROXY_PORT", "APP_PORT_A", "APP_PORT_B"), free_ports(3), strict=True))
    env = dict(os.environ, PREFIX=str(prefix), PYTHON=sys.executable, **map_str(ports))
    # Output to a file, not a pipe: the replicas and nginx inherit it and outlive the script.
    with open(prefix / "run_replicas.out", "w") as log:
        out = subprocess.run(
            ["bash", str(ROOT / "deploy" / "run_replicas.sh"), "--background"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=300,
        )
    pids = (
        [int(p) for p in (prefix / "pids").read_text().split()]
        if (prefix / "pids").exists()
        else []
    )
    try:
        if out.returncode != 0:
            text = (prefix / "run_replicas.out").read_text()[-2000:]
            raise RuntimeError(f"run_replicas.sh failed: {text}")
        url = f"http://127.0.0.1:{ports['PROXY_PORT']}"
        remote = Remote(url, pids[:2])  # the two replicas; the third pid is nginx
        pick = {"want": args.slider, "whole_page": args.whole_page}
        rows, gauge = [], machine_gauge_ms()
        for n in args.sessions:
            print(f"… {n} sessions on /{args.page} through nginx", file=sys.stderr, flush=True)
            rows.append(measure(args.page, n, args.seconds, args.max_reruns, [], pick, remote))
            print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
        log = (prefix / "access.log").read_text() if (prefix / "access.log").exists() else ""
        upgrades = len(re.findall(r"/_stcore/stream HTTP/1.1\" 101", log))
        how = "inside a fragment" if rows[-1]["fragment"] else "a full rerun"
        print(
            f"Page /{args.page}, slider `{rows[-1]['slider']}` ({how}); nginx in front of two "
            f"replicas (deploy/run_replicas.sh), CPU and memory summed over both; "
            f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the end; "
            f"machine gauge {gauge:.0f} ms at the start (benchmarks/gauge.py); "
            f"{args.seconds:.0f} s per level; {upgrades} WebSocket upgrades in nginx's log.\n"
        )
        print(table(rows))
    finally:
        for pid in pids:
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass


def map_str(d: dict) -> dict:
    return {k: str(v) for k, v in d.items()}


if __name__ == "__main__":
    main()
