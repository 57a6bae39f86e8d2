"""A planner step as Chrome trace-event JSON: one track per pipeline rank, bubble and syncs
marked.
"""

from __future__ import annotations

import numpy as np

from core.pipeline import to_chrome_trace
from core.planner.evaluate import Evaluation
from core.traces import IDLE, meta_events, runs, slice_event, union


def planner_step_trace(ev: Evaluation) -> dict:
    """A planner step (core.planner.evaluate) as trace events: one track per pipeline rank.

    Each F/B op of the simulated schedule holds two child slices, compute then its share of the
    exposed TP / PP / ZeRO-3 communication (StageTimes gives that share per micro-batch, not per
    direction, so every op gets the same fraction); gaps are the bubble; then every rank waits for
    the exposed DP sync and runs the optimizer (the breakdown's critical path).
    """
    pipe, st, bd = ev.pipeline(), ev.stage, ev.breakdown
    comm_frac = (st.tp_s + st.p2p_s + st.zero_gather_s) / (st.forward_s + st.backward_s)
    lay = ev.layout
    title = (
        f"planner step: {lay.label}; each track is one pipeline rank, standing for its DP × TP = "
        f"{lay.dp * lay.tp} GPUs"
    )
    events = meta_events(title, [f"PP rank {r}" for r in range(pipe.num_stages)])
    ops = [e for e in to_chrome_trace(pipe)["traceEvents"] if e["ph"] == "X"]
    end_us = round(pipe.makespan_s * 1e6, 3)
    for op in ops:
        op["cat"] = f"op {op['cat']}"
        compute = round(op["dur"] * (1 - comm_frac), 3)
        events += [op, slice_event("compute", "compute", op["tid"], op["ts"], compute)]
        if op["dur"] > compute:
            events.append(
                slice_event(
                    "communication (TP, PP, ZeRO-3)",
                    "comm",
                    op["tid"],
                    op["ts"] + compute,
                    op["dur"] - compute,
                )
            )
    for r in range(pipe.num_stages):
        mine = [o for o in ops if o["tid"] == r]
        busy = union(
            np.array([o["ts"] for o in mine]), np.array([o["ts"] + o["dur"] for o in mine])
        )
        s, e, k = runs(busy, (np.empty(0), np.empty(0)), 0.0, end_us)
        events += [
            slice_event("idle (pipeline bubble)", "idle", r, a, b - a)
            for a, b, x in zip(s.tolist(), e.tolist(), k)
            if x == IDLE and b > a
        ]
        t = end_us
        for name, cat, dur in (
            ("DP gradient sync (exposed)", "comm", bd.dp_s * 1e6),
            ("optimizer step", "compute", bd.optimizer_s * 1e6),
        ):
            if dur > 0:
                events.append(slice_event(name, cat, r, t, dur))
                t += round(dur, 3)
    return {"traceEvents": events, "displayTimeUnit": "ms"}
