"""Bounded reading of an upload: gunzip and JSON parsing as streams, so neither the time nor the
memory an upload costs depends on what it claims to contain.

Every limit is checked *while* reading, chunk by chunk: the decompressed bytes, the ratio of
decompressed to uploaded bytes, the number of gzip members, the events, the bytes of JSON between
two complete events (one event cannot grow without bound) and a wall-clock budget. A limit hit
raises a ValueError naming the limit. json's C decoder reads one event at a time from a
window of the text (class Stream); only the fields the analysis needs are kept
(core.traces.importer).
"""

from __future__ import annotations

import codecs
import json
import re
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

MB = 1e6
IN_CHUNK = 1 << 16  # compressed bytes handed to zlib at once
OUT_CHUNK = 1 << 20  # at most this many decompressed bytes per call
TRIM = "trim the trace to a few steps (torch.profiler schedule(wait=1, warmup=1, active=2))"


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What one upload may cost; the defaults are the page's limits."""

    max_bytes: float = 25 * MB  # the upload as sent (gzipped or plain)
    max_uncompressed_bytes: float = 300 * MB  # the JSON text after gunzip
    max_ratio: float = 200.0  # decompressed ÷ gzipped, checked past RATIO_FLOOR bytes
    max_members: int = 1000  # gzip members (torch writes one)
    max_events: int = 2_000_000
    max_event_bytes: float = 1 * MB  # JSON between two complete events (a runaway args list)
    max_seconds: float = 30.0  # wall clock for the whole read


RATIO_FLOOR = 10 * MB  # a small file may inflate a lot (an empty trace is mostly whitespace)


def size_text(n: float, limit: float) -> tuple[str, str]:
    """Both sizes with enough digits that the larger one is visibly larger."""
    for digits in range(0, 7):
        a, b = f"{n / MB:,.{digits}f}", f"{limit / MB:,.{digits}f}"
        if a != b or n == limit:
            return f"{a} MB", f"{b} MB"
    return f"{n:,.0f} bytes", f"{limit:,.0f} bytes"


class Clock:
    """A wall-clock budget checked between chunks."""

    def __init__(self, name: str, seconds: float):
        self.name, self.seconds, self.end = name, seconds, time.monotonic() + seconds

    def check(self, what: str) -> None:
        if time.monotonic() > self.end:
            raise ValueError(
                f"{self.name}: {what} took longer than {self.seconds:g} s (the limit for one "
                f"upload, so that one file cannot hold up the server): {TRIM}"
            )


def gunzip_chunks(data: bytes, name: str, lim: Limits, clock: Clock) -> Iterator[bytes]:
    """Decompressed chunks of every gzip member in turn. Each member is fed from its own offset
    in slices that start at 256 bytes and double up to IN_CHUNK, so a member costs about its own
    size to read: no quadratic copying however many (tiny) members there are.
    """
    view, pos, size, members = memoryview(data), 0, 0, 1
    ratio_cap = max(RATIO_FLOOR, lim.max_ratio * len(data))
    d, buf, feed = zlib.decompressobj(wbits=31), b"", 256
    try:
        while True:
            if not buf and pos < len(data):
                buf, pos, feed = bytes(view[pos : pos + feed]), pos + feed, min(2 * feed, IN_CHUNK)
            out = d.decompress(buf, OUT_CHUNK)
            buf = d.unconsumed_tail
            if out:
                size += len(out)
                if size > lim.max_uncompressed_bytes:
                    raise ValueError(
                        f"{name}: unzips to more than {lim.max_uncompressed_bytes / MB:,.0f} MB "
                        f"(the limit) from {len(data) / MB:.2g} MB: {TRIM}"
                    )
                if size > ratio_cap:
                    raise ValueError(
                        f"{name}: unzips to more than {lim.max_ratio:,.0f}× its "
                        f"{len(data) / MB:.2g} MB (the limit on the ratio; profiler traces "
                        f"compress about 10–30×): not a profiler trace, or {TRIM}"
                    )
                yield out
            clock.check("unzipping")
            if d.eof:
                pos = min(pos, len(data)) - len(d.unused_data)  # the next member starts here
                nonzero = _NONZERO.search(data, pos)  # zero padding after a member is allowed
                if nonzero is None:
                    return
                pos, buf, feed = nonzero.start(), b"", 256
                members += 1
                if members > lim.max_members:
                    raise ValueError(
                        f"{name}: has more than {lim.max_members:,} gzip members (the limit; "
                        "torch.profiler writes one): gunzip it and upload the plain .json, or "
                        "gzip it again as one stream"
                    )
                d = zlib.decompressobj(wbits=31)
            elif not buf and pos >= len(data) and not out:
                raise ValueError(
                    f"{name}: the gzip stream ends early (truncated file): the upload or the "
                    "export was cut off; export the trace again"
                )
    except zlib.error as err:
        raise ValueError(
            f"{name}: not a valid gzip file ({err}): export the trace again, or upload the plain "
            ".json"
        ) from None


_NONZERO = re.compile(rb"[^\0]")


