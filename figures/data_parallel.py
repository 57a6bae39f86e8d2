"""Plotly figure builders (plain dict specs) for the data-parallel page."""

from __future__ import annotations

import math

import numpy as np

from core.data_parallel import (
    AllReduceKind,
    DpJob,
    DpProof,
    DpStep,
    FixEffect,
    ScalingCurve,
    SgdCurves,
    SlowerAtScale,
    StragglerCurve,
    fix_effects,
)
from core.hardware import Cluster
from core.units import format_bandwidth, format_bytes, format_count, format_seconds

FULL_COLOR, RING_COLOR, WEIGHTED_COLOR = "#1f77b4", "#ff7f0e", "#2ca02c"
COMPUTE_COLOR, EXPOSED_COLOR, HIDDEN_COLOR = "#1f77b4", "#d62728", "#9ecae1"
MAX_PARAMS_SHOWN = 40


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
    return {"tickmode": "array", "tickvals": vals, "ticktext": [fmt(x) for x in vals]}


def _shards(sizes: tuple[int, ...]) -> str:
    return "/".join(map(str, sizes)) if len(sizes) <= 8 else f"{sizes[0]}/…/{sizes[-1]}"


def gradient_proof_figure(proof: DpProof, *, max_params: int = MAX_PARAMS_SHOWN) -> dict:
    """Top: full-batch vs ring-averaged (and weighted) gradient; bottom: their differences."""
    k = min(max_params, proof.full_grad.size)
    idx = list(range(k))
    n = len(proof.shard_sizes)
    series = [
        ("full batch", proof.full_grad, FULL_COLOR),
        (f"ring all-reduce ÷ {n}", proof.ring_grad, RING_COLOR),
    ]
    if not proof.equal_shards:
        series.append(("weighted by shard size", proof.weighted_grad, WEIGHTED_COLOR))
    traces = [
        {
            "type": "bar",
            "name": name,
            "x": idx,
            "y": np.round(g[:k], 12).tolist(),
            "marker": {"color": c},
            "xaxis": "x",
            "yaxis": "y",
        }
        for name, g, c in series
    ]
    for name, g, c in series[1:]:
        traces.append(
            {
                "type": "bar",
                "name": f"{name} − full",
                "x": idx,
                "y": (g[:k] - proof.full_grad[:k]).tolist(),
                "marker": {"color": c},
                "showlegend": False,
                "xaxis": "x",
                "yaxis": "y2",
            }
        )
    sub = (
        f"shards {_shards(proof.shard_sizes)} · max |ring − full| = {proof.ring_max_abs_diff:.1e}"
        + (
            ""
            if proof.equal_shards
            else f" · max |weighted − full| = {proof.weighted_max_abs_diff:.1e}"
        )
    )
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"Data parallel · N={n} · gradient proof", "subtitle": {"text": sub}},
            "barmode": "group",
            "height": 460,
            "legend": {"orientation": "h", "y": -0.15},
            "xaxis": {
                "title": {"text": f"parameter index (first {k} of {proof.full_grad.size})"},
                "anchor": "y2",
            },
            "yaxis": {"domain": [0.42, 1.0], "title": {"text": "gradient"}},
            "yaxis2": {
                "domain": [0.0, 0.32],
                "title": {"text": "difference"},
                "anchor": "x",
                "exponentformat": "e",
            },
            "margin": {"l": 70, "r": 20, "t": 80, "b": 60},
        },
    }


def loss_curves_figure(curves: SgdCurves, shard_sizes: tuple[int, ...]) -> dict:
    """Full-batch loss after each SGD step: full batch vs ring average vs weighted average."""
    n = len(shard_sizes)
    steps = curves.steps.tolist()
    traces = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "full batch",
            "x": steps,
            "y": curves.full_batch_loss.tolist(),
            "line": {"color": FULL_COLOR, "width": 5},
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": f"plain average of {n} shard means",
            "x": steps,
            "y": curves.ring_average_loss.tolist(),
            "line": {"color": RING_COLOR, "dash": "dash"},
            "marker": {"size": 5},
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": "average weighted by shard size",
            "x": steps,
            "y": curves.weighted_loss.tolist(),
            "line": {"color": WEIGHTED_COLOR, "dash": "dot"},
        },
    ]
    sub = (
        f"shards {_shards(tuple(shard_sizes))} · max |loss diff|: plain "
        f"{curves.max_abs_loss_diff_ring:.1e}, weighted {curves.max_abs_loss_diff_weighted:.1e}"
    )
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"SGD · N={n} · loss curves", "subtitle": {"text": sub}},
            "xaxis": {"title": {"text": "SGD step"}},
            "yaxis": {"title": {"text": "full-batch loss (MSE / 2)"}},
            "legend": {"orientation": "h", "y": -0.2},
            "height": 380,
            "margin": {"l": 70, "r": 20, "t": 80, "b": 60},
        },
    }


