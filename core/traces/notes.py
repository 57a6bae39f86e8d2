"""What a reader of an analysis must be told, per file: which window was analysed, what was left
out, which event categories were found, and files that do not belong together (different step
counts, GPU beside CPU-only, a different run's clock or world size, step times far apart).

File names appear in backticks: shown as Markdown they are code (no links, no emphasis), shown
as text they are quoted. core.traces.importer.safe_name keeps backticks out of them.
"""

from __future__ import annotations

from core.traces.importer import CATEGORIES
from core.units import format_seconds

STEP_SPREAD = 1.5  # ranks of one synchronous job take the same time per step: flag a wider spread


def quoted(name: str) -> str:
    return f"`{name}`"


def _per_file(t, r, max_steps: int) -> list[str]:
    out, n = [], quoted(r.name)
    if r.steps_in_file > max_steps:
        out.append(
            f"{n}: {r.steps_in_file:,} profiled steps; the first {max_steps:,} are analysed "
            "(a window: trim the trace to a few steps to analyse others)."
        )
    if r.outside and r.steps:
        out.append(
            f"{n}: {r.outside:,} events outside the analysed steps (before the first "
            "ProfilerStep or after the last) are left out."
        )
    elif r.outside:
        out.append(
            f"{n}: {r.outside:,} stray events far from all the others (more than "
            "10× the rest's span away) are left out as outliers."
        )
    if not r.steps:
        out.append(f"{n}: no ProfilerStep#N marks, so its whole span counts as one step.")
    unknown = [c for c, _ in r.categories if c.lower() not in CATEGORIES]
    if unknown:
        out.append(
            f"{n}: event categories not recognised (counted as neither compute nor idle "
            f"work): {', '.join(quoted(c) for c in unknown[:5])}."
        )
    if not any(CATEGORIES.get(c.lower()) for c, _ in r.categories):
        out.append(
            f"{n}: no compute events (category cpu_op, Operator or kernel): compute reads 0."
        )
    return out


def notes(traces, ranks, aligned: bool, max_steps: int) -> tuple[str, ...]:
    """Plain sentences, one per finding, each naming its file."""
    out = [s for t, r in zip(traces, ranks) for s in _per_file(t, r, max_steps)]
    for t in traces:
        if t.world_size is not None and t.world_size != len(traces):
            out.append(
                f"{quoted(t.name)}: distributedInfo says world size {t.world_size:,}, but "
                f"{len(traces)} file{'s were' if len(traces) > 1 else ' was'} given (one per "
                "rank)."
            )
    if len(ranks) < 2:
        return tuple(out)
    steps = [r.steps for r in ranks]
    if len(set(steps)) > 1:
        most = max(set(steps), key=steps.count)
        for r in ranks:
            if r.steps != most:
                out.append(
                    f"{quoted(r.name)}: {r.steps} steps analysed where the other files have "
                    f"{most}: a different run or profiler window? Each rank's step time uses "
                    "its own step count."
                )
    sources = [r.source for r in ranks]
    if len(set(sources)) > 1:
        for r in ranks:
            if r.source == "CPU ops":
                out.append(
                    f"{quoted(r.name)}: CPU ops only, while other files have GPU kernels: it "
                    "does not look like a rank of the same GPU job."
                )
    if not aligned:
        out.append(
            "The files are on different clocks (or from different runs): each rank is drawn "
            "from its own first event."
        )
    per = [r.step_s for r in ranks]
    if min(per) > 0 and max(per) / min(per) > STEP_SPREAD:
        fast = min(ranks, key=lambda r: r.step_s)
        for r in ranks:
            if r.step_s / fast.step_s > STEP_SPREAD:
                out.append(
                    f"{quoted(r.name)}: {format_seconds(r.step_s)} per step against "
                    f"{format_seconds(fast.step_s)} on rank {fast.rank}: ranks of one "
                    "synchronous job take the same time per step; check the files are from "
                    "one run."
                )
    return tuple(out)