def plain_chunks(data: bytes, clock: Clock) -> Iterator[bytes]:
    view = memoryview(data)
    for pos in range(0, len(data), OUT_CHUNK):
        clock.check("reading")
        yield bytes(view[pos : pos + OUT_CHUNK])


@dataclass(kw_only=True)
class Top:
    """What the trace says about itself besides its events (None when absent)."""

    is_list: bool = False
    rank: object = None
    world_size: object = None
    base_ns: object = None


def _no_constant(token: str):
    raise ValueError(f"{token} is not standard JSON")


_DECODE = json.JSONDecoder(parse_constant=_no_constant).raw_decode
_WS = re.compile(r"[ \t\n\r]*")


class _Ends(Exception):
    """The input ended inside a value."""


class Stream:
    """A JSON text fed in chunks: values are decoded one at a time by json's C decoder from a
    window that holds the current value and the chunk after it, so memory stays within
    max_event_bytes + one chunk whatever the document's size.
    """

    def __init__(self, chunks: Iterator[bytes], name: str, lim: Limits, clock: Clock):
        self.chunks, self.name, self.lim, self.clock = chunks, name, lim, clock
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.buf, self.pos, self.done = "", 0, False

    def _more(self) -> None:
        if self.done:
            raise _Ends
        self.clock.check("parsing")
        try:
            chunk = next(self.chunks, None)
            text = self.utf8.decode(chunk or b"", final=chunk is None)
        except UnicodeDecodeError as err:
            raise ValueError(f"{self.name}: not valid JSON (not UTF-8: {err.reason})") from None
        self.done = chunk is None
        self.buf, self.pos = self.buf[self.pos :] + text, 0

    def peek(self) -> str:
        """The next character after whitespace ('' at the end)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.done:
                return ""
            self._more()

    def expect(self, chars: str) -> str:
        c = self.peek()
        if not c:
            raise _Ends
        if c not in chars:
            raise ValueError(
                f"{self.name}: not valid JSON (expected {' or '.join(chars)} at character "
                f"{self.pos:,} of the part being read): upload the .json or .json.gz that "
                "torch.profiler wrote"
            )
        self.pos += 1
        return c

    def value(self):
        """Decode the next value, reading more input while it is incomplete (within the cap)."""
        self.peek()
        while True:
            try:
                v, self.pos = _DECODE(self.buf, self.pos)
                return v
            except json.JSONDecodeError as err:
                if self.done:
                    if not self.buf[err.pos :].strip() or err.msg.startswith("Unterminated"):
                        raise _Ends from None
                    raise ValueError(
                        f"{self.name}: not valid JSON ({err.msg}): upload the .json or .json.gz "
                        "that torch.profiler wrote"
                    ) from None
                if len(self.buf) - self.pos > self.lim.max_event_bytes:
                    raise ValueError(
                        f"{self.name}: one event or value is larger than "
                        f"{self.lim.max_event_bytes / MB:g} MB of JSON, or is not valid JSON "
                        f"({err.msg}): not a profiler trace"
                    ) from None
                self._more()
            except RecursionError:
                raise ValueError(
                    f"{self.name}: the JSON is nested too deeply to be a Chrome trace"
                ) from None
            except ValueError as err:  # NaN / Infinity, a 5,000-digit number
                raise ValueError(
                    f"{self.name}: not valid JSON ({str(err)[:120]}): export the trace again"
                ) from None


def _array(s: Stream, name: str, lim: Limits, count: list[int]):
    """The values of a JSON array whose "[" was just read."""
    if s.peek() == "]":
        s.pos += 1
        return
    while True:
        yield s.value()
        count[0] += 1
        if count[0] > lim.max_events:
            raise ValueError(f"{name}: has more than {lim.max_events:,} events (the limit): {TRIM}")
        if s.expect(",]") == "]":
            return


def events(chunks: Iterator[bytes], name: str, lim: Limits, clock: Clock, top: Top):
    """Yield the trace's events (any JSON values) as they are parsed; fill `top` on the way."""
    s, count = Stream(chunks, name, lim, clock), [0]
    try:
        first = s.peek()
        if not first:
            raise ValueError(
                f"{name}: file is empty: upload the .json or .json.gz that torch.profiler wrote"
            )
        if first == "[":
            s.pos += 1
            top.is_list = True
            yield from _array(s, name, lim, count)
        elif first == "{":
            s.pos += 1
            while s.peek() != "}":
                key = s.value()
                s.expect(":")
                if key == "traceEvents" and s.peek() == "[":
                    s.pos += 1
                    yield from _array(s, name, lim, count)
                else:
                    v = s.value()
                    if key == "distributedInfo" and isinstance(v, dict):
                        top.rank, top.world_size = v.get("rank"), v.get("world_size")
                    elif key == "baseTimeNanoseconds":
                        top.base_ns = v
                if s.expect(",}") == "}":
                    break
            else:
                s.pos += 1
        else:
            s.value()  # a scalar: valid JSON, not a trace
        if s.peek():
            raise ValueError(
                f"{name}: not valid JSON (extra data after the document): upload the .json or "
                ".json.gz that torch.profiler wrote"
            )
    except _Ends:
        raise ValueError(
            f"{name}: the JSON ends early: the file is truncated; export the trace again"
        ) from None
