"""One palette and a few layout helpers for every figure, so a colour means the same on every page.

Named semantic colours (COLOURS) for what recurs across pages, categorical sets for the named
variants of one concept (each algorithm, schedule, pipeline op kind one colour everywhere), and the
helpers that the figure modules used to copy: a legend under the plot, margins, log-axis ticks.
figures.theme turns any of these into presenter colours (Okabe-Ito); greys stay grey there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

# Base hues: the Tableau 10 / matplotlib "tab10" cycle (the categorical default of most plots) and
# the Tableau 10 (2016) set used by Vega-Lite, both colour-blind-aware categorical palettes.
TAB10 = (
    "#1f77b4",  # blue
    "#ff7f0e",  # orange
    "#2ca02c",  # green
    "#d62728",  # red
    "#9467bd",  # purple
    "#8c564b",  # brown
    "#e377c2",  # pink
    "#7f7f7f",  # grey
    "#bcbd22",  # olive
    "#17becf",  # cyan
)
TABLEAU10 = (
    "#4C78A8",
    "#F58518",
    "#54A24B",
    "#B279A2",
    "#E45756",
    "#72B7B2",
    "#EECA3B",
    "#FF9DA6",
    "#9D755D",
    "#BAB0AC",
)

# Meaning -> colour. One meaning, one colour; one colour, one meaning (the greys aside: neutral).
COLOURS = {
    # verdicts: fits / OOM, right / wrong, a group that crosses a node boundary, the capacity line
    "ok": "#2E7D32",
    "bad": "#C62828",
    "unanswered": "#D0D0D0",
    # memory per GPU (figures.memory's stack, the scenarios' bars, the planner's memory panel)
    "parameters": TABLEAU10[0],
    "gradients": TABLEAU10[1],
    "optimizer": TABLEAU10[2],
    "activations": TABLEAU10[3],
    "reserve": TABLEAU10[9],
    "model_states": TABLEAU10[0],  # parameters + gradients + optimizer, drawn as one bar
    # time on a GPU (DP bucket timeline, planner breakdown, trace breakdown, TP comm vs compute)
    "compute": TAB10[0],
    "forward": "#9ecae1",  # a light tint of compute: the forward pass where backward is compute
    "memory_bound": "#7FB3D5",
    "recompute": "#A9DFBF",
    "exposed": TAB10[3],  # communication on the critical path (exposed TP, exposed all-reduce)
    "hidden": TAB10[2],  # communication overlapped with (hidden behind) compute
    "exposed_p2p": "#FF9896",  # pipeline sends/receives, a light tint of exposed
    "exposed_dp": TAB10[6],
    "zero_gather": TAB10[5],
    "optimizer_step": TAB10[9],
    "idle": "#DDDDDD",  # pipeline bubble, idle time in a trace, the Gantt's background
    # a model's curve vs its Monte Carlo check (stragglers on the DP and reliability pages)
    "model": TAB10[0],
    "monte_carlo": "#111111",
    # neutrals and ink
    "replicated": "#d9d9d9",  # held by every GPU / a cluster with no layout drawn
    "ink": "#333333",  # reference lines, outlines, markers of "the model"
    "guide": "#888888",  # light guide lines: asymptotes, link speed
    "title": "#31333f",  # Streamlit's text colour, for titles drawn as annotations
    "subtitle": "#777777",
    "dark_text": "#111111",
    "light_text": "#ffffff",
    "ink_dark": "black",  # the darkest ink: text on bright heatmap cells, the "this run" marker
    "paper": "white",  # plot backgrounds and the thin gaps drawn between adjacent cells or bars
    "region": "#f2e6ff",  # a shaded region behind curves (latency-bound sizes)
    "label_background": "rgba(255,255,255,0.85)",  # behind a label drawn over bars or lines
    "node_fill": "rgba(0,0,0,0.03)",  # a node's box behind its GPU cells
    "idle_veil": "#bdbdbd",  # drawn translucent over a GPU that waits (the step drawing)
}
COLOURS["crossing"] = COLOURS["bad"]  # the outline of a group that crosses a node boundary
COLOURS["capacity"] = COLOURS["bad"]  # the HBM capacity line: above it is OOM

# Categorical sets: each member one colour wherever it is drawn.
ALGORITHM_COLOURS = {
    "ring": TAB10[0],
    "halving_doubling": TAB10[2],
    "recursive_doubling": TAB10[4],
    "tree": TAB10[1],
    "naive": TAB10[3],
    "hierarchical": TAB10[9],
    "flat_ring_cluster": TAB10[7],
    "double_binary_tree": TAB10[8],  # NCCL's tree, beside MPICH's binomial "tree"
    "nccl": TAB10[5],  # NCCL's tuned pick (ring or tree × protocol)
}
PHASE_COLOURS = {"reduce_scatter": "#e4572e", "all_gather": "#2e86ab"}
SCHEDULE_COLOURS = {
    "gpipe": TAB10[0],
    "1f1b": TAB10[1],
    "interleaved_1f1b": TAB10[2],
    "zb_h1": TAB10[3],
    "zb_v": TAB10[4],
    "dualpipe_v": TAB10[5],
    "looped_bfs": TAB10[6],
}


def schedule_colour(schedule: str, index: int = 0) -> str:
    """A schedule's colour; unknown names cycle through the schedule colours by position."""
    palette = list(SCHEDULE_COLOURS.values())
    return SCHEDULE_COLOURS.get(schedule, palette[index % len(palette)])


