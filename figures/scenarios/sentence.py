"""The one-sentence scenario (TP in the node, PP across, ZeRO to fit), clause by clause."""

from __future__ import annotations

from core.scenarios import Sentence
from core.units import format_bytes, gib_or_gb
from figures.scenarios.common import BAD, FONT, OK, Walkthrough, sec, verdict
from figures.scenarios.placement import pp_bytes_per_gpu, setting
from figures.style import COLOURS, PART_COLOURS


# ---------- 6 · The sentence ----------
def sentence_text(s: Sentence, units: str) -> Walkthrough:
    b, i, a, d = (lambda x: format_bytes(x, units)), s.inside, s.across, s.ddp
    ratio = s.tp_bytes_per_microbatch / pp_bytes_per_gpu(s.pp_hop_bytes)  # like with like
    zero = f"ZeRO-{s.zero_stage}"
    faster = 1 - s.fastest_step_s / i.step_s
    return Walkthrough(
        title="6 · “The sentence”, backed by numbers",
        intro=(
            "*“TP = 8 inside the node because the in-layer all-reduce needs NVLink, PP across "
            "nodes because activations tolerate InfiniBand, and ZeRO on top because the "
            f"optimizer state won't fit.”* For {s.model} on {s.nodes} × {s.gpus_per_node} "
            f"{s.gpu} joined by {i.pp_link} ({setting(s)}): **{i.label}**."
        ),
        steps=(
            f"**TP = {s.gpus_per_node} inside the node, because the in-layer all-reduce needs "
            f"NVLink.** Exposed TP time is {sec(i.breakdown.tp_s)} on {i.tp_link}; ordered so "
            f"that TP groups span nodes ({a.order}, {a.tp_link}) it is "
            f"**{sec(a.breakdown.tp_s)}** ({a.breakdown.tp_s / i.breakdown.tp_s:.3g}×) and the "
            f"step {sec(i.step_s)} → {sec(a.step_s)}.",
            f"**PP across nodes, because activations tolerate {i.pp_link}.** Per micro-batch a GPU "
            f"sends {b(pp_bytes_per_gpu(s.pp_hop_bytes))} to its pipeline neighbours (activation "
            f"out, gradient back) and {b(s.tp_bytes_per_microbatch)} of TP traffic ({ratio:.3g}× "
            "more, both forward + backward); the pipeline's "
            f"sends over {i.pp_link} cost {sec(i.breakdown.pp_p2p_s)}, "
            f"{i.breakdown.pp_p2p_s / i.step_s:.2%} of the step.",
            "**ZeRO on top, because the optimizer state won't fit.** Without it each GPU holds "
            f"{b(d.memory_bytes)}, {b(d.optimizer_bytes)} of it Adam state, against "
            f"{b(d.usable_bytes)} usable: {verdict(d.fits)}. {zero} shards it over the DP ranks: "
            f"optimizer {b(i.optimizer_bytes)}, total **{b(i.memory_bytes)}**: "
            f"{verdict(i.fits)}. ({zero} is the lowest stage that fits.)",
            "**Not the last word.** The planner's search over every layout finds "
            f"**{s.fastest_label}** at {sec(s.fastest_step_s)} per step, {faster:.0%} less time "
            f"than {sec(i.step_s)}: the sentence places the axes right; the degrees are worth a "
            "search.",
        ),
        takeaway=(
            "Each clause is a measured number: TP off NVLink costs "
            f"{a.breakdown.tp_s / i.breakdown.tp_s:.3g}× the TP time, PP's sends are "
            f"{i.breakdown.pp_p2p_s / i.step_s:.2%} of the step on {i.pp_link}, and without ZeRO "
            f"the GPU needs {b(d.memory_bytes)}."
        ),
        headline=(
            f"TP off NVLink: {a.breakdown.tp_s / i.breakdown.tp_s:.3g}× the TP time; PP's sends: "
            f"{i.breakdown.pp_p2p_s / i.step_s:.2%} of the step; no ZeRO: {b(d.memory_bytes)}."
        ),
        how=(
            "Every number is `core.planner.evaluate` of one layout on the cluster (step-time "
            "breakdown, spans, memory with the planner's 10 % headroom), plus "
            "`core.tensor_parallel.tp_comm_plan` for bytes per micro-batch; the last step is "
            "`core.planner.search` over every DP × TP × PP × ZeRO × micro-batch × schedule."
        ),
        question="Per micro-batch, forward + backward: how many times more bytes does a GPU send "
        "for TP than to its pipeline neighbours?",
        answer=ratio,
        unit="×",
        explanation=f"{ratio:.4g} = layers per stage × all-reduces per layer × 2(t−1)/t ÷ 2: each "
        "all-reduce and each pipeline send moves b·s·h·2 bytes, and a pipeline GPU sends two.",
    )