def straggler_figure(curve: StragglerCurve) -> dict:
    """Expected step (ms) vs ranks: closed form line, Monte Carlo points, P(step slow) on the
    right.
    """
    p = list(curve.rank_counts)
    mc = np.asarray(curve.mc_step_s) * 1e3
    traces = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": "μ + σ·E[max of p N(0,1)] (integral)",
            "x": p,
            "y": (np.asarray(curve.expected_step_s) * 1e3).tolist(),
            "line": {"color": FULL_COLOR, "width": 3},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": f"Monte Carlo ({curve.num_trials} trials)",
            "x": p,
            "y": mc.tolist(),
            "marker": {"color": RING_COLOR, "size": 8},
            "error_y": {
                "type": "data",
                "array": (np.asarray(curve.mc_stderr_s) * 1e3 * 2).tolist(),
                "visible": True,
            },
        },
        {
            "type": "scatter",
            "mode": "lines",
            "name": f"P(some rank hiccups), q={curve.slow_prob:g}",
            "x": p,
            "y": list(curve.prob_step_slow),
            "yaxis": "y2",
            "line": {"color": "#7f7f7f", "dash": "dot"},
        },
    ]
    mu, sigma = curve.mean_step_s * 1e3, curve.jitter_s * 1e3
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Stragglers · μ={mu:g} ms · σ={sigma:g} ms",
                "subtitle": {
                    "text": f"at p={p[-1]}: {curve.expected_step_s[-1] * 1e3:.2f} ms "
                    f"expected ({curve.slowdown[-1] - 1:.1%} slower than μ); "
                    "error bars ±2 standard errors"
                },
            },
            "xaxis": {"type": "log", "title": {"text": "ranks p"}, "tickvals": p},
            "yaxis": {"title": {"text": "expected step (ms)"}},
            "yaxis2": {
                "overlaying": "y",
                "side": "right",
                "range": [0, 1],
                "dtick": 0.2,
                "tickformat": ".0%",
                "title": {"text": "P(step slow)"},
                "showgrid": False,
            },
            "legend": {"orientation": "h", "y": -0.2},
            "height": 400,
            "margin": {"l": 70, "r": 70, "t": 80, "b": 60},
        },
    }


def _ms(values) -> list:
    return np.round(np.asarray(values, dtype=float) * 1e3, 4).tolist()


def step_time_figure(curve: ScalingCurve, *, title: str | None = None) -> dict:
    """Stacked bars per GPU count: compute, then the exposed all-reduce; efficiency on the right."""
    x = [str(n) for n in curve.num_gpus.tolist()]
    last = curve.steps[-1]
    traces = [
        {
            "type": "bar",
            "name": "compute (forward + backward)",
            "x": x,
            "y": _ms(curve.column("compute_s")),
            "marker": {"color": COMPUTE_COLOR},
        },
        {
            "type": "bar",
            "name": "exposed all-reduce",
            "x": x,
            "y": _ms(curve.column("exposed_comm_s")),
            "marker": {"color": EXPOSED_COLOR},
            "customdata": [s.bottleneck_link for s in curve.steps],
            "hovertemplate": "N=%{x}: %{y:.3g} ms exposed<br>bottleneck "
            "%{customdata}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "scaling efficiency",
            "x": x,
            "y": curve.column("efficiency").tolist(),
            "yaxis": "y2",
            "line": {"color": "#333"},
        },
    ]
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": title
                or f"Data parallel · N={last.num_gpus} · {curve.scaling.value} scaling",
                "subtitle": {
                    "text": f"at N={last.num_gpus}: step {last.step_s * 1e3:.4g} ms, "
                    f"efficiency {last.efficiency:.0%}, "
                    f"{last.tokens_per_s:,.0f} tokens/s"
                },
            },
            "barmode": "stack",
            "xaxis": {"title": {"text": "GPUs (N)"}, "type": "category"},
            "yaxis": {"title": {"text": "step time (ms)"}},
            "yaxis2": {
                "overlaying": "y",
                "side": "right",
                "range": [0, 1.05],
                "tickformat": ".0%",
                "dtick": 0.2,
                "title": {"text": "efficiency"},
                "showgrid": False,
            },
            "legend": {"orientation": "h", "y": -0.2},
            "height": 420,
            "margin": {"l": 70, "r": 70, "t": 80, "b": 60},
        },
    }


