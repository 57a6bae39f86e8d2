"""Load test: browserless WebSocket sessions against ONE app process on loopback.

Each session speaks Streamlit's own protocol (streamlit/streamlit proto/streamlit/proto/): open
/_stcore/stream with sub-protocol "streamlit", send a BackMsg `rerun_script` for the page, read
ForwardMsgs until `script_finished`, harvest the page's first main-area slider from the deltas, then
rerun with `widget_states` carrying a new slider value, again and again (closed loop, no think time:
the worst case of everyone dragging a slider at once). For each concurrency level a fresh app
process is started, so memory per session is measured from a clean baseline (VmRSS from /proc).

Usage: python -m benchmarks.load [--sessions 10 50] [--seconds 20] [--page collectives]
Bounded: at most --max-reruns reruns and --seconds of measuring per level, a 60 s per-rerun timeout
and a hard deadline per level; only 127.0.0.1 is contacted; the app process is always stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.gauge import machine_gauge_ms  # noqa: E402
from tests.registry import registered_pages, url_path  # noqa: E402

DONE = {
    ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY"),
    ForwardMsg.ScriptFinishedStatus.Value("FINISHED_FRAGMENT_RUN_SUCCESSFULLY"),
}
MAIN = 0  # delta_path[0]: 0 = main area, 1 = sidebar


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` different free ports: every socket stays bound until all are chosen (one at a
    time, the kernel may hand the same port out twice: a replicas run at 13:05 UTC on 2026-12-07
    started both replicas on one port, and the second exited)."""
    import socket
    from contextlib import ExitStack

    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def _proc(pid: int, name: str) -> str:
    return Path(f"/proc/{pid}/{name}").read_text()


def _status(pid: int, field_name: str) -> int:
    line = next(x for x in _proc(pid, "status").splitlines() if x.startswith(field_name))
    return int(line.split()[1])


def rss_mib(pid: int) -> float:
    return _status(pid, "VmRSS") / 1024


def cpu_s(pid: int) -> float:
    fields = _proc(pid, "stat").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def threads(pid: int) -> int:
    return _status(pid, "Threads")


