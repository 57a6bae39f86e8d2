"""Open the ring animation at a step: its data set to that step's landed frame, and its one button
replaying that step's move (the chunks gliding from senders to receivers). The step itself is the
page's one step control; the chart never advances it on its own, so chart, caption, metrics and
URL always show the same step.
"""

from __future__ import annotations

import numpy as np


def _merged(base: dict, update: dict) -> dict:
    """base with update's keys applied, nested dicts merged: what Plotly.animate does with frame
    data."""
    out = dict(base)
    for k, v in update.items():
        out[k] = _merged(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def replay_names(frames: list[dict], step: int) -> list[str]:
    """The frames that replay `step`'s move: 't.0', 't.1', … then 't' (just '0' at the start)."""
    return [f["name"] for f in frames if f["name"].split(".")[0] == str(step)]


def step_frames(frame_ms: int) -> dict:
    """The chart's one button (open_at_step fills in the step's frames)."""
    anim = {"mode": "immediate", "fromcurrent": False}
    timing = {"frame": {"duration": frame_ms, "redraw": False}}
    return {
        "type": "buttons",
        "direction": "left",
        "x": 0,
        "y": 0,
        "xanchor": "left",
        "yanchor": "top",
        "pad": {"t": 4},
        "showactive": False,
        "buttons": [
            {
                "label": "▶ Replay this step",
                "method": "animate",
                "args": [
                    ["0"],
                    {**anim, **timing, "transition": {"duration": frame_ms, "easing": "linear"}},
                ],
            }
        ],
    }


def open_at_step(fig: dict, step: int) -> dict:
    """A copy of the ring figure showing step `step` (landed), its button replaying that step.

    It carries only that step's frames: the page sends the chart again on every step, and all
    2(N−1)·4 + 1 frames made that 0.8 MB and 0.5-0.9 s per step at N = 32 (benchmarks/
    ring_frames.py). The caller's figure and frames are not copied or changed.
    """
    frames = fig["frames"]
    by_name = {f["name"]: f for f in frames}
    if (
        isinstance(step, bool)
        or not isinstance(step, (int, np.integer))
        or str(int(step)) not in by_name
    ):
        last = max(int(f["name"]) for f in frames if "." not in f["name"])
        raise ValueError(f"step={step!r} is not a step of this animation: use 0 … {last}")
    frame = by_name[str(int(step))]
    data = list(fig["data"])
    for i, update in zip(frame["traces"], frame["data"]):
        data[i] = _merged(data[i], update)
    layout = fig["layout"]
    menu = layout["updatemenus"][0]
    button = menu["buttons"][0]
    names = replay_names(frames, int(step))
    opts = button["args"][1]
    # Per-frame transitions: jump to the senders (t.0), then glide to the receivers.
    move = opts["transition"][-1] if isinstance(opts["transition"], list) else opts["transition"]
    glide = [{**move, "duration": 0}] + [move] * (len(names) - 1)
    replay = {**button, "args": [names, {**opts, "transition": glide}]}
    return {
        **fig,
        "frames": [by_name[name] for name in names],
        "data": data,
        "layout": {
            **layout,
            "title": {**layout["title"], **frame["layout"]["title"]},
            "updatemenus": [{**menu, "buttons": [replay]}, *layout["updatemenus"][1:]],
        },
    }
