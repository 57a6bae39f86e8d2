"""The data-parallel page's words: captions, metric rows, warnings, takeaway, "How this is
computed" and self-checks, from the core's results (no streamlit).
"""

from __future__ import annotations

from core import data_parallel as dp
from core.collectives import scan_bytes_per_rank
from core.units import format_bandwidth, format_bytes, format_count, format_seconds, gib_or_gb
from figures.data_parallel import SCALING_EFFICIENCY, dtype_name, how_computed_lines, percent

PROOF_CAPTION = (
    "A 2-layer tanh MLP, gradient written out by hand. N × samples rows split over N ranks; each "
    "rank's mean gradient goes through the numpy ring all-reduce simulator; the sum is divided by "
    "N, as PyTorch DDP does."
)

TAKEAWAY = (
    "Averaging per-rank mean gradients is the full-batch gradient exactly (to float rounding) when "
    "shards are equal; otherwise weight by sample count. Scaling stops when the all-reduce — about "
    "2× the gradient per rank, whatever N — outgrows the backward it can hide behind: once the "
    "ring leaves the node the NIC, not NVLink, sets the pace. Bucketing + overlap hides the "
    "all-reduce while it is shorter than backward (NCCL's tree keeps each bucket's latency "
    "logarithmic in nodes); on a thin network, where it lasts many backward passes, it cannot. "
    "More tokens per GPU is the fix that always works."
)

# The presenter slide's headline: the same lesson in two lines at 26 px on a 1280 px screen.
TAKEAWAY_SHORT = (
    "Averaged shard gradients are the full-batch gradient (weight unequal shards by their size); "
    "scaling stops when the all-reduce outgrows the backward it hides behind."
)


def takeaway(presenting: bool) -> str:
    """The page's lesson: whole on a laptop, two lines on the presenter slide."""
    return TAKEAWAY_SHORT if presenting else TAKEAWAY


def settings_summary(
    gpu: str, gpn: int, nics: int, kind: str, scale: str, ovl: bool, bkt: int
) -> str:
    """The scaling section's folded settings in one line, above their expander."""
    buckets = (
        f"{bkt} MiB buckets overlapped with backward" if ovl else "one all-reduce after backward"
    )
    return (
        f"{gpn} × {gpu} per node · {nics} NIC{'s' * (nics > 1)} per node · {kind} all-reduce · "
        f"{scale} scaling · {buckets}"
    )


def proof_metrics(p: dp.DpProof) -> list[dict]:
    """The proof's row: ring ÷ N against the full batch, the weighted mean, steps and shards."""
    sizes = p.shard_sizes
    shards = "/".join(map(str, sizes)) if len(sizes) <= 6 else f"{min(sizes)} … {max(sizes)}"
    return [
        dict(label="max |ring ÷ N − full batch|", value=f"{p.ring_max_abs_diff:.1e}", border=True),
        dict(
            label="Weighted by shard size",
            value=f"{p.weighted_max_abs_diff:.1e}",
            help="Σ n_r·g_r / Σ n_r",
        ),
        dict(
            label="Ring steps", value=p.ring_steps, help="2(N−1): reduce-scatter, then all-gather."
        ),
        dict(label="Shard sizes", value=shards),
    ]


def unequal_warning(p: dp.DpProof) -> str:
    """Why the plain average of rank means misses with unequal shards, and the weighted fix."""
    return (
        "Unequal shards: the plain average of rank means is off by up to "
        f"{p.ring_max_abs_diff:.2g} (a rank with few samples votes like one with many); weighted "
        f"by sample count: {p.weighted_max_abs_diff:.1e}."
    )


