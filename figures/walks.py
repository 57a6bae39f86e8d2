"""Guided walks: 3–6 steps per concept page that set its controls and say one true thing each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class WalkStep:
    """One step of a walk: the sentence, and the control values it sets ({widget key: value};
    a `select` takes its label, as the URL does)."""

    say: str
    set: dict[str, str | int | float | bool]
