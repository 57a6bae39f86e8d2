"""Tokens for the glides: a step change plays its move once, on every step change.

Plotly.react runs no animation frames, so a step change (Next ▶, ←/→, a Play tick, a drag) would
make the chunks or bars jump. The figure opens where the move starts and carries the move in
layout.meta.glide under a token (figures/collectives/frames.py open_at_step,
figures/step/figure.py open_at); the chart component plays it with Plotly.animate once per token
(app_pages/common/plot.js). Why frames and not Plotly.react's layout.transition: that animates
only when nothing but animatable attributes changed (no text, no title) and interpolates in a
straight line, so the chunks would cut across the ring at small N instead of running along the
link; the frames follow the arc (RingBoxes.in_flight in figures/collectives/geometry.py).
"""

from __future__ import annotations

import streamlit as st


def next_token(key: str) -> str:
    """A token no earlier glide of this session used (a repeated move must glide again)."""
    count = st.session_state[f"_{key}_glides"] = st.session_state.get(f"_{key}_glides", 0) + 1
    return f"{key}-{count}"