def scaling_metrics(s: dp.DpStep, at_n: int, bw_units: str) -> list[dict]:
    """Step time, exposed all-reduce, efficiency and the bottleneck link at N = at_n."""
    exposed = (
        f"{format_seconds(s.comm_s)} in all, {format_seconds(s.hidden_comm_s)} hidden behind "
        "backward"
    )
    return [
        dict(label=f"Step at N={at_n}", value=format_seconds(s.step_s), border=True),
        dict(label="Exposed all-reduce", value=format_seconds(s.exposed_comm_s), help=exposed),
        dict(label="Scaling efficiency", value=percent(s.efficiency), help=SCALING_EFFICIENCY),
        dict(
            label="Bottleneck",
            value=format_bandwidth(s.bottleneck_bytes_per_s, bw_units),
            help=s.bottleneck_link,
        ),
    ]


def overlap_verdict(s: dp.DpStep, other: dp.DpStep) -> str:
    """Does bucketing + overlap help here? `s` and `other` differ only in bucketing."""
    bucketed, single = (s, other) if len(s.bucket_bytes) > 1 else (other, s)
    gain = single.step_s / bucketed.step_s
    if gain >= 1:
        return (
            f"Bucketing + overlap helps here: step ×{1 / gain:.3g} ({single.step_s * 1e3:.4g} → "
            f"{bucketed.step_s * 1e3:.4g} ms), the all-reduce hides behind backward."
        )
    return (
        f"**Bucketing + overlap does not help here** (step {single.step_s * 1e3:.4g} → "
        f"{bucketed.step_s * 1e3:.4g} ms): the bucketed all-reduce lasts "
        f"{bucketed.comm_s * 1e3:.4g} ms against a {bucketed.backward_s * 1e3:.4g} ms backward, so "
        "overlap hides at most one backward, and each bucket pays the latency again."
    )


def scaling_caption(
    job: dp.DpJob, s: dp.DpStep, at_n: int, units: str, other: dp.DpStep | None = None
) -> str:
    """The gradient bytes all-reduced per step, what bottlenecks them at N = at_n, what ran, and
    whether bucketing + overlap helps (`other`: the same run with bucketing toggled)."""
    return (
        f"{format_count(job.num_params)} parameters × {job.grad_bytes_per_param:g} B "
        f"({dtype_name(job.grad_bytes_per_param)} gradients) = "
        f"{format_bytes(job.grad_bytes, units)} all-reduced per step; at N={at_n}: "
        f"{s.bottleneck_link}; {len(s.bucket_bytes):,} all-reduce(s), ran: {s.algorithms}."
        + ("" if other is None else " " + overlap_verdict(s, other))
    )


def how_computed(proof, job, step, stragglers, units: str, bw_units: str) -> list[tuple[str, str]]:
    """Every formula of the page with the value the core measured, as one markdown block."""
    lines = how_computed_lines(proof, job, step, stragglers, units, bw_units)
    return [("markdown", "\n\n".join(lines))]


def self_checks(units: str, reference: dp.StragglerCurve) -> list[dict]:
    """Bytes a ring rank sends for a 1 GiB/GB gradient on N = 8 (by the ring simulator), and the
    expected synchronous step of 64 ranks with N(100 ms, 5 ms) steps (from `reference`)."""
    name, unit = gib_or_gb(units)
    sent = scan_bytes_per_rank([8], unit, ("ring",)).max_bytes_sent["ring"][0] / unit
    i = reference.rank_counts.index(64)
    return [
        dict(
            question=f"Ring all-reduce of a 1 {name} gradient on N = 8 ranks: bytes each rank "
            "sends",
            answer=sent,
            key="q1",
            unit=name,
            explanation=f"2(N−1)/N × 1 = {sent:g}: reduce-scatter sends N−1 chunks "
            "of 1/N, all-gather N−1 more (measured by the ring simulator).",
        ),
        dict(
            question="Per-rank step time N(μ = 100 ms, σ = 5 ms): expected synchronous step at "
            "p = 64",
            answer=reference.expected_step_s[i] * 1e3,
            key="q2",
            rel_tol=0.005,
            unit="ms",
            explanation=f"μ + σ·E[max of 64 N(0,1)] = 100 + 5 × {reference.expected_max_z[i]:.4f}.",
        ),
    ]
