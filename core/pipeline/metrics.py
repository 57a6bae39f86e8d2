"""Bubble metrics of a simulated pipeline and the papers' closed forms (zero p2p latency)."""

from __future__ import annotations

from dataclasses import dataclass

from core.pipeline.schedules import check_inputs
from core.pipeline.simulator import simulate


@dataclass(frozen=True, kw_only=True)
class BubbleMetric:
    """One of the three bubble conventions found in the literature."""

    label: str
    formula: str
    used_by: str


# Three conventions (docs/notes/pipeline.md §2): name the one used next to every number.
BUBBLE_METRICS: dict[str, BubbleMetric] = {
    "share": BubbleMetric(
        label="A. bubble fraction (share of step time)",
        formula="Σ idle / (P · T)",
        used_by="GPipe paper; most tutorials",
    ),
    "ratio": BubbleMetric(
        label="B. bubble ratio (relative to ideal compute)",
        formula="(T − T_ideal) / T_ideal = Σ idle / Σ busy",
        used_by="Megatron paper; zero-bubble README; Ultra-Scale Playbook",
    ),
    "span": BubbleMetric(
        label="C. per-stage span bubble",
        formula="1 − busy / span of the rank with the longest span",
        used_by="zero-bubble authors (HF space)",
    ),
}


@dataclass(frozen=True, kw_only=True)
class ClosedForm:
    """Printed formula of a schedule's idle time per rank, the assumptions it needs, its source."""

    idle: str
    peak: str
    assumes: str
    source: str


CLOSED_FORMS: dict[str, ClosedForm] = {
    "gpipe": ClosedForm(
        idle="(P−1)(t_F + t_B)",
        peak="M on every rank",
        assumes="any M",
        source="GPipe (K−1)/(M+K−1); DualPipe README table",
    ),
    "1f1b": ClosedForm(
        idle="(P−1)(t_F + t_B)",
        peak="min(P − r, M) on rank r",
        assumes="any M",
        source="PipeDream-Flush; DualPipe README table",
    ),
    "interleaved_1f1b": ClosedForm(
        idle="(P−1)(t_F + t_B) / v",
        peak="min(2(P−1−r) + (v−1)P + 1, vM) chunks on rank r",
        assumes="any M (the schedule itself needs M a multiple of P)",
        source="Narayanan et al. 2021 (bubble (1/v)(P−1)/M)",
    ),
    "looped_bfs": ClosedForm(
        idle="(P−1)(t_F + t_B) / v",
        peak="vM chunks on every rank",
        assumes="M ≥ P",
        source="derived: a chunk's forwards never stall "
        "when M ≥ P, so only the P−1 chunk-op fill and drain remain",
    ),
    "zb_h1": ClosedForm(
        idle="(P−1)(t_F + t_I − t_W)",
        peak="min(P, M) on every rank",
        assumes="M ≥ P and t_W ≤ min(t_F, t_I)",
        source="Qi et al. ICLR 2024 (ZB-H1); DualPipe README (ZB1P)",
    ),
    "zb_v": ClosedForm(
        idle="(P−1) t_F / 2 (start-up stagger only; C = 0)",
        peak="2P chunks (P stage-equivalents) on every rank",
        assumes="t_F = t_I = t_W and M ≥ 2P",
        source="Qi et al. 2024 sec. 6 (zero bubble inside each span)",
    ),
    "dualpipe_v": ClosedForm(
        idle="(PP/2 − 1)(t_F&B + t_B − 3 t_W), chunk times, PP = 2P",
        peak="2P + 1 chunks on every rank",
        assumes="t_F = t_I ≥ t_W, max(t_F, t_B) ≤ overlap_s ≤ t_F + t_B",
        source="deepseek-ai/DualPipe README table",
    ),
}


def closed_form_idle_s(
    schedule: str,
    num_stages: int,
    num_microbatches: int,
    num_chunks: int = 1,
    forward_s: float = 1.0,
    backward_input_s: float = 1.0,
    backward_weight_s: float = 1.0,
    overlap_s: float | None = None,
) -> float | None:
    """The papers' idle time per rank (largest rank), or None where its assumptions fail."""
    p, m, v = num_stages, num_microbatches, num_chunks
    f, i, w = forward_s, backward_input_s, backward_weight_s
    b = i + w
    o = f + b if overlap_s is None else overlap_s
    if p == 1:
        return 0.0
    if schedule in ("gpipe", "1f1b"):
        return (p - 1) * (f + b)
    if schedule == "interleaved_1f1b":  # the simulator enforces M a multiple of P
        return (p - 1) * (f + b) / v
    if schedule == "looped_bfs" and m >= p:
        return (p - 1) * (f + b) / v
    if schedule == "zb_h1" and m >= p and w <= min(f, i):
        return (p - 1) * (f + i - w)
    if schedule == "zb_v" and f == i == w and m >= 2 * p:
        return (p - 1) * f / 2
    if schedule == "dualpipe_v" and f == i >= w and max(f, b) <= o <= f + b and m >= 2 * p:
        return (p - 1) * (o + b - 3 * w) / 2  # PP/2 − 1 = P − 1; chunk times are half
    return None


