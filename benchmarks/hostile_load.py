"""Hostile load: does one visitor uploading the worst trace slow everyone else down?

One app process on 127.0.0.1 (benchmarks.load.App). N sessions rerun a page with new slider values
in a closed loop (benchmarks.load.Session): alone, then while one more session uploads the
worst trace to the Plan vs trace page again and again, over Streamlit's own protocol:
a `file_urls_request` BackMsg, an HTTP PUT of the file to the upload URL the server returns, and
a rerun carrying the file uploader's state (streamlit/streamlit proto/streamlit/proto/ and
lib/streamlit/web/server/ for the wire format), then alone again. The result is each phase's
rerun p50 / p95.

The worst file: a gzipped trace of 2,000,000 complete events (the event cap) with distinct
timestamps, so it passes every limit and costs the server the most parsing it can.

Usage: python -m benchmarks.hostile_load [--sessions 20] [--seconds 20] [--events 2000000]
Bounded and self-stopping: each phase measures for --seconds, reruns time out after 60 s, the
whole run has a hard deadline, only 127.0.0.1 is contacted and the app process is always stopped.
XSRF protection is off for this loopback server only (the PUT would need the browser's cookie).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import statistics
import time
import urllib.request
import uuid

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.load import ROOT, App, Session

TRACE_PAGE = "trace"


def worst_trace(events: int) -> bytes:
    """A valid trace at the event cap: one thread of 3 µs ops, distinct timestamps."""
    body = b",".join(
        b'{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":%d,"ts":%d,"dur":3}'
        % (i % 4, 5 * i)
        for i in range(events - 1)
    )
    step = b'{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":0,"dur":%d}' % (
        5 * events
    )
    return gzip.compress(b'{"traceEvents":[' + step + b"," + body + b"]}", compresslevel=6)


class Uploader(Session):
    """A session that opens /trace?demo=false and uploads one file, again and again."""

    session_id: str = ""
    uploader_id: str = ""

    async def _until_done(self, want: str | None = None) -> ForwardMsg | None:
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(await asyncio.wait_for(self.ws.recv(), timeout=120))
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.session_id = fwd.new_session.initialize.session_id or self.session_id
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                el = fwd.delta.new_element
                if el.WhichOneof("type") == "file_uploader":
                    self.uploader_id = el.file_uploader.id
                elif el.WhichOneof("type") == "exception":
                    self.exceptions += 1
            if kind == want:
                return fwd
            if kind == "script_finished" and want is None:
                return None

    async def open_trace(self) -> None:
        from benchmarks.load import open_stream

        self.ws = await open_stream(self.url)
        await self._send_rerun()
        await self._until_done()
        if not (self.session_id and self.uploader_id):
            raise RuntimeError("no session id or file uploader on /trace?demo=false")

    async def _send_rerun(self, state=None) -> None:
        msg = BackMsg()
        msg.rerun_script.page_name = TRACE_PAGE
        msg.rerun_script.query_string = "demo=false"
        if state is not None:
            w = msg.rerun_script.widget_states.widgets.add()
            w.id = self.uploader_id
            w.file_uploader_state_value.CopyFrom(state)
        await self.ws.send(msg.SerializeToString())

    async def upload(self, name: str, data: bytes) -> float:
        """Seconds from asking for an upload URL to the page's rerun finishing."""
        t0 = time.perf_counter()
        msg = BackMsg()
        msg.file_urls_request.request_id = uuid.uuid4().hex
        msg.file_urls_request.file_names.append(name)
        msg.file_urls_request.session_id = self.session_id
        await self.ws.send(msg.SerializeToString())
        urls = (await self._until_done("file_urls_response")).file_urls_response.file_urls[0]
        await asyncio.to_thread(put, self.url + urls.upload_url, name, data)
        from streamlit.proto.Common_pb2 import FileUploaderState

        state = FileUploaderState()
        info = state.uploaded_file_info.add()
        info.file_id, info.name, info.size = urls.file_id, name, len(data)
        info.file_urls.CopyFrom(urls)
        await self._send_rerun(state)
        await self._until_done()
        return time.perf_counter() - t0