# Pipeline op kinds: forward, backward, input-gradient, weight-gradient, fused forward+backward.
KIND_COLOURS = {"F": TAB10[0], "B": TAB10[1], "I": TAB10[9], "W": TAB10[2], "F&B": TAB10[4]}
# Planner step-time breakdown: core.planner Breakdown field -> colour.
PART_COLOURS = {
    "compute_s": COLOURS["compute"],
    "memory_bound_s": COLOURS["memory_bound"],
    "recompute_s": COLOURS["recompute"],
    "tp_s": COLOURS["exposed"],
    "pp_p2p_s": COLOURS["exposed_p2p"],
    "pp_bubble_s": COLOURS["idle"],
    "zero_gather_s": COLOURS["zero_gather"],
    "dp_s": COLOURS["exposed_dp"],
    "optimizer_s": COLOURS["optimizer_step"],
}
# Groups of GPUs (planner cluster: TP group, PP stage, DP replica) and TP ranks: many, so cycled.
GROUP_COLOURS = list(TABLEAU10) + [TAB10[i] for i in (0, 2, 4, 5, 9, 8)]
RANK_COLOURS = list(TAB10)
SERIES_COLOURS = list(TAB10)  # curves of one chart with no meaning beyond "this variant"
# Reliability page: the goodput curve and its approximations, the waste parts.
RELIABILITY_COLOURS = {
    "curve": COLOURS["model"],
    "young": TAB10[1],
    "daly": TAB10[2],
    # the optimum's star: gold, not red (red is "exposed communication" and "lost work" here)
    "optimum": TABLEAU10[6],
    "mc": COLOURS["monte_carlo"],
    "checkpoint": TAB10[4],
    "lost": COLOURS["bad"],
    "restart": TAB10[5],
}


# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision
# deficiencies and on washed-out projectors. Presenter mode (figures.theme) draws in these; black
# comes last (it is kept for text and lines).
OKABE_ITO = [
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
]
BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW = OKABE_ITO[:7]

# Beyond Okabe-Ito's seven hues, two from Paul Tol's colour-blind-safe "muted" scheme (Tol 2021,
# "Colour Schemes", SRON/EPS/TN/09-002, Fig. 4): wine and indigo.
WINE, INDIGO = "#882255", "#332288"

# These meanings keep one projector colour on every page; any other colour takes the next free one
# in order of appearance. Every step-time part and memory segment is listed, because the planner
# draws them side by side and a free colour handed out per figure would give one meaning two
# colours across pages (exposed DP came out green, the colour of "hidden", in one figure). The
# light tints (memory-bound, recompute, pipeline sends) and the warm-grey reserve stay as they are.
PRESENTER_COLOURS = {
    COLOURS["compute"]: BLUE,
    COLOURS["forward"]: COLOURS["forward"],  # a light tint of compute (sky is parameters)
    COLOURS["memory_bound"]: COLOURS["memory_bound"],
    COLOURS["recompute"]: COLOURS["recompute"],
    COLOURS["exposed"]: VERMILLION,
    COLOURS["exposed_p2p"]: COLOURS["exposed_p2p"],
    COLOURS["exposed_dp"]: WINE,
    COLOURS["zero_gather"]: COLOURS["zero_gather"],  # brown
    COLOURS["optimizer_step"]: INDIGO,
    COLOURS["bad"]: VERMILLION,
    COLOURS["hidden"]: GREEN,
    COLOURS["ok"]: GREEN,
    COLOURS["parameters"]: SKY,
    COLOURS["gradients"]: ORANGE,
    COLOURS["optimizer"]: YELLOW,
    COLOURS["activations"]: PURPLE,
    COLOURS["reserve"]: COLOURS["reserve"],
}
# The reliability page's optimum (a gold star) stays gold: a free colour could come out red.
PRESENTER_COLOURS[RELIABILITY_COLOURS["optimum"]] = YELLOW
# The reserve is drawn hatched wherever it is drawn (a bar's marker keeps it: {**RESERVE_MARKER}).
RESERVE_MARKER = {"color": COLOURS["reserve"], "pattern": {"shape": "/"}}


