"""Read uploads in a child process: a hard memory cap, a kill at the wall-clock budget, its own
interpreter lock and the idle CPU class (Linux SCHED_IDLE, nice 19), so one visitor's upload
cannot stall the sessions of everyone else in the server process (issue 19's load run:
benchmarks/hostile_load.py).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from core.traces.analysis import TraceAnalysis, analyze
from core.traces.importer import Trace, load_trace
from core.traces.reader import Limits

MEMORY_BYTES = 3 * 10**9  # address space of the reading process (Python + numpy + the columns)
GRACE_S = 15.0  # past the reader's own wall-clock budget, the process is killed
ROOT = Path(__file__).resolve().parents[2]


def _work(files, limits: Limits, memory_bytes: int, analysed: bool = False):
    """In the child: cap its memory, step back in CPU priority, read every file (and analyse
    them: then only the small per-rank results cross back, not the event columns)."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        os.nice(19)  # the server's sessions first; SCHED_IDLE: only CPU nobody else wants
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, ImportError, OSError, ValueError):
        pass
    try:
        out = [
            load_trace(data, name=name, default_rank=i, limits=limits)
            for i, (name, data) in enumerate(files)
        ]
        return analyze(out) if analysed else out
    except ValueError as err:
        return err
    except MemoryError:
        return ValueError(
            f"reading the upload needed more than {memory_bytes / 1e9:g} GB of memory (the "
            "limit for one upload): trim the trace to a few steps"
        )


def load_isolated(
    files: tuple[tuple[str, bytes], ...],
    *,
    limits: Limits | None = None,
    memory_bytes: int = MEMORY_BYTES,
    analysed: bool = False,
) -> list[Trace] | TraceAnalysis:
    """load_trace for each (name, bytes), in order, in a fresh `python -m core.traces.isolate`
    (a plain subprocess: multiprocessing's spawn would re-run the Streamlit page, which is
    the server's __main__ during a script run); a file without distributedInfo.rank takes its
    position; with `analysed`, core.traces.analyze of them, computed in the child too. Raises
    the reader's (or the analysis') ValueError, or one naming the time or memory limit when the
    child is killed or dies."""
    lim = limits or Limits()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "core.traces.isolate"],
            input=pickle.dumps((files, lim, memory_bytes, analysed)),
            capture_output=True,
            cwd=ROOT,
            timeout=lim.max_seconds + GRACE_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ValueError(
            f"reading the upload took longer than {lim.max_seconds + GRACE_S:g} s (the limit "
            "for one upload) and was stopped: trim the trace to a few steps"
        ) from None
    if proc.returncode != 0 or not proc.stdout:
        raise ValueError(
            "reading the upload stopped without a result (it ran out of its "
            f"{memory_bytes / 1e9:g} GB of memory or crashed): trim the trace to a few steps"
        )
    out = pickle.loads(proc.stdout)  # written by our own child below, never by the upload
    if isinstance(out, ValueError):
        raise out
    return out


if __name__ == "__main__":
    sys.stdout.buffer.write(pickle.dumps(_work(*pickle.loads(sys.stdin.buffer.read()))))
