"""The self-check page's scoreboard: per learning goal, answers right, wrong and still open."""

from __future__ import annotations

from core.quiz import GOALS, Question
from figures.style import COLOURS, bottom_legend

VERDICT_COLOURS = {"right": COLOURS["ok"], "wrong": COLOURS["bad"], "open": COLOURS["unanswered"]}


def scoreboard_figure(
    questions: tuple[Question, ...],
    verdicts: dict[str, bool | None],
    session: tuple[int, int] = (0, 0),
    seed: int | None = None,
) -> dict:
    """Horizontal stacked bars, one per goal: this set's right / wrong / unanswered question
    counts.
    """
    counts = {k: [0] * len(GOALS) for k in VERDICT_COLOURS}
    for q in questions:
        v = verdicts.get(q.key)
        counts["open" if v is None else "right" if v else "wrong"][GOALS.index(q.goal)] += 1
    right, answered = sum(counts["right"]), len(questions) - sum(counts["open"])
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": k,
            "y": list(GOALS),
            "x": counts[k],
            "marker": {"color": c},
            "hovertemplate": f"%{{y}}: %{{x}} {k}<extra></extra>",
        }
        for k, c in VERDICT_COLOURS.items()
    ]
    first, tries = session
    sub = (
        f"session: {first} of {tries} first tries right ({first / tries:.0%})"
        if tries
        else "session: no answers yet — each question's first answer counts"
    )
    return {
        "data": data,
        "layout": {
            "title": {
                "text": f"{'This set' if seed is None else f'Set {seed}'}: {right} right of "
                f"{len(questions)} ({answered} answered)",
                "subtitle": {"text": sub},
            },
            "barmode": "stack",
            "font": {"size": 14},
            "height": 300,
            "xaxis": {"title": {"text": "questions"}, "dtick": 1, "range": [0, 2.05]},
            "yaxis": {"autorange": "reversed"},
            "legend": bottom_legend(-0.3, traceorder="normal"),
            "margin": {"l": 150, "t": 70, "b": 40},
        },
    }
