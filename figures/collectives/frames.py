"""Open an animated figure at a given frame, its slider and Play button set there."""

from __future__ import annotations

import numpy as np


def _merged(base: dict, update: dict) -> dict:
    """base with update's keys applied, nested dicts merged: what Plotly.animate does with frame
    data.
    """
    out = dict(base)
    for k, v in update.items():
        out[k] = _merged(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def open_at_step(fig: dict, step: int) -> dict:
    """A copy of an animated figure that opens showing frame `step`, its slider set there.

    Play then runs on from that step (Plotly's fromcurrent only knows frames it has animated itself,
    so Play's frame list starts at `step`). The frames and the caller's figure are shared, not
    copied.
    """
    frames = fig["frames"]
    if (
        isinstance(step, bool)
        or not isinstance(step, (int, np.integer))
        or not 0 <= step < len(frames)
    ):
        raise ValueError(
            f"step={step!r} is not a frame of this animation: use 0 … {len(frames) - 1}"
        )
    frame = frames[step]
    data = list(fig["data"])
    for i, update in zip(frame["traces"], frame["data"]):
        data[i] = _merged(data[i], update)
    layout = fig["layout"]
    menu = layout["updatemenus"][0]
    play = {
        **menu["buttons"][0],
        "args": [
            [f["name"] for f in frames[step:]] if step else None,
            menu["buttons"][0]["args"][1],
        ],
    }
    return {
        **fig,
        "data": data,
        "layout": {
            **layout,
            "title": {**layout["title"], **frame["layout"]["title"]},
            "updatemenus": [
                {**menu, "buttons": [play, *menu["buttons"][1:]]},
                *layout["updatemenus"][1:],
            ],
            "sliders": [{**layout["sliders"][0], "active": int(step)}, *layout["sliders"][1:]],
        },
    }