def put(url: str, name: str, data: bytes) -> None:
    """The multipart PUT the browser's uploader sends (one file)."""
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/gzip\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    req = urllib.request.Request(url, data=body, method="PUT")
    req.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    with urllib.request.urlopen(req, timeout=120) as r:
        r.read()


async def phase(app: App, page: str, n: int, seconds: float, upload: bytes | None) -> dict:
    """n sessions rerun `page` for `seconds`; with `upload`, one more uploads it meanwhile."""
    # whole-page reruns (the first slider outside any fragment), as this test was calibrated with
    sessions = [Session(app.url, page, whole_page=True) for _ in range(n)]
    await asyncio.gather(*(s.open() for s in sessions))
    up = None
    if upload is not None:
        up = Uploader(app.url, TRACE_PAGE)
        await up.open_trace()
    lat: list[float] = []
    uploads: list[float] = []
    stop_at = time.perf_counter() + seconds

    async def loop(i: int, s: Session) -> None:
        k = i
        while time.perf_counter() < stop_at:
            lat.append(await s.rerun(s.values[k % len(s.values)]))
            k += 1

    async def uploading() -> None:  # uploads until the phase ends; the last one is awaited
        while time.perf_counter() < stop_at:
            uploads.append(await up.upload("worst.json.gz", upload))

    tasks = [loop(i, s) for i, s in enumerate(sessions)] + ([uploading()] if up else [])
    await asyncio.gather(*tasks)  # the sessions stop on time; an upload in flight is awaited,
    # so the next phase starts on a quiet server
    for s in sessions + ([up] if up else []):
        await s.close()
    q = statistics.quantiles(lat, n=100)
    return {
        "reruns": len(lat),
        "p50_ms": q[49] * 1e3,
        "p95_ms": q[94] * 1e3,
        "uploads": len(uploads),
        "upload_s": statistics.median(uploads) if uploads else 0.0,
        "exceptions": sum(s.exceptions for s in sessions) + (up.exceptions if up else 0),
    }


def run(sessions: int, seconds: float, events: int, page: str) -> dict:
    data = worst_trace(events)
    app = App(["--server.enableXsrfProtection", "false"])
    try:

        async def go() -> dict:
            warm = Session(app.url, "")  # the entry page first: registers st.navigation
            await warm.open()
            await warm.close()
            # quiet, loud, quiet: the two baselines bracket the loud phase, so drift in the
            # machine's own load shows up as a difference between them
            quiet = await phase(app, page, sessions, seconds, None)
            loud = await phase(app, page, sessions, seconds, data)
            after = await phase(app, page, sessions, seconds, None)
            return {
                "quiet": quiet,
                "loud": loud,
                "after": after,
                "file_mb": len(data) / 1e6,
                "events": events,
            }

        return asyncio.run(asyncio.wait_for(go(), timeout=6 * seconds + 300))
    finally:
        app.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=20.0, help="measuring time per phase")
    ap.add_argument("--events", type=int, default=2_000_000, help="events in the worst file")
    ap.add_argument("--page", default="collectives", help="url path the sessions rerun")
    a = ap.parse_args()
    (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
    r = run(a.sessions, a.seconds, a.events, a.page)
    q, lo, af = r["quiet"], r["loud"], r["after"]
    print(
        f"{a.sessions} sessions on /{a.page}, {a.seconds:.0f} s per phase; worst file "
        f"{r['file_mb']:.1f} MB gzipped, {r['events']:,} events\n"
        f"alone:            {q['reruns']} reruns, p50 {q['p50_ms']:.0f} ms, p95 "
        f"{q['p95_ms']:.0f} ms\n"
        f"with the uploads: {lo['reruns']} reruns, p50 {lo['p50_ms']:.0f} ms, p95 "
        f"{lo['p95_ms']:.0f} ms ({lo['p95_ms'] / q['p95_ms'] - 1:+.0%}); {lo['uploads']} "
        f"uploads, median {lo['upload_s']:.1f} s each; page exceptions {lo['exceptions']}\n"
        f"alone again:      {af['reruns']} reruns, p50 {af['p50_ms']:.0f} ms, p95 "
        f"{af['p95_ms']:.0f} ms; loud p95 vs the mean of the two quiet ones: "
        f"{lo['p95_ms'] / ((q['p95_ms'] + af['p95_ms']) / 2) - 1:+.0%}; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