def sentence_figure(s: Sentence, units: str) -> dict:
    name, unit = gib_or_gb(units)
    i, a, d = s.inside, s.across, s.ddp
    bar = lambda x, y, colours, xa, ya, text: {  # noqa: E731
        "type": "bar",
        "x": x,
        "y": y,
        "marker": {"color": colours},
        "xaxis": xa,
        "yaxis": ya,
        "text": text,
        "textposition": "outside",
        "cliponaxis": False,
        "showlegend": False,
    }
    cap = d.usable_bytes / unit
    data = [
        bar(
            ["TP in node", "TP across"],
            [i.breakdown.tp_s, a.breakdown.tp_s],
            [OK, BAD],
            "x",
            "y",
            [f"{v:.3g} s" for v in (i.breakdown.tp_s, a.breakdown.tp_s)],
        ),
        bar(
            ["TP per GPU", "PP hop"],
            [s.tp_bytes_per_microbatch / unit, s.pp_hop_bytes / unit],
            [PART_COLOURS["tp_s"], PART_COLOURS["pp_p2p_s"]],
            "x2",
            "y2",
            [format_bytes(v, units) for v in (s.tp_bytes_per_microbatch, s.pp_hop_bytes)],
        ),
        bar(
            ["no ZeRO", f"ZeRO-{s.zero_stage}"],
            [d.memory_bytes / unit, i.memory_bytes / unit],
            [BAD if not d.fits else OK, OK if i.fits else BAD],
            "x3",
            "y3",
            [format_bytes(v, units) for v in (d.memory_bytes, i.memory_bytes)],
        ),
    ]
    top = max(cap, d.memory_bytes / unit, i.memory_bytes / unit)
    return {
        "data": data,
        "layout": {
            "title": {"text": "The sentence, clause by clause"},
            "font": FONT,
            "height": 420,
            "xaxis": {"domain": [0, 0.28], "title": {"text": "TP needs NVLink"}},
            "xaxis2": {
                "domain": [0.36, 0.64],
                "anchor": "y2",
                "title": {"text": f"PP tolerates {i.pp_link}"},
            },
            "xaxis3": {
                "domain": [0.72, 1],
                "anchor": "y3",
                "title": {"text": f"ZeRO makes it fit (dashed: {cap:.3g} {name} usable)"},
            },
            "yaxis": {
                "title": {"text": "exposed TP (s per step)"},
                "range": [0, 1.2 * a.breakdown.tp_s],
            },
            "yaxis2": {
                "title": {"text": f"bytes per micro-batch ({name})"},
                "anchor": "x2",
                "type": "log",
                "dtick": 1,
            },
            "yaxis3": {
                "title": {"text": f"memory per GPU ({name})"},
                "anchor": "x3",
                "range": [0, 1.2 * top],
            },
            "shapes": [
                {
                    "type": "line",
                    "xref": "x3 domain",
                    "yref": "y3",
                    "x0": 0,
                    "x1": 1,
                    "y0": cap,
                    "y1": cap,
                    "line": {"color": COLOURS["capacity"], "dash": "dash"},
                }
            ],
            "margin": {"t": 60, "b": 60},
        },
    }
