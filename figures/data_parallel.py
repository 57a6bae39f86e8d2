"""Plotly figure builders (plain dict specs) for the data-parallel page."""
from __future__ import annotations

import numpy as np

from core.data_parallel import DpProof, SgdCurves
from core.dp_scaling import DpStep, ScalingCurve
from core.dp_scenario import SlowerAtScale
from core.stragglers import StragglerCurve

FULL_COLOR, RING_COLOR, WEIGHTED_COLOR = "#1f77b4", "#ff7f0e", "#2ca02c"
COMPUTE_COLOR, EXPOSED_COLOR, HIDDEN_COLOR = "#1f77b4", "#d62728", "#9ecae1"
MAX_PARAMS_SHOWN = 40


def _shards(sizes: tuple[int, ...]) -> str:
    return "/".join(map(str, sizes)) if len(sizes) <= 8 else f"{sizes[0]}/…/{sizes[-1]}"


def gradient_proof_figure(proof: DpProof, *, max_params: int = MAX_PARAMS_SHOWN) -> dict:
    """Top: full-batch vs ring-averaged (and weighted) gradient; bottom: their differences."""
    k = min(max_params, proof.full_grad.size)
    idx = list(range(k))
    n = len(proof.shard_sizes)
    series = [("full batch", proof.full_grad, FULL_COLOR),
              (f"ring all-reduce ÷ {n}", proof.ring_grad, RING_COLOR)]
    if not proof.equal_shards:
        series.append(("weighted by shard size", proof.weighted_grad, WEIGHTED_COLOR))
    traces = [{"type": "bar", "name": name, "x": idx, "y": np.round(g[:k], 12).tolist(),
               "marker": {"color": c}, "xaxis": "x", "yaxis": "y"} for name, g, c in series]
    for name, g, c in series[1:]:
        traces.append({"type": "bar", "name": f"{name} − full", "x": idx,
                       "y": (g[:k] - proof.full_grad[:k]).tolist(), "marker": {"color": c},
                       "showlegend": False, "xaxis": "x", "yaxis": "y2"})
    sub = (f"shards {_shards(proof.shard_sizes)} · max |ring − full| = {proof.ring_max_abs_diff:.1e}"
           + ("" if proof.equal_shards else
              f" · max |weighted − full| = {proof.weighted_max_abs_diff:.1e}"))
    return {"data": traces, "layout": {
        "title": {"text": f"Data parallel · N={n} · gradient proof", "subtitle": {"text": sub}},
        "barmode": "group", "height": 460, "legend": {"orientation": "h", "y": -0.15},
        "xaxis": {"title": {"text": f"parameter index (first {k} of {proof.full_grad.size})"},
                  "anchor": "y2"},
        "yaxis": {"domain": [0.42, 1.0], "title": {"text": "gradient"}},
        "yaxis2": {"domain": [0.0, 0.32], "title": {"text": "difference"}, "anchor": "x",
                   "exponentformat": "e"},
        "margin": {"l": 70, "r": 20, "t": 80, "b": 60}}}


def loss_curves_figure(curves: SgdCurves, shard_sizes: tuple[int, ...]) -> dict:
    """Full-batch loss after each SGD step: full batch vs ring average vs weighted average."""
    n = len(shard_sizes)
    steps = curves.steps.tolist()
    traces = [
        {"type": "scatter", "mode": "lines", "name": "full batch", "x": steps,
         "y": curves.full_batch_loss.tolist(), "line": {"color": FULL_COLOR, "width": 5}},
        {"type": "scatter", "mode": "lines+markers", "name": f"plain average of {n} shard means",
         "x": steps, "y": curves.ring_average_loss.tolist(),
         "line": {"color": RING_COLOR, "dash": "dash"}, "marker": {"size": 5}},
        {"type": "scatter", "mode": "lines", "name": "average weighted by shard size", "x": steps,
         "y": curves.weighted_loss.tolist(), "line": {"color": WEIGHTED_COLOR, "dash": "dot"}},
    ]
    sub = (f"shards {_shards(tuple(shard_sizes))} · max |loss diff|: plain "
           f"{curves.max_abs_loss_diff_ring:.1e}, weighted {curves.max_abs_loss_diff_weighted:.1e}")
    return {"data": traces, "layout": {
        "title": {"text": f"SGD · N={n} · loss curves", "subtitle": {"text": sub}},
        "xaxis": {"title": {"text": "SGD step"}},
        "yaxis": {"title": {"text": "full-batch loss (MSE / 2)"}},
        "legend": {"orientation": "h", "y": -0.2}, "height": 380,
        "margin": {"l": 70, "r": 20, "t": 80, "b": 60}}}