def efficiency_figure(curves: dict[str, ScalingCurve]) -> dict:
    """Scaling efficiency (left) and throughput (right, dotted) vs N for several variants."""
    colors = [FULL_COLOR, RING_COLOR, WEIGHTED_COLOR, EXPOSED_COLOR, "#9467bd", "#8c564b"]
    traces = []
    for i, (name, c) in enumerate(curves.items()):
        n, col = c.num_gpus.tolist(), colors[i % len(colors)]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{name}: efficiency",
                "x": n,
                "y": c.column("efficiency").tolist(),
                "line": {"color": col},
            }
        )
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"{name}: tokens/s",
                "x": n,
                "y": c.column("tokens_per_s").tolist(),
                "yaxis": "y2",
                "line": {"color": col, "dash": "dot"},
            }
        )
    top = max(c.num_gpus.max() for c in curves.values())
    return {
        "data": traces,
        "layout": {
            "title": {"text": f"Data parallel · N≤{top} · efficiency and throughput"},
            "xaxis": {
                "type": "log",
                "title": {"text": "GPUs (N)"},
                "tickvals": sorted({int(n) for c in curves.values() for n in c.num_gpus}),
            },
            "yaxis": {
                "title": {"text": "efficiency = compute / step"},
                "range": [0, 1.05],
                "tickformat": ".0%",
            },
            "yaxis2": {
                "overlaying": "y",
                "side": "right",
                "type": "log",
                "showgrid": False,
                "title": {"text": "tokens/s (dotted)"},
                **ticks_125(
                    [v for c in curves.values() for v in c.column("tokens_per_s")], format_count
                ),
            },
            "legend": {"orientation": "h", "y": -0.2},
            "height": 420,
            "margin": {"l": 70, "r": 70, "t": 60, "b": 60},
        },
    }


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
        bars = [
            [g[0][0], g[-1][1], sum(b[2] for b in g)]
            for g in (bars[i : i + k] for i in range(0, len(bars), k))
        ]
    return [tuple(b) for b in bars]


