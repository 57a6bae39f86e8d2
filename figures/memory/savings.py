"""What each ZeRO stage saves over the one before, written between the memory page's bars."""

from __future__ import annotations

from core.memory import MemoryResult, shard_degrees
from core.parallel import ZERO_STAGES
from core.training import get_recipe
from core.units import format_bytes, gib_or_gb
from figures.style import COLOURS

NOTE_HEIGHT = 0.2  # of the largest bar: a five-line savings note at 11 px on the 520 px chart


def _clear_of_line(y: float, line: float, top: float) -> dict:
    """y (bytes) of a note centred at y, moved off the capacity line if the line would cross it:
    just under the line when there is room, else just over it.
    """
    half = NOTE_HEIGHT * top / 2
    if abs(y - line) >= half:
        return {"yanchor": "middle", "_bytes": y}
    under = line - 2 * half > 0
    return {"yanchor": "top" if under else "bottom", "yshift": -4 if under else 4, "_bytes": line}


def savings_notes(
    results: list[MemoryResult], units: str, capacity_bytes: float, reserve_bytes: float = 0.0
) -> list[dict]:
    """Between each pair of neighbouring bars: what the next ZeRO stage saves, its formula with
    this run's numbers, and why when it saves nothing; placed clear of the capacity line.
    """
    rec, notes = get_recipe(results[0].training.recipe), []
    top = max([capacity_bytes] + [r.total_bytes + reserve_bytes for r in results])
    per = {
        1: ("optimizer", rec.optimizer_bytes),
        2: ("gradients", rec.grad_bytes),
        3: ("weights", rec.param_bytes),
    }
    for i in range(1, len(results)):
        a, b = results[i - 1], results[i]
        z, n = b.layout.zero_stage, shard_degrees(b.layout)[0]
        what, k = per[z]
        saved = a.total_bytes - b.total_bytes
        form = f"{k}Ψ(1−1/N)" + (" − gathered" if b.gathered_bytes else "")
        if n == 1:
            text = f"{ZERO_STAGES[z].label}<br>saves 0:<br>N = 1, one<br>copy to shard"
        else:  # short lines: the note sits in the gap between two bars
            text = (
                f"{ZERO_STAGES[z].label}<br>{'saves' if saved >= 0 else 'adds'} "
                f"{format_bytes(abs(saved), units)}<br>{form.replace(' − ', '<br>− ')}"
                f"<br>({what})"
            )
        notes.append(
            {
                "x": i - 0.5,  # halfway between the two categories
                **_clear_of_line(min(a.total_bytes, b.total_bytes) / 2, capacity_bytes, top),
                "showarrow": False,
                "text": text,
                "font": {"size": 11, "color": COLOURS["ink"]},
                "bgcolor": COLOURS["label_background"],
            }
        )
    unit = gib_or_gb(units)[1]
    for note in notes:  # bytes to the axis unit
        note["y"] = note.pop("_bytes") / unit
    return notes