def straggler_figure(curve: StragglerCurve) -> dict:
    """Expected step (ms) vs ranks: closed form line, Monte Carlo points, P(step slow) on the right."""
    p = list(curve.rank_counts)
    mc = np.asarray(curve.mc_step_s) * 1e3
    traces = [
        {"type": "scatter", "mode": "lines", "name": "μ + σ·E[max of p N(0,1)] (integral)",
         "x": p, "y": (np.asarray(curve.expected_step_s) * 1e3).tolist(),
         "line": {"color": FULL_COLOR, "width": 3}},
        {"type": "scatter", "mode": "markers", "name": f"Monte Carlo ({curve.num_trials} trials)",
         "x": p, "y": mc.tolist(), "marker": {"color": RING_COLOR, "size": 8},
         "error_y": {"type": "data", "array": (np.asarray(curve.mc_stderr_s) * 1e3 * 2).tolist(),
                     "visible": True}},
        {"type": "scatter", "mode": "lines", "name": f"P(some rank hiccups), q={curve.slow_prob:g}",
         "x": p, "y": list(curve.prob_step_slow), "yaxis": "y2",
         "line": {"color": "#7f7f7f", "dash": "dot"}},
    ]
    mu, sigma = curve.mean_step_s * 1e3, curve.jitter_s * 1e3
    return {"data": traces, "layout": {
        "title": {"text": f"Stragglers · μ={mu:g} ms · σ={sigma:g} ms",
                  "subtitle": {"text": f"at p={p[-1]}: {curve.expected_step_s[-1] * 1e3:.2f} ms "
                                       f"expected ({curve.slowdown[-1] - 1:.1%} slower than μ); "
                                       "error bars ±2 standard errors"}},
        "xaxis": {"type": "log", "title": {"text": "ranks p"}, "tickvals": p},
        "yaxis": {"title": {"text": "expected step (ms)"}},
        "yaxis2": {"overlaying": "y", "side": "right", "range": [0, 1], "dtick": 0.2,
                   "tickformat": ".0%", "title": {"text": "P(step slow)"}, "showgrid": False},
        "legend": {"orientation": "h", "y": -0.2}, "height": 400,
        "margin": {"l": 70, "r": 70, "t": 80, "b": 60}}}


def _ms(values) -> list:
    return np.round(np.asarray(values, dtype=float) * 1e3, 4).tolist()


def step_time_figure(curve: ScalingCurve, *, title: str | None = None) -> dict:
    """Stacked bars per GPU count: compute, then the exposed all-reduce; efficiency on the right."""
    x = [str(n) for n in curve.num_gpus.tolist()]
    last = curve.steps[-1]
    traces = [
        {"type": "bar", "name": "compute (forward + backward)", "x": x,
         "y": _ms(curve.column("compute_s")), "marker": {"color": COMPUTE_COLOR}},
        {"type": "bar", "name": "exposed all-reduce", "x": x, "y": _ms(curve.column("exposed_comm_s")),
         "marker": {"color": EXPOSED_COLOR},
         "customdata": [s.bottleneck_link for s in curve.steps],
         "hovertemplate": "N=%{x}: %{y:.3g} ms exposed<br>bottleneck %{customdata}<extra></extra>"},
        {"type": "scatter", "mode": "lines+markers", "name": "scaling efficiency", "x": x,
         "y": curve.column("efficiency").tolist(), "yaxis": "y2", "line": {"color": "#333"}},
    ]
    return {"data": traces, "layout": {
        "title": {"text": title or f"Data parallel · N={last.num_gpus} · {curve.scaling.value} scaling",
                  "subtitle": {"text": f"at N={last.num_gpus}: step {last.step_s * 1e3:.4g} ms, "
                                       f"efficiency {last.efficiency:.0%}, "
                                       f"{last.tokens_per_s:,.0f} tokens/s"}},
        "barmode": "stack", "xaxis": {"title": {"text": "GPUs (N)"}, "type": "category"},
        "yaxis": {"title": {"text": "step time (ms)"}},
        "yaxis2": {"overlaying": "y", "side": "right", "range": [0, 1.05], "tickformat": ".0%",
                   "dtick": 0.2,
                   "title": {"text": "efficiency"}, "showgrid": False},
        "legend": {"orientation": "h", "y": -0.2}, "height": 420,
        "margin": {"l": 70, "r": 70, "t": 80, "b": 60}}}


