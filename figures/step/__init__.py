"""The training-step drawing (plain dict specs): the GPU grid per phase, its traffic arrows, the
timeline strip, and the words around them (text.py).
"""

from figures.step.figure import FRAME_MS, open_at, step_figure
from figures.step.traffic import KINDS

__all__ = ["FRAME_MS", "KINDS", "open_at", "step_figure"]
