"""The pipeline page's words: metric rows, takeaway, "How this is computed" and
self-check text, built from simulator results (no streamlit).
"""

from __future__ import annotations

from core import pipeline as pl

TIMELINE_CAPTION = (
    "Grey = idle. F blue, B orange, I teal, W green; later chunks lighter; an overlapped "
    "F&B pair shares one slot. Hover a box for details. Metric A (boxed) is plotted below."
)


def double_m(m: int) -> int:
    """The next power of two above M (the bubble chart samples M at powers of two)."""
    return 1 << int(m).bit_length()


def half_m(m: int) -> int:
    """The largest power of two below M (1 stays 1)."""
    return max(1, 1 << (int(m) - 1).bit_length() - 1) if m > 1 else 1


def v_help(uses_v: list[str]) -> str:
    """The v slider's help: what v does, and why it is greyed out when no schedule shown uses it."""
    what = "Interleaved and Looped BFS split each rank's layers into v model chunks"
    if uses_v:
        return f"{what}; the bubble chart's interleaved curves use it too."
    return (
        f"{what}. Greyed out: the schedule shown ignores v (ZB-V and DualPipeV fix v = 2, the "
        "others use one chunk); the bubble chart's interleaved curves use the value shown."
    )


# Two lines on the 1280×720 presenter slide (issue 15); what each schedule buys is SCHEDULES_NOTE.
TAKEAWAY = (
    "The bubble is the pipe filling and draining: ~(P−1) stage-times per rank whatever M is, so "
    "more micro-batches shrink its share and smarter schedules fill it."
)
SCHEDULES_NOTE = (
    "1F1B keeps GPipe's bubble but holds P−r activations, not M; interleaving divides it by v for "
    "v× the sends; zero-bubble schedules fill it with deferred weight-gradient work, the V shapes "
    "at up to 2× activations."
)
CURSOR_LABEL = "Fill and drain: the moment shown (last = the whole step)"
CURSOR_HELP = (
    "Steps through every op start and end; the Gantt covers what has not happened yet and the "
    "drawing below shows that moment. Keys: J back, L next, K play / pause, End the whole step. "
    "Kept in the URL (t = the moment's number), so a link opens at the same moment."
)


def cursor_caption(t_s: float, runs: list[tuple[int, int, float, float | None]]) -> str:
    """One line under the Gantt: the time and, per schedule (busy ranks, P, makespan, first moment
    every rank is busy), how many ranks work: filling (before that moment), full, or k idle."""
    end = max(r[2] for r in runs)
    if t_s >= end:
        return f"The whole step ({end:.4g} s): step back to watch the pipe fill and drain."
    parts = []
    for busy, p, makespan, full in runs:
        if t_s >= makespan:
            parts.append(f"done at {makespan:.4g} s")
            continue
        filling = full is None or t_s < full
        phase = "the pipe is full" if busy == p else "filling" if filling else f"{p - busy} idle"
        parts.append(f"{busy} of {p} ranks busy, {phase}")
    return f"t = {t_s:.4g} s · " + " · ".join(parts)


def times_summary(f: float, i: float, w: float, lat: float, split: bool, vs: str | None) -> str:
    """The folded controls' summary (their expander is "Op times and compare · <this>")."""
    back = f"t_I {i:g} s · t_W {w:g} s" if split else f"t_B {i + w:g} s"
    other = f"compare with {vs}" if vs else "compare: off"
    return f"t_F {f:g} s · {back} · p2p {lat:g} s · {other}"


_SIMULATION = (
    "Each rank runs its schedule's op list in order (no idle slots in the lists); an event "
    "simulator starts each op at max(rank free, dependencies done). **F(s, mb)** needs "
    "F(s−1, mb); **B or I(s, mb)** needs its own F(s, mb) and B/I(s+1, mb); **W(s, mb)** needs "
    "I(s, mb). A send between ranks adds the p2p latency. Idle per rank = makespan T − busy time; "
    "an activation is held from the start of its F to the end of its B (or W when split)."
)
_BUBBLE_LATEX = (
    r"\begin{gathered} A = \frac{\sum_r \text{idle}_r}{P\,T} \approx \frac{\text{idle}}"
    r"{M\,(t_F + t_B) + \text{idle}} \\[6pt] \text{GPipe, 1F1B: idle} = (P-1)(t_F+t_B) "
    r"\;\Rightarrow\; A = \frac{P-1}{M+P-1} \end{gathered}"
)


def timeline_metrics(n: dict, base: dict | None) -> list[dict]:
    """The metric row over a Gantt chart: bubble metrics A, B, C and peak activations; with a
    `base` (the first schedule's numbers) A shows its difference in points."""
    diff = base and round((n["share"] - base["share"]) * 100, 1) + 0.0  # + 0.0: no "-0.0"
    row = []
    for k in ("share", "ratio", "span"):
        meta, vs = pl.BUBBLE_METRICS[k], base and k == "share"
        row.append(
            dict(
                label=meta.label.split(" (")[0],
                value=f"{n[k]:.1%}",
                delta_color="inverse",
                delta=f"{diff:+.1f} pts vs first" if vs else None,
                delta_arrow="auto" if diff else "off",
                border=k == "share",
                help=f"{meta.label}: {meta.formula} ({meta.used_by}).",
            )
        )
    peak = (
        f"Largest rank: {n['peak']} (chunk, micro-batch) activations held at once; "
        "mb = one micro-batch's activations for a full stage (a chunk holds 1/v)."
    )
    return row + [dict(label="Peak activations", value=f"{n['peak_stages']:g} mb", help=peak)]


def how_computed(schedule: str, n: dict | None, p2p_s: float) -> list[tuple[str, str]]:
    """The event simulation, the bubble formula, and the closed form beside the simulated value."""
    cf = pl.CLOSED_FORMS[schedule]
    blocks = [
        ("markdown", _SIMULATION),
        ("latex", _BUBBLE_LATEX),
        (
            "markdown",
            f"**{pl.SCHEDULES[schedule].short_label}** closed form: idle per rank = {cf.idle}; "
            f"assumes {cf.assumes} and zero p2p latency ({cf.source}).",
        ),
    ]
    if n and n["cf_share"] is None:
        text = (
            "The closed form's assumptions do not hold at these settings: only the simulation "
            f"applies (simulated A = {n['share']:.2%})."
        )
        blocks.append(("info", text))
    elif n:
        gap = "The gap is the p2p latency, which the formula ignores." if p2p_s else ""
        text = (
            f"| | idle per rank | A |\n|---|---|---|\n| closed form | {n['cf_idle']:.4g} s "
            f"| {n['cf_share']:.3%} |\n| simulated (largest rank) | {n['idle']:.4g} s "
            f"| {n['share']:.3%} |\n\n{gap}"
        )
        blocks.append(("markdown", text))
    return blocks


def self_checks(results: dict[int, pl.PipelineResult]) -> list[dict]:
    """1F1B on P = 8: the bubble fraction at each M, the simulator's result as the answer."""
    return [
        dict(
            question=f"1F1B with P = 8 and M = {mm}: bubble fraction A",
            answer=100 * r.bubble_fraction,
            key=f"q{mm}",
            rel_tol=0.01,
            unit="%",
            explanation=f"(P−1)/(M+P−1) = {8 - 1}/{mm + 8 - 1}.",
        )
        for mm, r in results.items()
    ]