def closed_form_makespan_s(
    schedule: str,
    num_stages: int,
    num_microbatches: int,
    num_chunks: int = 1,
    forward_s: float = 1.0,
    backward_input_s: float = 1.0,
    backward_weight_s: float = 1.0,
) -> float | None:
    """Busy time M(t_F + t_B) plus the closed-form idle time (no overlap gain assumed)."""
    idle = closed_form_idle_s(
        schedule,
        num_stages,
        num_microbatches,
        num_chunks,
        forward_s,
        backward_input_s,
        backward_weight_s,
    )
    busy = num_microbatches * (forward_s + backward_input_s + backward_weight_s)
    return None if idle is None else busy + idle


def closed_form_bubble_share(
    schedule: str,
    num_stages: int,
    num_microbatches: int,
    num_chunks: int = 1,
    forward_s: float = 1.0,
    backward_input_s: float = 1.0,
    backward_weight_s: float = 1.0,
) -> float | None:
    """Metric A from the closed form, e.g. (P−1)/(M+P−1) for GPipe and 1F1B."""
    makespan = closed_form_makespan_s(
        schedule,
        num_stages,
        num_microbatches,
        num_chunks,
        forward_s,
        backward_input_s,
        backward_weight_s,
    )
    if makespan is None:
        return None
    busy = num_microbatches * (forward_s + backward_input_s + backward_weight_s)
    return 1.0 - busy / makespan


def closed_form_peak_activations(
    schedule: str, num_stages: int, num_microbatches: int, num_chunks: int = 1
) -> tuple[int, ...] | None:
    """Peak (chunk, micro-batch) activations per rank at uniform durations, or None."""
    p, m, v = num_stages, num_microbatches, num_chunks
    per_rank = {
        "gpipe": lambda r: m,
        "1f1b": lambda r: min(p - r, m),
        "interleaved_1f1b": lambda r: min(2 * (p - 1 - r) + (v - 1) * p + 1, v * m),
        "looped_bfs": lambda r: v * m,
        "zb_h1": lambda r: min(p, m),
        "zb_v": lambda r: 2 * p,
        "dualpipe_v": lambda r: 2 * p + 1,
    }.get(schedule)
    return None if per_rank is None else tuple(per_rank(r) for r in range(p))


@dataclass(frozen=True, kw_only=True)
class BubbleSweep:
    """Metric A against M for one schedule: simulated points and the closed-form curve."""

    schedule: str
    num_stages: int
    num_chunks: int
    microbatches: tuple[int, ...]  # M values that satisfy the schedule's rules
    simulated: tuple[float, ...]
    curve_microbatches: tuple[int, ...]  # every M from 1 to max(microbatches)
    curve: tuple[float | None, ...]  # None where the closed form's assumptions fail


def bubble_sweep(
    schedule: str,
    num_stages: int,
    microbatches: tuple[int, ...],
    num_chunks: int = 1,
    forward_s: float = 1.0,
    backward_input_s: float = 1.0,
    backward_weight_s: float = 1.0,
) -> BubbleSweep:
    """Simulate metric A at each valid M and evaluate the closed form for every M up to the max."""
    kept, sim = [], []
    for m in sorted(set(microbatches)):
        try:
            check_inputs(schedule, num_stages, m, num_chunks)
        except ValueError:
            continue  # e.g. interleaved at M not a multiple of P: no point, not an error
        res = simulate(
            schedule, num_stages, m, num_chunks, forward_s, backward_input_s, backward_weight_s
        )
        kept.append(m)
        sim.append(res.bubble_fraction)
    top = max(microbatches, default=0)
    curve_m = tuple(range(1, top + 1))
    curve = tuple(
        closed_form_bubble_share(
            schedule, num_stages, m, num_chunks, forward_s, backward_input_s, backward_weight_s
        )
        for m in curve_m
    )
    return BubbleSweep(
        schedule=schedule,
        num_stages=num_stages,
        num_chunks=num_chunks,
        microbatches=tuple(kept),
        simulated=tuple(sim),
        curve_microbatches=curve_m,
        curve=curve,
    )
