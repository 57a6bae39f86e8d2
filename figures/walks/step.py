"""A walk's step: the sentence and the control values it sets."""

from __future__ import annotations

from dataclasses import dataclass

Value = str | int | float | bool


@dataclass(frozen=True, kw_only=True)
class WalkStep:
    """One step of a walk: the sentence, and the control values it sets ({widget key: value};
    a `select` takes its label, as the URL does)."""

    say: str
    set: dict[str, Value]


def steps(base: dict[str, Value], *pairs: tuple[str, dict[str, Value]]) -> tuple[WalkStep, ...]:
    """Every step sets all the walk's keys (base, then its own), so Back restores a step exactly."""
    return tuple(WalkStep(say=say, set=base | own) for say, own in pairs)