def ink_on(fill: str) -> str:
    """Black or white text, whichever reads on `fill` (higher WCAG contrast: luminance above 0.179
    takes black).
    """
    lin = [
        (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
        for c in (int(fill[i : i + 2], 16) / 255 for i in (1, 3, 5))
    ]
    luminance = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    return COLOURS["dark_text"] if luminance > 0.179 else COLOURS["light_text"]


def shade(colour: str, chunk: int, num_chunks: int) -> str:
    """Mix a hex colour toward white: chunk 0 full colour, the last chunk ~55% lighter."""
    frac = 0.55 * chunk / max(num_chunks - 1, 1)
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * frac):02x}" for c in rgb)


# ---------- layout helpers ----------
def bottom_legend(y: float = -0.2, **extra) -> dict:
    """A horizontal legend under the plot (figures.theme moves it to the bottom edge when
    presenting).
    """
    return {"orientation": "h", "y": y, **extra}


def legend_under_axis_title(height: int, top: int, bottom: int) -> dict:
    """A horizontal legend under the x-axis title, whatever the figure's height (paper units)."""
    return {
        "orientation": "h",
        "x": 0,
        "yanchor": "top",
        "y": -58 / max(height - top - bottom, 40),
        "traceorder": "normal",
    }


def margin(l: int = 60, r: int = 20, t: int = 60, b: int = 40) -> dict:  # noqa: E741
    """Plot margins in px; the defaults fit a y-axis title on the left and a legend below."""
    return {"l": l, "r": r, "t": t, "b": b}


def tick_array(values: Iterable[float], fmt: Callable[[float], str] = str) -> dict:
    """Ticks exactly at `values`, each labelled by fmt."""
    vals = list(values)
    return {"tickmode": "array", "tickvals": vals, "ticktext": [fmt(v) for v in vals]}


def decade_ticks(values: Iterable[float], fmt: Callable[[float], str]) -> dict:
    """Log-axis ticks at the powers of ten spanning the positive values (decades only)."""
    v = [float(x) for x in values if x and x > 0]
    lo, hi = math.floor(math.log10(min(v))), math.ceil(math.log10(max(v)))
    return tick_array((10.0**k for k in range(lo, hi + 1)), fmt)


def ticks_125(values, fmt=lambda v: f"{v:g}") -> dict:
    """Log-axis ticks at 1, 2, 5 × 10^k spanning the positive finite values, labelled in full."""
    v = [float(x) for x in values if x is not None and x > 0 and math.isfinite(x)]
    if not v:
        return {}
    lo, hi = min(v), max(v)
    vals = [
        m * 10.0**k
        for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
        for m in (1, 2, 5)
        if lo / 2.5 <= m * 10.0**k <= hi * 2.5
    ]
    return tick_array(vals, fmt)


def log_range(lo: float, hi: float) -> list[float]:
    """A log axis's range (Plotly wants log10 of the ends)."""
    return [math.log10(lo), math.log10(hi)]


# Context and expert parallelism (issue 17): how K/V moves between CP ranks (the ring keeps the
# ring algorithm's colour, the all-gather its phase colour), and tokens an expert turned away.
CP_SCHEME_COLOURS = {
    "ring": ALGORITHM_COLOURS["ring"],
    "all_gather": PHASE_COLOURS["all_gather"],
    "ulysses": TAB10[8],
}
COLOURS["dropped"] = "#F4A582"  # (token, expert) pairs past the expert's capacity
# The training-step drawing's CP K/V ring and EP all-to-all arrows (tab20b hues no meaning uses).
COLOURS["cp_kv"] = "#8c6d31"
COLOURS["ep_all_to_all"] = "#393b79"
# The planner's step-time parts for the same traffic (core.planner Breakdown cp_s, ep_s): the same
# colours, and in presenter mode too (no Okabe-Ito hue is free; both are dark and distinct).
PART_COLOURS["cp_s"] = COLOURS["cp_kv"]
PART_COLOURS["ep_s"] = COLOURS["ep_all_to_all"]
PRESENTER_COLOURS[COLOURS["cp_kv"]] = COLOURS["cp_kv"]
PRESENTER_COLOURS[COLOURS["ep_all_to_all"]] = COLOURS["ep_all_to_all"]
# Collectives' all-to-all blocks: pairwise step 1 … N − 1, light to dark (ColorBrewer Blues ends).
STEP_SCALE = ("#c6dbef", "#08306b")
