"""Read uploads in a child process: a hard memory cap, a kill at the wall-clock budget, its own
interpreter lock and a lower CPU priority, so one visitor's upload cannot stall the sessions of
everyone else in the server process (issue 19's load run: benchmarks/hostile_load.py).
"""

from __future__ import annotations

import multiprocessing
import os

from core.traces.importer import Trace, load_trace
from core.traces.reader import Limits

MEMORY_BYTES = 3 * 10**9  # address space of the reading process (Python + numpy + the columns)
GRACE_S = 15.0  # past the reader's own wall-clock budget, the process is killed


def _work(conn, files, limits: Limits, memory_bytes: int) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        os.nice(10)  # the server's sessions first
    except (ImportError, OSError, ValueError):
        pass
    try:
        out = [
            load_trace(data, name=name, default_rank=i, limits=limits)
            for i, (name, data) in enumerate(files)
        ]
    except ValueError as err:
        out = err
    except MemoryError:
        out = ValueError(
            f"reading the upload needed more than {memory_bytes / 1e9:g} GB of memory (the "
            "limit for one upload): trim the trace to a few steps"
        )
    conn.send(out)
    conn.close()


def load_isolated(
    files: tuple[tuple[str, bytes], ...],
    *,
    limits: Limits | None = None,
    memory_bytes: int = MEMORY_BYTES,
) -> list[Trace]:
    """load_trace for each (name, bytes), in order, run in a fresh child process; a file without
    distributedInfo.rank takes its position. Raises the reader's ValueError, or one naming the
    time or memory limit when the child is killed or dies."""
    lim = limits or Limits()
    ctx = multiprocessing.get_context("spawn")  # no fork of a threaded server
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_work, args=(send, files, lim, memory_bytes), daemon=True)
    child.start()
    send.close()
    try:
        if not recv.poll(lim.max_seconds + GRACE_S):
            raise ValueError(
                f"reading the upload took longer than {lim.max_seconds + GRACE_S:g} s (the limit "
                "for one upload) and was stopped: trim the trace to a few steps"
            )
        try:
            out = recv.recv()
        except EOFError:
            raise ValueError(
                "reading the upload stopped without a result (it ran out of its "
                f"{memory_bytes / 1e9:g} GB of memory or crashed): trim the trace to a few "
                "steps"
            ) from None
    finally:
        recv.close()
        if child.is_alive():
            child.kill()
        child.join(5)
    if isinstance(out, ValueError):
        raise out
    return out