def bucket_timeline_figure(step: DpStep, *, max_bars: int = 400) -> dict:
    """Compute stream (forward, backward) above the all-reduce stream; red = exposed after
    backward.
    """
    end = step.compute_s
    traces = [
        {
            "type": "bar",
            "orientation": "h",
            "y": ["compute"],
            "base": [0.0],
            "x": [step.forward_s * 1e3],
            "name": "forward",
            "marker": {"color": HIDDEN_COLOR},
        },
        {
            "type": "bar",
            "orientation": "h",
            "y": ["compute"],
            "base": [step.forward_s * 1e3],
            "x": [step.backward_s * 1e3],
            "name": "backward",
            "marker": {"color": COMPUTE_COLOR},
        },
    ]
    bars = _comm_intervals(step, max_bars)
    for name, color, lo, hi in (
        ("all-reduce hidden behind backward", "#2ca02c", None, end),
        ("all-reduce exposed", EXPOSED_COLOR, end, None),
    ):
        parts = [
            (max(s, lo) if lo is not None else s, min(f, hi) if hi is not None else f, n)
            for s, f, n in bars
        ]
        parts = [(s, f, n) for s, f, n in parts if f > s]
        traces.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": name,
                "y": ["all-reduce"] * len(parts),
                "base": _ms([p[0] for p in parts]),
                "x": _ms([p[1] - p[0] for p in parts]),
                "customdata": [p[2] for p in parts],
                "marker": {"color": color, "line": {"width": 0}},
                "hovertemplate": "%{customdata} bucket(s): %{base:.4g} ms + %{x:.3g} ms"
                "<extra></extra>",
            }
        )
    nb = len(step.bucket_bytes)
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Bucket timeline · N={step.num_gpus} · {nb} bucket{'s' if nb > 1 else ''}",
                "subtitle": {
                    "text": f"all-reduce {step.comm_s * 1e3:.4g} ms, of which "
                    f"{step.exposed_comm_s * 1e3:.4g} ms exposed after backward "
                    f"(finish_i = max(ready_i, finish_i−1) + c_i)"
                },
            },
            "barmode": "overlay",
            "xaxis": {"title": {"text": "time from start of forward (ms)"}},
            "yaxis": {"autorange": "reversed"},
            "shapes": [
                {
                    "type": "line",
                    "x0": end * 1e3,
                    "x1": end * 1e3,
                    "y0": 0,
                    "y1": 1,
                    "yref": "paper",
                    "line": {"dash": "dash", "color": "#333"},
                }
            ],
            "legend": {"orientation": "h", "y": -0.3},
            "height": 300,
            "margin": {"l": 90, "r": 20, "t": 80, "b": 60},
        },
    }


def scenario_figure(s: SlowerAtScale) -> dict:
    """Small run, large run and each fix at scale: compute + exposed all-reduce, tokens/s as
    text.
    """
    rows = [(f"{s.small.num_gpus} GPUs", s.small), (f"{s.large.num_gpus} GPUs", s.large)] + [
        (f"{s.large.num_gpus} GPUs + {f.label}", f.step) for f in s.fixes
    ]
    names = [r[0] for r in rows]
    steps = [r[1] for r in rows]
    traces = [
        {
            "type": "bar",
            "orientation": "h",
            "name": "compute",
            "y": names,
            "x": _ms([t.compute_s for t in steps]),
            "marker": {"color": COMPUTE_COLOR},
        },
        {
            "type": "bar",
            "orientation": "h",
            "name": "exposed all-reduce",
            "y": names,
            "x": _ms([t.exposed_comm_s for t in steps]),
            "marker": {"color": EXPOSED_COLOR},
            "text": [f"{t.tokens_per_s:,.0f} tok/s · eff {t.efficiency:.0%}" for t in steps],
            "textposition": "outside",
            "cliponaxis": False,
        },
    ]
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Scaled {s.small.num_gpus} → {s.large.num_gpus} GPUs · step "
                f"{s.small.step_s * 1e3:.4g} ms → {s.large.step_s * 1e3:.4g} ms",
                "subtitle": {
                    "text": f"bottleneck {s.small.bottleneck_link} → "
                    f"{s.large.bottleneck_link}: {s.bandwidth_drop:.3g}× less "
                    "bandwidth for the same ~2·gradient bytes per rank"
                },
            },
            "barmode": "stack",
            "xaxis": {
                "title": {"text": "step time (ms)"},
                "range": [0, 1.45e3 * max(t.step_s for t in steps)],
            },
            "yaxis": {"autorange": "reversed"},
            "legend": {"orientation": "h", "y": -0.2},
            "height": 420,
            "margin": {"l": 330, "r": 160, "t": 80, "b": 60},
        },
    }


