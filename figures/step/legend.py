"""The step drawing's legend: every entry's name, and where the legend sits.

On the laptop page a horizontal legend with descriptive names runs above the grid. On a presenter
slide (1280×720) that legend took three rows at projector type and pushed the grid's top to
~620 px (docs/screens/training_step_present_1280.png before issue 15's last slides); there the
entries get short names in one column beside the grid, so the grid starts right under the
chart's title (tests/e2e/test_presenter_browser.py measures it). Colours stay the traces' own
(figures/style.py): only the words change.
"""

from __future__ import annotations

from core.stepplan import StepPlan
from figures.step import text
from figures.step.grid import PARTS
from figures.step.traffic import KINDS

OUTLINE = "bar outline: what it holds unsharded"
SLIDE_OUTLINE = "outline: unsharded"
SLIDE_PARTS = {"parameters": "parameters", "gradients": "gradients", "optimizer": "optimizer"}
SLIDE_TRAFFIC = {
    "tp": "TP all-reduce",
    "cp_ring": "CP ring: K/V",
    "ep_all_to_all": "EP all-to-all",
    "pp_forward": "PP activations →",
    "pp_backward": "PP gradients ←",
    "zero3_gather": "ZeRO-3 all-gather",
    "zero3_scatter": "ZeRO-3 reduce-scatter",
    "dp_all_reduce": "DP all-reduce",
    "dp_reduce_scatter": "DP reduce-scatter",
    "dp_all_gather": "DP all-gather",
}
SLIDE_TRAFFIC_SP = {"tp": "TP RS + AG (SP)"}
# figures.theme.presenter's size for a legend that names its font (its base 20 px − 4): a column
# of 8–13 entries at 20 px would outgrow the grid beside it.
SLIDE_FONT_PX = 16


def names(plan: StepPlan, slide: bool = False) -> dict[str, str]:
    """The legend name of every trace, by key: "outline", each part solid (its key) and hatched
    (key + "_sharded"), "activations", and each traffic kind; `slide`: the short names."""
    sp = plan.layout.sequence_parallel
    if slide:
        traffic = SLIDE_TRAFFIC | (SLIDE_TRAFFIC_SP if sp else {})
        parts = {p: SLIDE_PARTS[p] for p in PARTS}
        sharded = {f"{p}_sharded": f"{SLIDE_PARTS[p]} (sharded)" for p in PARTS}
        return {"outline": SLIDE_OUTLINE, **parts, **sharded, "activations": "activations"} | {
            k: traffic[k] for k in KINDS
        }
    parts = {p: f"{text.PARTS[p]} (replicated)" for p in PARTS}
    sharded = {f"{p}_sharded": f"{text.PARTS[p]} (sharded: hatched)" for p in PARTS}
    acts = f"{text.PARTS['activations']} (in flight)"
    return {"outline": OUTLINE, **parts, **sharded, "activations": acts} | {
        k: text.traffic_name(plan, k) for k in KINDS
    }


def rows_px(entries: list[str]) -> int:
    """Height the laptop's horizontal legend of these entries takes: entries packed into rows of
    about 1,050 px (Chromium: ~6.6 px a character at Plotly's 12 px)."""
    char, row_px, sample = 6.6, 21, 40
    rows, used = 1, 0.0
    for name in entries:
        w = len(name) * char + sample
        if used and used + w > 1050:
            rows, used = rows + 1, 0.0
        used += w
    return rows * row_px + 6


def placement(slide: bool, grid_top: float) -> dict:
    """The laptop's legend: horizontal, in the room kept above the grid (inside the plot area, so
    presenter mode would not move it); a slide's: one column right of the plot, level with the
    grid's top (Plotly widens the right margin to fit it)."""
    if not slide:
        return {"orientation": "h", "x": 0, "y": 0.999, "yanchor": "top"}
    return {
        "orientation": "v",
        "x": 1.01,
        "xanchor": "left",
        "y": grid_top,
        "yanchor": "top",
        "font": {"size": SLIDE_FONT_PX},
        "tracegroupgap": 4,  # a part's solid and hatched entries share a group
    }