def efficiency_figure(curves: dict[str, ScalingCurve]) -> dict:
    """Scaling efficiency (left) and throughput (right, dotted) vs N for several variants."""
    colors = [FULL_COLOR, RING_COLOR, WEIGHTED_COLOR, EXPOSED_COLOR, "#9467bd", "#8c564b"]
    traces = []
    for i, (name, c) in enumerate(curves.items()):
        n, col = c.num_gpus.tolist(), colors[i % len(colors)]
        traces.append({"type": "scatter", "mode": "lines+markers", "name": f"{name}: efficiency",
                       "x": n, "y": c.column("efficiency").tolist(), "line": {"color": col}})
        traces.append({"type": "scatter", "mode": "lines", "name": f"{name}: tokens/s", "x": n,
                       "y": c.column("tokens_per_s").tolist(), "yaxis": "y2",
                       "line": {"color": col, "dash": "dot"}})
    top = max(c.num_gpus.max() for c in curves.values())
    return {"data": traces, "layout": {
        "title": {"text": f"Data parallel · N≤{top} · efficiency and throughput"},
        "xaxis": {"type": "log", "title": {"text": "GPUs (N)"},
                  "tickvals": sorted({int(n) for c in curves.values() for n in c.num_gpus})},
        "yaxis": {"title": {"text": "efficiency = compute / step"}, "range": [0, 1.05],
                  "tickformat": ".0%"},
        "yaxis2": {"overlaying": "y", "side": "right", "type": "log", "showgrid": False,
                   "dtick": "D2", "title": {"text": "tokens/s (dotted)"}},
        "legend": {"orientation": "h", "y": -0.2}, "height": 420,
        "margin": {"l": 70, "r": 70, "t": 60, "b": 60}}}