class App:
    """One `streamlit run app.py` on 127.0.0.1 with the repo's .streamlit/config.toml."""

    def __init__(self, extra: list[str], cwd: Path = ROOT, env: dict | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        results = ROOT / "benchmarks" / "results"  # git-ignored: absent on a fresh clone
        results.mkdir(exist_ok=True)
        self.log = open(results / "load-streamlit.log", "w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.address",
                "127.0.0.1",
                "--server.port",
                str(self.port),
                "--server.headless",
                "true",
                *extra,
            ],
            cwd=cwd,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError("streamlit did not become healthy")
            time.sleep(0.2)

    def rss_mib(self) -> float:
        return rss_mib(self.proc.pid)

    def cpu_s(self) -> float:
        return cpu_s(self.proc.pid)

    def threads(self) -> int:
        return threads(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class Remote(App):
    """Already running server(s) at `url` (e.g. nginx in front of replicas): nothing is started
    or stopped; CPU, memory and threads are the sums over `pids` (the app processes)."""

    def __init__(self, url: str, pids: list[int]):
        self.url, self.pids = url.rstrip("/"), pids

    def rss_mib(self) -> float:
        return sum(rss_mib(p) for p in self.pids)

    def cpu_s(self) -> float:
        return sum(cpu_s(p) for p in self.pids)

    def threads(self) -> int:
        return sum(threads(p) for p in self.pids)

    def stop(self) -> None:
        pass


async def open_stream(url: str):
    """A browser tab's WebSocket to the app at `url` (sub-protocol streamlit, Origin = Host)."""
    return await connect(
        url.replace("http", "ws") + "/_stcore/stream",
        subprotocols=["streamlit"],
        origin=url,
        max_size=2**28,
        compression=None,
        ping_interval=None,
        open_timeout=60,
    )


@dataclass
class Session:
    url: str
    page: str
    want: str = ""  # the slider's user key; "" = the first slider inside a fragment, else the first
    whole_page: bool = False  # True: the first main-area slider rerunning the whole page (sent
    # without its fragment's id, as before fragments: a baseline)
    ws: object = None
    slider_id: str = ""
    fragment_id: str = ""  # the fragment holding the slider: the browser reruns only that
    values: list[float] = field(default_factory=list)
    charts: int = 0
    exceptions: int = 0
    cached: dict[str, int] = field(default_factory=dict)  # message hash -> run it was last seen
    runs: int = 0

    async def open(self) -> float:
        self.ws = await open_stream(self.url)
        return await self.rerun()

    def _take(self, s, fragment_id: str) -> None:
        """Pick the slider to move from the sliders a run drew (main area only)."""
        key = s.id.split("-", 2)[2] if s.id.count("-") >= 2 else ""
        if self.want:
            ok = key == self.want and not self.slider_id
        elif self.whole_page:
            ok, fragment_id = not self.slider_id, ""
        else:  # the first slider inside a fragment, else the first slider
            ok = not self.slider_id or bool(fragment_id and not self.fragment_id)
        if not ok:
            return
        # --whole-page sends no fragment id, also with --slider (a slider whose on_change reruns
        # fragments by key, N on /collectives, turns even such a run into those fragments' run:
        # name one without, e.g. --whole-page --slider elems)
        self.slider_id, self.fragment_id = s.id, "" if self.whole_page else fragment_id
        step = s.step or 1
        n = int(min((s.max - s.min) / step, 7))  # a handful of values: caches warm up
        self.values = [s.min + step * i for i in range(1, n + 1)]

    async def rerun(self, value: float | None = None) -> float:
        """Send one rerun (optionally with a new slider value); seconds until script_finished.
        Like the browser, it sends the hashes of the large messages it holds (Streamlit then
        sends a reference instead of an unchanged chart) and the slider's fragment id."""
        msg = BackMsg()
        state = msg.rerun_script
        state.page_name = self.page  # the URL path, as the browser sends it
        state.cached_message_hashes.extend(self.cached)
        if value is not None:
            w = state.widget_states.widgets.add()
            w.id = self.slider_id
            w.double_array_value.data.append(value)
            state.fragment_id = self.fragment_id
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        self.charts = 0
        self.runs += 1
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(await asyncio.wait_for(self.ws.recv(), timeout=60))
            kind = fwd.WhichOneof("type")
            if fwd.metadata.cacheable and fwd.hash:
                self.cached[fwd.hash] = self.runs
            elif kind == "ref_hash":
                self.cached[fwd.ref_hash] = self.runs
            if kind in ("delta", "ref_hash") and (
                kind == "ref_hash" or fwd.delta.WhichOneof("type") == "new_element"
            ):
                el = fwd.delta.new_element
                # a ref_hash is an unchanged element of 10 kB or more: in practice, a chart
                et = "bidi_component" if kind == "ref_hash" else el.WhichOneof("type")
                # st.plotly_chart too: the app drew its charts with it before 2026-12-04, and a
                # same-hour A/B drives an old commit's server with this driver (docs/load.md)
                if et in ("bidi_component", "plotly_chart"):
                    self.charts += 1
                elif et == "exception":
                    self.exceptions += 1
                elif et == "slider" and fwd.metadata.delta_path[0] == MAIN:
                    self._take(el.slider, fwd.delta.fragment_id)
            elif kind == "script_finished" and fwd.script_finished in DONE:
                # the browser forgets messages not used for maxCachedMessageAge (2) runs
                self.cached = {h: r for h, r in self.cached.items() if self.runs - r < 2}
                return time.perf_counter() - t0

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


async def run_level(
    app: App, page: str, n: int, seconds: float, max_reruns: int, pick: dict | None = None
) -> dict:
    """n sessions open the page, then rerun it with new slider values for `seconds`."""
    sessions = [Session(app.url, page, **(pick or {})) for _ in range(n)]
    t0 = time.perf_counter()
    first = await asyncio.gather(*(s.open() for s in sessions))
    connect_s = time.perf_counter() - t0
    rss_connected = app.rss_mib()  # n idle sessions, each with its page drawn once
    if not all(s.slider_id for s in sessions):
        raise RuntimeError(f"page {page!r}: no slider found in the main area")
    if not all(s.charts for s in sessions):
        raise RuntimeError(f"page {page!r}: a session got no chart")
    samples: list[tuple[float, float]] = []  # (finished at, latency s)
    errors: list[str] = []
    start, cpu_start = time.perf_counter(), app.cpu_s()
    stop_at = start + seconds

    async def loop(i: int, s: Session) -> None:
        for value in itertools.cycle(s.values[i % len(s.values) :] + s.values[: i % len(s.values)]):
            if time.perf_counter() >= stop_at or len(samples) >= max_reruns:
                return
            try:
                latency = await s.rerun(value)
            except Exception as err:  # a timeout or a dropped connection is a finding, not a crash
                errors.append(f"{type(err).__name__}: {err}")
                return
            if not s.charts:
                errors.append("rerun sent no chart")
            samples.append((time.perf_counter(), latency))

    await asyncio.gather(*(loop(i, s) for i, s in enumerate(sessions)))
    elapsed, cpu_loop = time.perf_counter() - start, app.cpu_s() - cpu_start
    exceptions = sum(s.exceptions for s in sessions)
    await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
    lat = sorted(latency for _, latency in samples)
    q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [lat[0]] * 99
    return {
        "sessions": n,
        "reruns": len(lat),
        "seconds": elapsed,
        "rate": len(lat) / elapsed,
        "p50": q[49] * 1000,
        "p95": q[94] * 1000,
        "max": lat[-1] * 1000,
        "first_p50": statistics.median(first) * 1000,
        "first_max": max(first) * 1000,
        "connect_s": connect_s,
        "errors": errors,
        "exceptions": exceptions,
        "cpu_loop_ms_per_rerun": cpu_loop * 1000 / max(len(lat), 1),  # first loads excluded
        "rss_connected": rss_connected,
        "slider": sessions[0].slider_id.split("-", 2)[-1],
        "fragment": bool(sessions[0].fragment_id),
    }


def measure(
    page: str,
    n: int,
    seconds: float,
    max_reruns: int,
    extra: list[str],
    pick: dict | None = None,
    remote: Remote | None = None,
) -> dict:
    app = remote or App(extra)
    try:

        async def go() -> dict:
            # through a proxy, a few tabs so that every replica has loaded the page (1 - 2^-7)
            for _ in range(8 if isinstance(app, Remote) else 1):
                warm = Session(app.url, "")  # the entry page first: registers st.navigation
                await warm.open()
                warm.page = page
                await warm.rerun()
                await warm.close()
            await asyncio.sleep(1)
            base = app.rss_mib()
            cpu0 = app.cpu_s()
            peak = [base]

            async def sample() -> None:
                while True:
                    peak[0] = max(peak[0], app.rss_mib())
                    await asyncio.sleep(0.5)

            sampler = asyncio.create_task(sample())
            try:
                result = await asyncio.wait_for(
                    run_level(app, page, n, seconds, max_reruns, pick), timeout=seconds + 300
                )
            finally:
                sampler.cancel()
            cpu = app.cpu_s() - cpu0
            result["cpu_share"] = cpu / (result["seconds"] + result["connect_s"])
            result["cpu_ms_per_rerun"] = (
                cpu * 1000 / (result["reruns"] + n)
            )  # first loads count too
            result["rss_base"], result["rss_peak"] = base, max(peak[0], app.rss_mib())
            result["threads"] = app.threads()
            return result

        return asyncio.run(go())
    finally:
        app.stop()


HEADER = (
    "Sessions",
    "Reruns",
    "Sustained reruns/s",
    "p50 ms",
    "p95 ms",
    "max ms",
    "First load p50 / max ms",
    "Server CPU (ms per rerun)",
    "CPU ms per rerun, first loads excluded",
    "RSS base → all connected → peak MiB",
    "MiB per session (idle / peak)",
    "Errors",
)


def table(rows: list[dict]) -> str:
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---:|" * (len(HEADER) - 1) + "---|"]
    for r in rows:
        idle = (r["rss_connected"] - r["rss_base"]) / r["sessions"]
        busy = (r["rss_peak"] - r["rss_base"]) / r["sessions"]
        errs = f"{len(r['errors'])} ({r['errors'][0]})" if r["errors"] else "0"
        if r["exceptions"]:
            errs += f"; {r['exceptions']} page exceptions"
        cells = (
            r["sessions"],
            r["reruns"],
            f"{r['rate']:.1f}",
            f"{r['p50']:,.0f}",
            f"{r['p95']:,.0f}",
            f"{r['max']:,.0f}",
            f"{r['first_p50']:,.0f} / {r['first_max']:,.0f}",
            f"{r['cpu_share']:.0%} ({r['cpu_ms_per_rerun']:.0f})",
            f"{r['cpu_loop_ms_per_rerun']:.0f}",
            f"{r['rss_base']:.0f} → {r['rss_connected']:.0f} → {r['rss_peak']:.0f}",
            f"{idle:.2f} / {busy:.2f}",
            errs,
        )
        out.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--seconds", type=float, default=20.0, help="measuring time per level")
    ap.add_argument("--max-reruns", type=int, default=5000, help="cap per level")
    ap.add_argument(
        "--page",
        default=url_path(registered_pages()[0][0]),
        help="url path of the page (default: the first registered page)",
    )
    ap.add_argument(
        "--streamlit-arg",
        action="append",
        default=[],
        help="extra `streamlit run` option, e.g. --streamlit-arg=--runner.postScriptGC=true",
    )
    ap.add_argument(
        "--slider",
        default="",
        help="user key of the slider to move (default: the first one inside an st.fragment, "
        "which the browser reruns alone, else the page's first main-area slider)",
    )
    ap.add_argument(
        "--whole-page",
        action="store_true",
        help="move the first main-area slider (or --slider's) and rerun the whole page each time "
        "(sent without its fragment's id: the baseline from before fragments); on /collectives "
        "name --slider elems, as N's on_change reruns its fragments by key",
    )
    ap.add_argument(
        "--url",
        default="",
        help="drive a server that is already running (e.g. nginx: http://127.0.0.1:8080) "
        "instead of starting one per level",
    )
    ap.add_argument(
        "--pid",
        type=int,
        nargs="*",
        default=[],
        help="with --url: the app processes whose CPU and memory to sum",
    )
    args = ap.parse_args()
    remote = Remote(args.url, args.pid) if args.url else None
    pick = {"want": args.slider, "whole_page": args.whole_page}
    (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
    rows, gauge = [], machine_gauge_ms()
    for n in args.sessions:
        print(f"… {n} sessions on /{args.page}", file=sys.stderr, flush=True)
        rows.append(
            measure(args.page, n, args.seconds, args.max_reruns, args.streamlit_arg, pick, remote)
        )
        print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    load = os.getloadavg()
    where = f"{args.url}, {len(args.pid)} app processes summed" if remote else "one app process"
    how = "inside a fragment: a move reruns only it" if rows[-1]["fragment"] else "a full rerun"
    print(
        f"Page /{args.page}, slider `{rows[-1]['slider']}` ({how}); "
        f"{where}; "
        f"{os.cpu_count()} cores; load average before the last level {load[0]:.1f}; "
        f"machine gauge {gauge:.0f} ms at the start (benchmarks/gauge.py; lower is a faster "
        f"hour); {args.seconds:.0f} s per level.\n"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
