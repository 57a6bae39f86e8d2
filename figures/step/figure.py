"""One training step, drawn: the GPU grid with what every GPU holds, the traffic of each phase on
the links it uses, waiting GPUs greyed, and a timeline strip; one animation frame per phase.
"""

from __future__ import annotations

import copy

from core.stepplan import StepPlan
from core.units import ByteSystem, format_bytes
from figures.step import grid, legend, text, timeline
from figures.step.traffic import traffic_traces
from figures.style import COLOURS, margin

FRAME_MS = 1800  # the page's Play: time on each phase
GLIDE_MS = 500  # a phase step's glide: over well before Play's next tick (FRAME_MS)
ROW_PX = 66  # height of one unit (a GPU cell) of the grid
TOP, BOTTOM = 50, 12  # margins: the title above; the legend sits under it, over the grid
STRIP = (0.0, 0.09)  # the timeline strip's share of the height (bottom)
OVER = {"xaxis": "x3", "yaxis": "y3"}  # the grid's overlay (_dynamic)


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


def _title(plan: StepPlan, index: int, present: bool = False) -> dict:
    """The phase and its times (what happens is written under the chart: text.phase_lines). On
    the slide the times go to a subtitle: at 24 px "Phase 3 of 5: … (gradient accumulation) ·
    507 ms → 52.8 s (52.3 s)" ran past the 1280 px slide's edge."""
    if not present:
        return {"text": text.caption(plan, index)[0]}
    head, when = text.heading(plan, index)
    # every phase has a subtitle ("before the step" too), so a glide never grows the title block
    return {"text": head, "subtitle": {"text": when or "t = 0 s"}}


def _dynamic(plan, drawn, geo, index, names, hover) -> list[dict]:
    """The traces a phase changes. All but the solid bars and the activations sit on an overlay
    of the grid's axes (x3/y3, the same ranges): a Plotly.animate transition re-styles every
    trace of the subplot it moves, and a hatched trace (fillpattern) there stops it, its promise
    never resolving (seen in Streamlit 1.67's Plotly bundle), so only the traces that glide share
    a subplot."""
    ph, pl = plan.phases[index], plan.placement
    bars = grid.fills(geo, pl, ph, names)
    over = [*grid.idle(geo, pl, ph, "waits"), *traffic_traces(geo, pl, drawn, ph, names)]
    over.append(grid.hover(geo, hover[0], hover[1][index]))
    return [*bars[:3], *({**t, **OVER} for t in bars[3:6]), bars[6], *({**t, **OVER} for t in over)]


