"""One training step, drawn: the GPU grid with what every GPU holds, the traffic of each phase on
the links it uses, waiting GPUs greyed, and a timeline strip; one animation frame per phase.
"""

from __future__ import annotations

import copy

from core.stepplan import StepPlan
from core.units import ByteSystem, format_bytes
from figures.step import grid, text, timeline
from figures.step.traffic import KINDS, traffic_traces
from figures.style import COLOURS, margin

FRAME_MS = 1800  # the page's Play: time on each phase
ROW_PX = 66  # height of one unit (a GPU cell) of the grid
TOP, BOTTOM = 50, 12  # margins: the title above; the legend sits under it, over the grid
STRIP = (0.0, 0.09)  # the timeline strip's share of the height (bottom)


def _span(values) -> str:
    v = sorted(set(values))
    return str(v[0]) if len(v) == 1 else f"{v[0]}–{v[-1]}"


def _node_labels(plan: StepPlan, geo) -> dict[int, str]:
    pl, gpn = plan.placement, plan.placement.cluster.gpus_per_node
    by_node: dict[int, list[int]] = {}
    for r in geo.centres:
        by_node.setdefault(r // gpn, []).append(r)
    out = {}
    for node, *_ in geo.boxes:
        ranks = by_node.get(node, [])
        stages = _span(int(pl.coord("pp")[r]) for r in ranks) if ranks else "–"
        reps = _span(int(pl.coord("dp")[r]) for r in ranks) if ranks else "–"
        out[node] = f"node {node} · stage s{stages} · DP replica {reps}"
    return out


def _hover(plan: StepPlan, geo, units: ByteSystem) -> tuple[dict, list[dict]]:
    """(rank -> what never changes, [rank -> what phase i changes]) of every drawn GPU's hover."""
    pl, gpn = plan.placement, plan.placement.cluster.gpus_per_node
    fixed, per_phase, lay = {}, [{} for _ in plan.phases], plan.layout
    for r in geo.centres:
        c = {d: int(pl.coord(d)[r]) for d in ("dp", "pp", "tp", "cp", "ep")}
        h = plan.phases[0].holdings[c["pp"]]
        rows = [f"rank {r} · node {r // gpn}, GPU {r % gpn}"]
        rows.append(f"DP replica {c['dp']} · PP stage {c['pp']} · TP rank {c['tp']}")
        if lay.cp > 1 or lay.ep > 1:
            rows.append(f"CP rank {c['cp']} of {lay.cp} · EP rank {c['ep']} of {lay.ep}")
        for part in grid.PARTS:
            held, full = getattr(h, f"{part}_bytes"), getattr(h, f"full_{part}_bytes")
            how = "shard" if held < full else "replicated"
            rows.append(f"{text.PARTS[part]}: {format_bytes(held, units)} ({how})")
        fixed[r] = "<br>".join(rows)
        for i, ph in enumerate(plan.phases):
            h = ph.holdings[c["pp"]]
            rows = [f"activations: {format_bytes(h.activations_bytes, units)}"]
            if not h.gradients_live:
                rows.append("gradients: empty until the first backward")
            if ph.busy and ph.duration_s > 0:
                rows.append(f"computes {ph.busy[c['pp']]:.0%} of this phase")
            per_phase[i][r] = "<br>".join(rows)
    return fixed, per_phase


def _title(plan: StepPlan, index: int) -> dict:
    """The phase and its times (what happens is written under the chart: text.phase_lines)."""
    head, _ = text.caption(plan, index)
    return {"text": head}


def legend_px(names: list[str], present: bool) -> int:
    """Height a horizontal legend of these entries takes: entries packed into rows of about
    1,050 px (Chromium: ~6.6 px a character at Plotly's 12 px, ~8.8 at presenter's 16 px)."""
    char, row_px, sample = (8.8, 30, 50) if present else (6.6, 21, 40)
    rows, used = 1, 0.0
    for name in names:
        w = len(name) * char + sample
        if used and used + w > 1050:
            rows, used = rows + 1, 0.0
        used += w
    return rows * row_px + 6


def _dynamic(plan, drawn, geo, index, names, hover) -> list[dict]:
    ph, pl = plan.phases[index], plan.placement
    return [
        *grid.fills(geo, pl, ph, names),
        *grid.idle(geo, pl, ph, "waits"),
        *traffic_traces(geo, pl, drawn, ph, names),
        grid.hover(geo, hover[0], hover[1][index]),
    ]


def step_figure(
    plan: StepPlan, index: int = 0, units: ByteSystem = ByteSystem.BINARY, present: bool = False
) -> dict:
    """The step drawn at phase `index`, with one frame per phase (open_at picks one); `present`
    keeps room for the presenter's bigger legend."""
    n = len(plan.phases)
    if not 0 <= index < n:
        raise ValueError(f"phase {index} is not a phase of this step: use 0 … {n - 1}")
    drawn = plan.drawn
    geo = grid.geometry(plan.placement, drawn)
    names = {**text.PARTS, **{k: text.traffic_name(plan, k) for k in KINDS}}
    static = [grid.tracks(geo), grid.placeholders(geo), grid.stage_labels(geo, plan.placement)]
    strip = timeline.strip_traces(plan, text.SHORT)
    hover = _hover(plan, geo, units)
    every = [
        [*_dynamic(plan, drawn, geo, i, names, hover), timeline.marker_trace(plan, i)]
        for i in range(n)
    ]
    # Frames carry only the traces some phase changes (Plotly.animate merges them into the
    # figure's traces); of the hover markers only the per-phase part (customdata).
    changing = [j for j in range(len(every[0])) if any(e[j] != every[0][j] for e in every)]
    first, hover_j, last = len(static), len(every[0]) - 2, len(every[0]) - 1
    position = {j: first + j if j < last else first + last + len(strip) for j in changing}
    labels = [f"{i + 1} {text.SHORT[p.key]}" for i, p in enumerate(plan.phases)]
    frames = [
        {
            "name": labels[i],
            "data": [
                {"customdata": every[i][j]["customdata"]} if j == hover_j else every[i][j]
                for j in changing
            ],
            "traces": [position[j] for j in changing],
            "layout": {"title": _title(plan, i)},
        }
        for i in range(n)
    ]
    shapes, notes = grid.node_shapes(geo, _node_labels(plan, geo))
    (x0, x1), (y0, y1) = geo.x_range, geo.y_range
    # Cells stretch to the chart's width; their height is set here (about ROW_PX per cell row).
    # Only what some phase draws gets a legend entry; the legend is kept above the grid, inside
    # the plot area, so it is on the first screen (presenter mode moves only legends outside it).
    # Copies: a trace shared by data and a frame would be recoloured twice in presenter mode.
    opened = copy.deepcopy(every[index])
    data = [*static, *opened[:-1], *strip, opened[-1]]
    drawn_at = {k for k, t in enumerate(data) if t.get("x")}
    drawn_at |= {k for f in frames for k, t in zip(f["traces"], f["data"]) if t.get("x")}
    for k, trace in enumerate(data):
        if trace.get("name") and k not in drawn_at:
            trace["showlegend"] = False
    entries = [t["name"] for t in data if t.get("name") and t.get("showlegend", True)]
    room = legend_px(entries, present)
    grid_px = (y1 - y0) * ROW_PX
    plot_px = min(1000 - TOP - BOTTOM, max(360, grid_px / (1 - STRIP[1] - 0.05) + room))
    height = int(plot_px + TOP + BOTTOM)
    grid_top = 1 - room / plot_px
    hidden = {"visible": False, "fixedrange": True}
    layout = {
        "title": {
            **_title(plan, index),
            "x": 0.01,
            "xanchor": "left",
            "y": 1 - 12 / height,
            "yanchor": "top",
        },
        "height": height,
        "margin": margin(10, 10, TOP, BOTTOM),
        "plot_bgcolor": COLOURS["paper"],
        "shapes": shapes,
        "annotations": notes,
        "xaxis": {**hidden, "range": [x0, x1]},
        "yaxis": {**hidden, "range": [y0, y1], "domain": [STRIP[1] + 0.04, grid_top]},
        "xaxis2": {**hidden, "range": [0, 1], "anchor": "y2"},
        "yaxis2": {**hidden, "range": [0, 1], "domain": list(STRIP), "anchor": "x2"},
        "legend": {"orientation": "h", "x": 0, "y": 0.999, "yanchor": "top"},
        "hovermode": "closest",
    }
    return {"data": data, "frames": frames, "layout": layout}


def open_at(fig: dict, index: int) -> dict:
    """A step figure opened at phase `index`: its frame merged into the traces (as Plotly.animate
    does) and its caption; no frames (the page's stepper holds the phase). Unchanged traces shared.
    """
    frames = fig["frames"]
    if not 0 <= index < len(frames):
        raise ValueError(f"phase {index} is not a phase of this step: use 0 … {len(frames) - 1}")
    frame, data = frames[index], list(fig["data"])
    for i, update in zip(frame["traces"], frame["data"]):
        data[i] = copy.deepcopy({**data[i], **update})  # own copies: presenter recolours them
    layout = fig["layout"]
    title = {**layout["title"], **frame["layout"]["title"]}
    return {"data": data, "layout": {**layout, "title": title}}