def fix_notes(effects: tuple[FixEffect, ...]) -> list[str]:
    """One markdown line per fix: the verdict on tokens/s, then the measured terms that moved."""
    lines = []
    for e in effects:
        gain = e.tokens_per_s_gain
        verdict = (
            f"helps: tokens/s ×{gain:.3g}"
            if e.helps
            else f"**does not help**: tokens/s ×{gain:.3g} ({gain - 1:+.1%})"
        )
        why = []
        if e.hidden_s > 0:
            cap = (
                "all it can: backward lasts"
                if e.hidden_s >= 0.99 * e.hide_cap_s
                else "backward lasts"
            )
            why.append(
                f"overlap hides {format_seconds(e.hidden_s)} of the {format_seconds(e.comm_s)} "
                f"all-reduce ({cap} "
                f"{format_seconds(e.hide_cap_s)})"
            )
        if e.latency_change_s > 0:
            why.append(
                f"{e.num_buckets} buckets add {format_seconds(e.latency_change_s)} of "
                "per-message latency"
            )
        bandwidth = e.comm_change_s - e.latency_change_s
        if bandwidth < 0:
            why.append(f"bytes over the links take {format_seconds(-bandwidth)} less")
        if e.compute_change_s > 0:
            why.append(
                f"compute grows {format_seconds(e.compute_change_s)} while the gradient "
                "bytes stay the same, so each step carries more tokens per byte sent"
            )
        lines.append(f"- **{e.label}** — {verdict}" + (": " + "; ".join(why) + "." if why else "."))
    return lines


def how_computed_lines(
    proof: DpProof | None,
    job: DpJob | None,
    step: DpStep | None,
    curve: StragglerCurve,
    units: str,
    bw_units: str = "decimal",
) -> list[str]:
    """Markdown paragraphs: each formula of the page with the value the core measured beside it."""
    lines = (
        []
        if proof is None
        else [
            r"**Gradient.** $\nabla L = \frac{1}{B}\sum_{i=1}^{B} \nabla\ell_i = \sum_r "
            r"\frac{n_r}{B}\,g_r"
            r"\;\overset{n_r = B/N}{=}\;\frac{1}{N}\sum_r g_r$, with $g_r$ rank $r$'s mean "
            r"gradient over "
            f"its $n_r$ samples. Measured: max |ring ÷ N − full| = {proof.ring_max_abs_diff:.1e} "
            "over "
            rf"{proof.full_grad.size} parameters; weighted $\sum_r n_r g_r / \sum_r n_r$: "
            f"{proof.weighted_max_abs_diff:.1e} (shards {'/'.join(map(str, proof.shard_sizes))})."
        ]
    )
    if job is not None and step is not None:
        p, nb = step.num_gpus, len(step.bucket_bytes)
        ring = (
            r"$t_i = 2(p-1)\,\alpha + 2\frac{p-1}{p}\frac{n_i}{B}$ (flat ring, B = the slowest "
            "link per rank)"
            if job.all_reduce is AllReduceKind.FLAT_RING
            else r"$t_i = \text{RS}_\text{node}(n_i) + \text{AR}_\text{nodes}(n_i/g) + "
            r"\text{AG}_\text{node}(n_i)$ (hierarchical: only $1/g$ of each bucket crosses the "
            r"NICs)"
        )
        lines += [
            rf"**Bytes.** Each rank of a ring sends $2\frac{{p-1}}{{p}}\,n$: at p = {p}, n = "
            f"{format_bytes(step.grad_bytes, units)} → "
            f"{format_bytes(step.bytes_sent_per_rank, units)}.",
            f"**All-reduce time**, per bucket: {ring}, α the latency charged per step by the cost "
            "model. "
            f"Measured at p = {p}: {nb} bucket{'s' * (nb > 1)}, {format_seconds(step.comm_s)} in "
            "all = "
            f"{format_seconds(step.comm_latency_s)} latency + "
            f"{format_seconds(step.comm_s - step.comm_latency_s)} bytes over "
            f"{format_bandwidth(step.bottleneck_bytes_per_s, bw_units)} ({step.bottleneck_link}).",
            r"**Compute.** $t = \frac{6\,\Psi\,T}{\text{peak} \times \text{MFU}}$, forward ⅓ and "
            f"backward ⅔: Ψ = {format_count(job.num_params)}, T = {step.tokens_per_gpu:,.0f} "
            "tokens, MFU "
            f"{job.mfu:.0%} → {format_seconds(step.compute_s)} ({format_seconds(step.forward_s)} + "
            f"{format_seconds(step.backward_s)}).",
            r"**Overlap.** Bucket $i$ is ready at $r_i$ (gradients arrive evenly through "
            r"backward); "
            r"$\text{finish}_i = \max(r_i, \text{finish}_{i-1}) + t_i$; exposed = finish of the "
            r"last "
            f"bucket − end of backward = {format_seconds(step.exposed_comm_s)} "
            f"({format_seconds(step.hidden_comm_s)} hidden). Step = compute + exposed = "
            f"{format_seconds(step.step_s)}; efficiency = compute / step = {step.efficiency:.1%}.",
        ]
    i = len(curve.rank_counts) - 1
    lines.append(
        r"**Stragglers.** $E[\text{step}] = \mu + \sigma\,E[\max_{r \le p} Z_r]$, "
        r"$E[\max] = \int x\,p\,\varphi(x)\,\Phi(x)^{p-1}\,dx$ (numerical integration). At p = "
        f"{curve.rank_counts[i]}: E[max] = {curve.expected_max_z[i]:.4f} → "
        f"{curve.expected_step_s[i] * 1e3:.2f} ms; Monte Carlo {curve.mc_step_s[i] * 1e3:.2f} ± "
        f"{2 * curve.mc_stderr_s[i] * 1e3:.2f} ms. A rare hiccup: $P = 1 - (1-q)^p$ = "
        f"{curve.prob_step_slow[i]:.3f}."
    )
    return lines


