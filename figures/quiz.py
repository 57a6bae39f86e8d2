"""The self-check page's scoreboard: per learning goal, which questions are right, wrong and still
open. Before any answer it is the map of the set (each goal's question numbers in outlined boxes),
not an empty grey block.
"""

from __future__ import annotations

from core.quiz import GOALS, Question
from figures.style import COLOURS, legend_under_axis_title

VERDICT_COLOURS = {"right": COLOURS["ok"], "wrong": COLOURS["bad"], "open": COLOURS["paper"]}
VERDICT_LABELS = {"right": "right", "wrong": "wrong", "open": "to answer"}
HEIGHT, TOP, BOTTOM = 330, 70, 90  # px: the legend takes a row under the axis title


def scoreboard_figure(
    questions: tuple[Question, ...],
    verdicts: dict[str, bool | None],
    session: tuple[int, int] = (0, 0),
    seed: int | None = None,
) -> dict:
    """Horizontal stacked bars, one per goal: this set's right / wrong / open question counts, each
    segment labelled with its question numbers (Q1…).
    """
    counts = {k: [0] * len(GOALS) for k in VERDICT_COLOURS}
    numbers: dict[str, list[list[str]]] = {k: [[] for _ in GOALS] for k in VERDICT_COLOURS}
    for i, q in enumerate(questions, 1):
        v = verdicts.get(q.key)
        kind = "open" if v is None else "right" if v else "wrong"
        counts[kind][GOALS.index(q.goal)] += 1
        numbers[kind][GOALS.index(q.goal)].append(f"Q{i}")
    right, answered = sum(counts["right"]), len(questions) - sum(counts["open"])
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": VERDICT_LABELS[k],
            "y": list(GOALS),
            "x": counts[k],
            "text": [" · ".join(n) for n in numbers[k]],
            "textposition": "inside",
            "insidetextanchor": "middle",
            "textfont": {"color": COLOURS["ink"] if k == "open" else COLOURS["light_text"]},
            "marker": {"color": c, "line": {"color": COLOURS["guide"], "width": 1}},
            "hovertemplate": f"%{{y}}: %{{x}} {VERDICT_LABELS[k]}<extra></extra>",
        }
        for k, c in VERDICT_COLOURS.items()
    ]
    first, tries = session
    sub = (
        f"session: {first} of {tries} first tries right ({first / tries:.0%})"
        if tries
        else "no answers yet — each question's first answer counts for the session"
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
            "height": HEIGHT,
            "xaxis": {"title": {"text": "questions"}, "dtick": 1, "range": [0, 2.05]},
            "yaxis": {"autorange": "reversed", "ticklabelstandoff": 6},
            "legend": legend_under_axis_title(HEIGHT, TOP, BOTTOM),  # not beside "questions"
            "margin": {"l": 150, "t": TOP, "b": BOTTOM},
        },
    }
