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


def _glide_back(by_name: dict, step: int, move: dict) -> tuple[list[dict], list[dict]]:
    """Frames that run step `step` + 1's move backwards (◀ Back): the receivers' cells return to
    what they held before it at once, the chunks glide back to their senders, and the chart lands
    on `step`. Names end in '<' so they never clash with the replay's frames."""
    t, title = step + 1, by_name[str(step)]["layout"]
    before, frames = by_name[f"{t}.0"]["data"], []
    for j in (2, 1, 0):
        data = list(by_name[f"{t}.{j}"]["data"])
        if j == 2:  # the undone sum and the hidden note, as the chunks leave
            data[0], data[3] = before[0], before[3]
        frames.append({**by_name[f"{t}.{j}"], "name": f"{t}.{j}<", "data": data, "layout": title})
    landed = by_name[str(step)]
    return [*frames, landed], [move, move, move, {**move, "duration": 0}]


def open_at_step(fig: dict, step: int, *, came_from: int | None = None, token: str = "") -> dict:
    """A copy of the ring figure showing step `step` (landed), its button replaying that step.

    It carries only that step's frames: the page sends the chart again on every step, and all
    2(N−1)·4 + 1 frames made that 0.8 MB and 0.5-0.9 s per step at N = 32 (benchmarks/
    ring_frames.py). The caller's figure and frames are not copied or changed.

    came_from = step ∓ 1 (the step the chart showed before a Next / Back / Play tick): the chart
    opens where that move starts (Next: the chunks at their senders; Back: step + 1 landed) and
    layout.meta.glide holds the frames and options that play it to `step`, under `token` (the
    page's trigger, app_pages/common/glide.py, animates it once per token). Plotly.react, which
    Streamlit redraws with, runs no frames, hence the trigger.
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
    step = int(step)
    if came_from is not None and (
        came_from not in (step - 1, step + 1) or str(came_from) not in by_name
    ):
        raise ValueError(
            f"came_from={came_from!r} is not a neighbour of step {step}: the chart glides one "
            f"step at a time, so pass {step - 1} (Next) or {step + 1} (Back), or None (jump)"
        )
    layout = fig["layout"]
    menu = layout["updatemenus"][0]
    button = menu["buttons"][0]
    names = replay_names(frames, step)
    opts = button["args"][1]
    # Per-frame transitions: jump to the senders (t.0), then glide to the receivers, each glide
    # lasting a frame (a figure opened before holds a list whose last entry may be the jump).
    move = {"duration": opts["frame"]["duration"], "easing": "linear"}
    glide = [{**move, "duration": 0}] + [move] * (len(names) - 1)
    replay = {**button, "args": [names, {**opts, "transition": glide}]}
    shown = [by_name[name] for name in names]
    start, meta = by_name[str(step)], {}
    if came_from == step - 1:
        start = by_name[f"{step}.0"]
        meta = {"frames": names, "opts": replay["args"][1]}
    elif came_from == step + 1:
        start = by_name[str(step + 1)]
        back, moves = _glide_back(by_name, step, move)
        shown += back[:-1]
        meta = {"frames": [f["name"] for f in back], "opts": {**opts, "transition": moves}}
    data = list(fig["data"])
    for i, update in zip(start["traces"], start["data"]):
        data[i] = _merged(data[i], update)
    title = by_name[str(step)]["layout"]["title"]
    return {
        **fig,
        "frames": shown,
        "data": data,
        "layout": {
            **layout,
            "title": {**layout["title"], **title},
            "updatemenus": [{**menu, "buttons": [replay]}, *layout["updatemenus"][1:]],
            **({"meta": {"glide": {"token": token, **meta}}} if meta else {}),
        },
    }