def scenario_rows(s: SlowerAtScale, units: str, bw_units: str) -> list[tuple[str, str, str]]:
    """(quantity, small run, large run) rows of the scenario table, formatted for display."""
    small, large = s.small, s.large
    return [
        (
            "bytes sent per rank (ring simulator)",
            format_bytes(s.sim_bytes_sent_per_rank_small, units),
            format_bytes(s.sim_bytes_sent_per_rank_large, units),
        ),
        ("bottleneck link", small.bottleneck_link, large.bottleneck_link),
        (
            "its bandwidth per rank",
            format_bandwidth(small.bottleneck_bytes_per_s, bw_units),
            format_bandwidth(large.bottleneck_bytes_per_s, bw_units),
        ),
        (
            "compute / exposed all-reduce",
            f"{format_seconds(small.compute_s)} / {format_seconds(small.exposed_comm_s)}",
            f"{format_seconds(large.compute_s)} / {format_seconds(large.exposed_comm_s)}",
        ),
        (
            "step time",
            format_seconds(small.step_s),
            f"{format_seconds(large.step_s)} (×{s.step_ratio:.3g})",
        ),
        (
            "tokens/s",
            f"{small.tokens_per_s:,.0f}",
            f"{large.tokens_per_s:,.0f} (×{s.throughput_ratio:.3g}, ideal ×{s.gpu_ratio:g})",
        ),
        (
            "tokens/s, strong scaling (same global batch)",
            f"{small.tokens_per_s:,.0f}",
            f"{s.large_strong.tokens_per_s:,.0f} (×{s.strong_throughput_ratio:.2g})",
        ),
    ]


def scenario_markdown(s: SlowerAtScale, cluster: Cluster, units: str, bw_units: str) -> str:
    """The scenario in numbers: setup, small vs large run side by side, the link that changed, each
    fix.
    """
    small, large, j = s.small, s.large, s.job
    table = [f"| | {small.num_gpus} GPUs | {large.num_gpus} GPUs |", "|---|---|---|"]
    table += [f"| {a} | {b} | {c} |" for a, b, c in scenario_rows(s, units, bw_units)]
    return "\n\n".join(
        [
            f"{format_count(j.num_params)} parameters, fp32 gradients "
            f"({format_bytes(j.grad_bytes, units)}), "
            f"{j.tokens_per_gpu:,.0f} tokens per GPU, one all-reduce after backward, on nodes of "
            f"{cluster.gpus_per_node}× {cluster.gpu.name} ({cluster.intra_link.name}) with "
            f"{cluster.nics_per_node}× {cluster.inter_link.name} per node.",
            "\n".join(table),
            f"The ring leaves {small.bottleneck_link} for **{large.bottleneck_link}**: every rank "
            "still sends "
            f"about twice the gradient, through a link {s.bandwidth_drop:.3g}× slower. Each fix, "
            "applied at "
            f"{large.num_gpus} GPUs (the setup is fixed; the bucketing fix uses the page's bucket "
            "size):",
            "\n".join(fix_notes(fix_effects(s))),
        ]
    )
