"""Make the ring glide on every step change, not only on its "▶ Replay this step" button.

Streamlit redraws a chart with Plotly.react, which runs no animation frames: on Next ▶, ←/→, a
Play tick or a drag the chunks would jump. open_at_step (figures/collectives/frames.py) opens
the chart where the move starts and puts the move (frame names, options and a token) in
layout.meta.glide; the few lines of JavaScript below, run by st.html in the page itself (no
iframe), wait until the chart holding that token is drawn and call Plotly.animate on it once.

Why this and not Plotly.react's own layout.transition: that animates only when nothing but
animatable attributes changed (no text, no title), and it interpolates in a straight line, so the
chunks would cut across the ring at small N instead of running along the link; the frames here
follow the arc (RingBoxes.in_flight in figures/collectives/geometry.py). Streamlit's Plotly
bundle sets window.Plotly (its frontend's PlotlyChart chunk ends `return window.Plotly=e`), so
the script needs nothing else.
"""

from __future__ import annotations

import json

import streamlit as st

WAIT_MS = 4000  # give up if the chart with the token is not drawn by then (a newer step won)

# Streamlit 1.67 draws a new chart with Plotly.react, then reacts again from an effect (its colour
# pass): a glide started between the two was cut short by the second (the bars jumped, seen on
# the training step's 4th and 5th moves in a row). So the script counts each chart's reacts and
# starts once a chart has had two, or SETTLE_MS after it was first found (a react it missed).
SETTLE_MS = 300

_SCRIPT = """<script>(() => {
  const token = %s, t0 = performance.now(), P = window.Plotly;
  if (P && !P.__counted) {
    const react = P.react;
    P.react = function (gd, ...rest) {
      const out = react.call(this, gd, ...rest);
      const done = () => { gd.__reacts = (gd.__reacts || 0) + 1; };
      if (out && out.then) out.then(done); else done();
      return out;
    };
    P.__counted = true;
  }
  const find = () => [...document.querySelectorAll('.js-plotly-plot')].find(
    g => g.layout && g.layout.meta && g.layout.meta.glide && g.layout.meta.glide.token === token);
  const go = () => {
    const g = find(), now = performance.now();
    if (g && g.__seen === undefined) g.__seen = now;
    const settled = g && ((g.__reacts || 0) >= 2 || now - g.__seen > %d);
    if (!g || !window.Plotly || !g._transitionData || !settled) {
      if (now - t0 < %d) requestAnimationFrame(go);
      return;
    }
    if (g.__glided === token) return;
    g.__glided = token;
    const m = g.layout.meta.glide;
    // __glideDone: benchmarks/ring_frames.py; __glideLanded: tests/e2e/test_collectives_keys.py
    window.Plotly.animate(g, m.frames, Object.assign({}, m.opts, {mode: 'immediate'}))
      .then(() => { g.__glideDone = performance.now(); g.__glideLanded = token; });
  };
  go();
})();</script>"""


def next_token(key: str) -> str:
    """A token no earlier glide of this session used (a repeated move must glide again)."""
    count = st.session_state[f"_{key}_glides"] = st.session_state.get(f"_{key}_glides", 0) + 1
    return f"{key}-{count}"


def glide(token: str) -> None:
    """Play the move of the chart whose layout.meta.glide.token is `token`, once ("" = none).

    Always drawn (an empty script when there is no move), so the element above or below it never
    shifts when one step glides and the next jumps."""
    st.html(
        _SCRIPT % (json.dumps(token), SETTLE_MS, WAIT_MS) if token else "<span></span>",
        unsafe_allow_javascript=bool(token),
    )