def _comm_intervals(step: DpStep, max_bars: int) -> list[tuple[float, float, int]]:
    """(start, finish, buckets) bars: back-to-back buckets merged, then grouped to ≤ max_bars."""
    bars: list[list] = []
    for s, f in zip(step.bucket_start_s.tolist(), step.bucket_finish_s.tolist()):
        if bars and s <= bars[-1][1] + 1e-12:
            bars[-1][1], bars[-1][2] = f, bars[-1][2] + 1
        else:
            bars.append([s, f, 1])
    k = -(-len(bars) // max_bars)
    if k > 1:  # group k neighbours into one bar (overstates busy time a little; hover says so)
        bars = [[g[0][0], g[-1][1], sum(b[2] for b in g)] for g in
                (bars[i:i + k] for i in range(0, len(bars), k))]
    return [tuple(b) for b in bars]


def bucket_timeline_figure(step: DpStep, *, max_bars: int = 400) -> dict:
    """Compute stream (forward, backward) above the all-reduce stream; red = exposed after backward."""
    end = step.compute_s
    traces = [{"type": "bar", "orientation": "h", "y": ["compute"], "base": [0.0],
               "x": [step.forward_s * 1e3], "name": "forward", "marker": {"color": HIDDEN_COLOR}},
              {"type": "bar", "orientation": "h", "y": ["compute"], "base": [step.forward_s * 1e3],
               "x": [step.backward_s * 1e3], "name": "backward", "marker": {"color": COMPUTE_COLOR}}]
    bars = _comm_intervals(step, max_bars)
    for name, color, lo, hi in (("all-reduce hidden behind backward", "#2ca02c", None, end),
                                ("all-reduce exposed", EXPOSED_COLOR, end, None)):
        parts = [(max(s, lo) if lo is not None else s, min(f, hi) if hi is not None else f, n)
                 for s, f, n in bars]
        parts = [(s, f, n) for s, f, n in parts if f > s]
        traces.append({"type": "bar", "orientation": "h", "name": name, "y": ["all-reduce"] * len(parts),
                       "base": _ms([p[0] for p in parts]), "x": _ms([p[1] - p[0] for p in parts]),
                       "customdata": [p[2] for p in parts], "marker": {"color": color, "line": {"width": 0}},
                       "hovertemplate": "%{customdata} bucket(s): %{base:.4g} ms + %{x:.3g} ms"
                                        "<extra></extra>"})
    nb = len(step.bucket_bytes)
    return {"data": traces, "layout": {
        "title": {"text": f"Bucket timeline · N={step.num_gpus} · {nb} bucket{'s' if nb > 1 else ''}",
                  "subtitle": {"text": f"all-reduce {step.comm_s * 1e3:.4g} ms, of which "
                                       f"{step.exposed_comm_s * 1e3:.4g} ms exposed after backward "
                                       f"(finish_i = max(ready_i, finish_i−1) + c_i)"}},
        "barmode": "overlay", "xaxis": {"title": {"text": "time from start of forward (ms)"}},
        "yaxis": {"autorange": "reversed"},
        "shapes": [{"type": "line", "x0": end * 1e3, "x1": end * 1e3, "y0": 0, "y1": 1, "yref": "paper",
                    "line": {"dash": "dash", "color": "#333"}}],
        "legend": {"orientation": "h", "y": -0.3}, "height": 300,
        "margin": {"l": 90, "r": 20, "t": 80, "b": 60}}}


def scenario_figure(s: SlowerAtScale) -> dict:
    """Small run, large run and each fix at scale: compute + exposed all-reduce, tokens/s as text."""
    rows = [(f"{s.small.num_gpus} GPUs", s.small), (f"{s.large.num_gpus} GPUs", s.large)] + \
        [(f"{s.large.num_gpus} GPUs + {f.label}", f.step) for f in s.fixes]
    names = [r[0] for r in rows]
    steps = [r[1] for r in rows]
    traces = [
        {"type": "bar", "orientation": "h", "name": "compute", "y": names,
         "x": _ms([t.compute_s for t in steps]), "marker": {"color": COMPUTE_COLOR}},
        {"type": "bar", "orientation": "h", "name": "exposed all-reduce", "y": names,
         "x": _ms([t.exposed_comm_s for t in steps]), "marker": {"color": EXPOSED_COLOR},
         "text": [f"{t.tokens_per_s:,.0f} tok/s · eff {t.efficiency:.0%}" for t in steps],
         "textposition": "outside"}]
    return {"data": traces, "layout": {
        "title": {"text": f"Scaled {s.small.num_gpus} → {s.large.num_gpus} GPUs · step "
                          f"{s.small.step_s * 1e3:.4g} ms → {s.large.step_s * 1e3:.4g} ms",
                  "subtitle": {"text": f"bottleneck {s.small.bottleneck_link} → "
                                       f"{s.large.bottleneck_link}: {s.bandwidth_drop:.3g}× less "
                                       "bandwidth for the same ~2·gradient bytes per rank"}},
        "barmode": "stack",
        "xaxis": {"title": {"text": "step time (ms)"}, "range": [0, 1.45e3 * max(t.step_s for t in steps)]},
        "yaxis": {"autorange": "reversed"}, "legend": {"orientation": "h", "y": -0.2},
        "height": 420, "margin": {"l": 330, "r": 160, "t": 80, "b": 60}}}
