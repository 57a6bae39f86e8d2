"""Export a simulated pipeline timeline: Chrome trace-event JSON and a table (DataFrame / CSV)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.pipeline.result import KINDS, PipelineResult

_KINDS = np.array(KINDS)


def op_names(result: PipelineResult) -> list[str]:
    """Box names such as 'F m3 c0' (kind, micro-batch, chunk)."""
    ops = result.ops
    return [
        f"{k} m{m} c{c}"
        for k, m, c in zip(_KINDS[ops.kind].tolist(), ops.microbatch.tolist(), ops.chunk.tolist())
    ]


def to_chrome_trace(result: PipelineResult) -> dict:
    """Trace-event JSON (opens in Perfetto / chrome://tracing): one thread track per rank, µs."""
    ops = result.ops
    events: list[dict] = [
        {
            "name": "process_name",
            "ph": "M",
            "pid": 0,
            "tid": 0,
            "args": {"name": f"{result.label} P={result.num_stages} M={result.num_microbatches}"},
        }
    ]
    events += [
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": r, "args": {"name": f"rank {r}"}}
        for r in range(result.num_stages)
    ]
    # Trace timestamps are microseconds; round to ns precision to keep the JSON short.
    ts = np.round(ops.start_s * 1e6, 3).tolist()
    dur = np.round((ops.end_s - ops.start_s) * 1e6, 3).tolist()
    for name, kind, r, s, c, m, t, d, pair in zip(
        op_names(result),
        _KINDS[ops.kind].tolist(),
        ops.rank.tolist(),
        ops.stage.tolist(),
        ops.chunk.tolist(),
        ops.microbatch.tolist(),
        ts,
        dur,
        ops.overlapped.tolist(),
    ):
        events.append(
            {
                "name": name,
                "cat": kind,
                "ph": "X",
                "pid": 0,
                "tid": r,
                "ts": t,
                "dur": d,
                "args": {"stage": s, "chunk": c, "microbatch": m, "overlapped": pair},
            }
        )
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def to_dataframe(result: PipelineResult) -> pd.DataFrame:
    """One row per op, sorted by rank then start time."""
    ops = result.ops
    return pd.DataFrame(
        {
            "rank": ops.rank,
            "stage": ops.stage,
            "chunk": ops.chunk,
            "microbatch": ops.microbatch,
            "kind": _KINDS[ops.kind],
            "start_s": ops.start_s,
            "end_s": ops.end_s,
            "duration_s": ops.end_s - ops.start_s,
            "overlapped": ops.overlapped,
        }
    )


def to_csv(result: PipelineResult) -> str:
    """The op table as CSV text (header + one line per op)."""
    return to_dataframe(result).to_csv(index=False)
