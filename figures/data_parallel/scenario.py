"""The slower-at-scale scenario: small run, large run and each fix, with their notes."""

from __future__ import annotations

from core.data_parallel import FixEffect, SlowerAtScale, fix_effects
from core.hardware import Cluster
from core.units import format_bandwidth, format_bytes, format_count, format_seconds
from figures.data_parallel.scaling import SCALING_EFFICIENCY, dtype_name, percent, to_ms
from figures.style import COLOURS, bottom_legend, margin


def scenario_figure(s: SlowerAtScale) -> dict:
    """Small run, large run and each fix at scale: compute + exposed all-reduce, tokens/s as
    text.
    """
    n = s.large.num_gpus
    rows = [(f"{s.small.num_gpus} GPUs", s.small), (f"{n} GPUs, thin network", s.large)]
    rows += [(f"{n} GPUs + {f.label}", f.step) for f in s.fixes]
    rows += [
        (f"{n} GPUs, DGX-class network", s.dgx_large),
        (f"{n} GPUs, DGX-class + bucketing + overlap", s.dgx_large_bucketed),
    ]
    names = [r[0] for r in rows]
    steps = [r[1] for r in rows]
    traces = [
        {
            "type": "bar",
            "orientation": "h",
            "name": "compute",
            "y": names,
            "x": to_ms([t.compute_s for t in steps]),
            "marker": {"color": COLOURS["compute"]},
        },
        {
            "type": "bar",
            "orientation": "h",
            "name": "exposed all-reduce",
            "y": names,
            "x": to_ms([t.exposed_comm_s for t in steps]),
            "marker": {"color": COLOURS["exposed"]},
            "text": [
                f"{t.tokens_per_s:,.0f} tok/s · scaling eff. {percent(t.efficiency)}" for t in steps
            ],
            "textposition": "outside",
            "cliponaxis": False,
        },
    ]
    return {
        "data": traces,
        "layout": {
            "title": {
                "text": f"Scaled {s.small.num_gpus} → {s.large.num_gpus} GPUs on a thin network "
                f"· step {s.small.step_s * 1e3:.4g} ms → {s.large.step_s * 1e3:.4g} ms",
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
            "legend": bottom_legend(),
            "height": 480,
            "margin": margin(l=330, r=160, t=80, b=60),
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
                f"all-reduce ({cap} {format_seconds(e.hide_cap_s)})"
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
        ("all-reduce NCCL would pick", small.algorithms, large.algorithms),
        (
            "tokens/s",
            f"{small.tokens_per_s:,.0f}",
            f"{large.tokens_per_s:,.0f} (speed-up ×{s.speedup:.3g}, ideal ×{s.gpu_ratio:g})",
        ),
        (
            "scaling efficiency (compute / step)",
            percent(small.efficiency),
            percent(large.efficiency),
        ),
        (
            "same job, DGX-class network: step / scaling efficiency",
            f"{format_seconds(s.dgx_small.step_s)} / {percent(s.dgx_small.efficiency)}",
            f"{format_seconds(s.dgx_large.step_s)} / {percent(s.dgx_large.efficiency)}",
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
            f"{format_count(j.num_params)} parameters, {dtype_name(j.grad_bytes_per_param)} "
            f"gradients "
            f"({format_bytes(j.grad_bytes, units)}), {j.tokens_per_gpu:,.0f} tokens per GPU, one "
            f"all-reduce after backward, on nodes of {cluster.gpus_per_node}× {cluster.gpu.name} "
            f"({cluster.intra_link.name}) with {cluster.nics_per_node}× "
            f"{cluster.inter_link.name} per node: **a thin network** "
            f"({thin_note(s, cluster, bw_units)}). {SCALING_EFFICIENCY}.",
            "\n".join(table),
            f"The ring leaves {small.bottleneck_link} for **{large.bottleneck_link}**: every "
            f"rank still sends about twice the gradient, through a link {s.bandwidth_drop:.3g}× "
            f"slower. Each fix, applied at {large.num_gpus} GPUs (the setup is fixed; the "
            "bucketing fix uses the page's bucket size):",
            "\n".join(fix_notes(fix_effects(s))),
            dgx_note(s, units),
        ]
    )


def thin_note(s: SlowerAtScale, cluster: Cluster, bw_units: str) -> str:
    """How thin: the node's NIC bandwidth per GPU against a DGX-class node's."""
    per_gpu = cluster.node_injection_bytes_per_s / cluster.gpus_per_node
    return (
        f"{format_bandwidth(per_gpu, bw_units)} of NIC per GPU; a DGX A100 has one 200 Gb/s "
        "HDR NIC per GPU, 25 GB/s"
    )


def dgx_note(s: SlowerAtScale, units: str) -> str:
    """The same job on a DGX-class network, with and without bucketing + overlap."""
    d, b = s.dgx_large, s.dgx_large_bucketed
    return (
        f"**The same job on a DGX-class network** (8× InfiniBand HDR per node): at "
        f"{d.num_gpus} GPUs the step is {format_seconds(d.step_s)} (scaling efficiency "
        f"{percent(d.efficiency)}, NCCL picks {d.algorithms}); with bucketing + overlap "
        f"{format_seconds(b.step_s)} ({percent(b.efficiency)}, {b.algorithms} per bucket): "
        "there the all-reduce is shorter than backward, so overlap hides it, as PyTorch DDP "
        "reports (Li et al., VLDB 2020, evaluation). On the thin network the all-reduce lasts many "
        "backward passes: overlap can hide at most one, and each bucket pays the latency again."
    )
