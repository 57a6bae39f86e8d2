"""Input checks shared by the whole core: each raises ValueError naming the value, rule and fix."""

from __future__ import annotations

import math
from numbers import Integral, Real


def whole_number(name: str, value, *, fix: str = "") -> int:
    """The value as an int ≥ 1 (integral floats such as 70e9 and numpy integers accepted), else a
    ValueError; `fix` completes the message, e.g. "use e.g. 8".
    """
    if type(value) is int and value >= 1:  # the common case, without the ABC checks (hot in search)
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(
            f"{name}={value!r} must be a whole number ≥ 1" + (f"; {fix}" if fix else "")
        )
    return int(value)


def check_choice(name: str, value, options, *, rule: str = ""):
    """The value if it is one of the options, else a ValueError listing them (after `rule`, the
    reason the options are what they are, when given)."""
    if value not in options:
        why = f"{rule}; " if rule else ""
        raise ValueError(
            f"{name}={value!r} is unknown: {why}use one of {', '.join(map(str, options))}"
        )
    return value


def check_divides(what: str, k: int, n: int, noun: str, rule: str) -> None:
    """ValueError with the rule and the valid degrees when k does not divide n."""
    if n % k:
        divisors = ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)
        raise ValueError(
            f"{what}={k} does not divide {n} {noun}: {rule}; use {what} in {{{divisors}}}"
        )


def positive(
    name: str, value, *, fix: str, allow_zero: bool = False, hi: float = math.inf
) -> float:
    """The value as a float if it is finite and > 0 (≥ 0 with allow_zero, ≤ hi), else a ValueError.

    `fix` completes the message, e.g. "use e.g. 8" or "lengthen the interval".
    """
    ok = isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero) or value > hi:
        rule = ("≥ 0" if allow_zero else "> 0") + (f" and ≤ {hi:g}" if hi < math.inf else "")
        raise ValueError(f"{name}={value!r} must be a finite number {rule}; {fix}")
    return float(value)