def step_figure(
    plan: StepPlan, index: int = 0, units: ByteSystem = ByteSystem.BINARY, present: bool = False
) -> dict:
    """The step drawn at phase `index`, with one frame per phase (open_at picks one); `present`:
    the slide's legend, short names beside the grid (figures/step/legend.py)."""
    n = len(plan.phases)
    if not 0 <= index < n:
        raise ValueError(f"phase {index} is not a phase of this step: use 0 … {n - 1}")
    drawn = plan.drawn
    geo = grid.geometry(plan.placement, drawn)
    names = legend.names(plan, slide=present)
    static = [
        grid.tracks(geo, names["outline"]),
        grid.placeholders(geo),
        grid.stage_labels(geo, plan.placement),
    ]
    strip = timeline.strip_traces(plan, text.SHORT)
    hover = _hover(plan, geo, units)
    every = [
        [*_dynamic(plan, drawn, geo, i, names, hover), timeline.marker_trace(plan, i)]
        for i in range(n)
    ]
    # Frames carry only the traces some phase changes, and of those only the keys some phase
    # changes (Plotly.animate merges them into the figure's traces): the hover markers' per-phase
    # customdata, not their text; no line widths or fonts, so presenter mode's (applied to the
    # figure's traces only, figures/theme.py) survive a glide.
    changing = [j for j in range(len(every[0])) if any(e[j] != every[0][j] for e in every)]
    keys = {j: [k for k in every[0][j] if any(e[j][k] != every[0][j][k] for e in every)]
            for j in changing}  # fmt: skip
    first, last = len(static), len(every[0]) - 1
    position = {j: first + j if j < last else first + last + len(strip) for j in changing}
    labels = [f"{i + 1} {text.SHORT[p.key]}" for i, p in enumerate(plan.phases)]
    frames = [
        {
            "name": labels[i],
            "data": [{k: every[i][j][k] for k in keys[j]} for j in changing],
            "traces": [position[j] for j in changing],
            "layout": {"title": _title(plan, i, present)},
        }
        for i in range(n)
    ]
    shapes, notes = grid.node_shapes(geo, _node_labels(plan, geo))
    (x0, x1), (y0, y1) = geo.x_range, geo.y_range
    # Cells stretch to the chart's width; their height is set here (about ROW_PX per cell row).
    # Only what some phase draws gets a legend entry; on the laptop the legend is kept above the
    # grid, inside the plot area, so it is on the first screen (presenter mode moves only legends
    # outside it); a slide's sits beside the grid and needs no room above it.
    # Copies: a trace shared by data and a frame would be recoloured twice in presenter mode.
    opened = copy.deepcopy(every[index])
    data = [*static, *opened[:-1], *strip, opened[-1]]
    drawn_at = {k for k, t in enumerate(data) if grid.draws(t)}
    drawn_at |= {k for f in frames for k, t in zip(f["traces"], f["data"]) if grid.draws(t)}
    for k, trace in enumerate(data):
        if trace.get("name") and k not in drawn_at:
            trace["showlegend"] = False
    entries = [t["name"] for t in data if t.get("name") and t.get("showlegend", True)]
    room = 0 if present else legend.rows_px(entries)
    grid_px = (y1 - y0) * ROW_PX
    plot_px = min(1000 - TOP - BOTTOM, max(360, grid_px / (1 - STRIP[1] - 0.05) + room))
    height = int(plot_px + TOP + BOTTOM)
    grid_top = 1 - room / plot_px
    hidden = {"visible": False, "fixedrange": True}
    layout = {
        "title": {
            **_title(plan, index, present),
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
        "xaxis3": {**hidden, "range": [x0, x1], "overlaying": "x", "anchor": "y3"},
        "yaxis3": {**hidden, "range": [y0, y1], "overlaying": "y", "anchor": "x3"},
        "yaxis2": {**hidden, "range": [0, 1], "domain": list(STRIP), "anchor": "x2"},
        "legend": legend.placement(present, grid_top),
        "hovermode": "closest",
    }
    return {"data": data, "frames": frames, "layout": layout}


def _gliding(frames: list[dict]) -> set[int]:
    """Positions of the traces that keep their point count in every frame (the bars of
    grid.fills, the strip's phase outline): the ones Plotly.animate can interpolate."""
    out = set()
    for j, k in enumerate(frames[0]["traces"]):
        points = [f["data"][j].get("x", f["data"][j].get("y")) for f in frames]
        if all(isinstance(p, list) for p in points) and len({len(p) for p in points}) == 1:
            out.add(k)
    return out


def open_at(fig: dict, index: int, *, came_from: int | None = None, token: str = "") -> dict:
    """A step figure opened at phase `index`: its frame merged into the traces (as Plotly.animate
    does) and its caption; no frames unless it glides (the page's stepper holds the phase).
    Unchanged traces shared.

    came_from = index ∓ 1 (the phase the chart showed before a Next / Back / Play tick): the traces
    open at came_from's phase, the caption at `index`'s, and layout.meta.glide holds the move to
    `index` under `token` for the page's trigger (app_pages/common/glide.py; Streamlit redraws
    with Plotly.react, which runs no frames). The move is two frames: the solid and activations
    bars and the strip's outline glide for GLIDE_MS, then the rest of `index`'s frame switches at
    once (arrows, greyed GPUs and their labels, hover text: their point counts change, so they
    cannot interpolate; hatched bars: on the overlay, _dynamic), with a full redraw so traces that
    appear or hide are laid out as a fresh draw lays them out.
    """
    frames = fig["frames"]
    last = len(frames) - 1
    if not 0 <= index <= last:
        raise ValueError(f"phase {index} is not a phase of this step: use 0 … {last}")
    if came_from is not None and (
        came_from not in (index - 1, index + 1) or not 0 <= came_from <= last
    ):
        raise ValueError(
            f"came_from={came_from!r} is not a neighbour of phase {index}: the drawing glides one "
            f"phase at a time, so pass {index - 1} (Next) or {index + 1} (Back) within 0 … "
            f"{last}, or None (a jump: no glide)"
        )
    start = frames[index if came_from is None else came_from]
    data = list(fig["data"])
    for i, update in zip(start["traces"], start["data"]):
        data[i] = copy.deepcopy({**data[i], **update})  # own copies: presenter recolours them
    layout = fig["layout"]
    title = {**layout["title"], **frames[index]["layout"]["title"]}
    out = {"data": data, "layout": {**layout, "title": title}}
    if came_from is None:
        return out
    glides = {k for k in _gliding(frames) if fig["data"][k].get("xaxis", "x") != OVER["xaxis"]}
    target = frames[index]
    bars = [(k, t) for k, t in zip(target["traces"], target["data"]) if k in glides]
    # Own copies, one deepcopy each: a trace dict shared by two frames would be recoloured twice
    # in presenter mode.
    move = copy.deepcopy({"name": f"{target['name']} glide", "traces": [k for k, _ in bars]})
    move["data"] = copy.deepcopy([t for _, t in bars])
    ease = {"duration": GLIDE_MS, "easing": "cubic-in-out"}
    opts = {
        "frame": [{"duration": GLIDE_MS, "redraw": False}, {"duration": 0, "redraw": True}],
        "transition": [ease, {"duration": 0}],
    }
    names = [move["name"], target["name"]]
    meta = {"glide": {"token": token, "frames": names, "opts": opts}}
    shown = [move, copy.deepcopy(target)]
    return {**out, "frames": shown, "layout": {**out["layout"], "meta": meta}}
