"""Unit conversion and formatting: the one place SI base units become display strings."""

from __future__ import annotations

from enum import Enum


class ByteSystem(str, Enum):
    """Decimal (GB = 1e9 B) or binary (GiB = 2**30 B) prefixes."""

    DECIMAL = "decimal"
    BINARY = "binary"


_DECIMAL = [("B", 1.0), ("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("PB", 1e15)]
_BINARY = [
    ("B", 1.0),
    ("KiB", 2.0**10),
    ("MiB", 2.0**20),
    ("GiB", 2.0**30),
    ("TiB", 2.0**40),
    ("PiB", 2.0**50),
]
_TIME = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)]
_FLOP = [
    ("FLOP", 1.0),
    ("kFLOP", 1e3),
    ("MFLOP", 1e6),
    ("GFLOP", 1e9),
    ("TFLOP", 1e12),
    ("PFLOP", 1e15),
    ("EFLOP", 1e18),
]
_BYTE_UNITS = {s: dict(_DECIMAL if s is ByteSystem.DECIMAL else _BINARY) for s in ByteSystem}


def byte_system(value: str | ByteSystem) -> ByteSystem:
    """Parse 'decimal'/'binary' (or an enum) into a ByteSystem, with a clear error."""
    try:
        return ByteSystem(value)
    except ValueError:
        raise ValueError(
            f"unknown byte system {value!r}: use 'decimal' (GB = 1e9 B) or 'binary' (GiB = 2^30 B)"
        ) from None


def _pick(value: float, table: list[tuple[str, float]]) -> tuple[str, float]:
    """Largest unit whose size does not exceed |value| (the smallest for zero)."""
    best = table[0]
    for name, size in table:
        if abs(value) >= size:
            best = (name, size)
    return best


def _fmt(value: float, digits: int) -> str:
    return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:,.0f}"


def gib_or_gb(system: str | ByteSystem) -> tuple[str, float]:
    """The gigabyte-scale unit name and size for a byte system (used for axes)."""
    s = byte_system(system)
    return ("GB", 1e9) if s is ByteSystem.DECIMAL else ("GiB", 2.0**30)


def bytes_in(num_bytes: float, unit: str) -> float:
    """Convert bytes to a named unit such as 'GiB' or 'MB'."""
    for table in (_DECIMAL, _BINARY):
        for name, size in table:
            if name == unit:
                return num_bytes / size
    raise ValueError(
        f"unknown byte unit {unit!r}: use one of "
        f"{[n for n, _ in _DECIMAL] + [n for n, _ in _BINARY[1:]]}"
    )


def format_bytes(
    num_bytes: float, system: str | ByteSystem = ByteSystem.BINARY, digits: int = 3
) -> str:
    """'1.5 GiB' or '1.61 GB' depending on the byte system."""
    table = _DECIMAL if byte_system(system) is ByteSystem.DECIMAL else _BINARY
    name, size = _pick(num_bytes, table)
    return f"{_fmt(num_bytes / size, digits)} {name}"


def format_bandwidth(
    bytes_per_s: float, system: str | ByteSystem = ByteSystem.DECIMAL, digits: int = 3
) -> str:
    """'450 GB/s' (decimal, nccl-tests convention) or '419 GiB/s' (binary)."""
    return format_bytes(bytes_per_s, system, digits) + "/s"


def format_seconds(seconds: float, digits: int = 3) -> str:
    """'6.26 ms', '12.5 µs', '3.2 s', or minutes/hours/days for long spans."""
    if abs(seconds) >= 86400:
        return f"{_fmt(seconds / 86400, digits)} d"
    if abs(seconds) >= 3600:
        return f"{_fmt(seconds / 3600, digits)} h"
    if abs(seconds) >= 60:
        return f"{_fmt(seconds / 60, digits)} min"
    name, size = _pick(seconds, _TIME)
    return f"{_fmt(seconds / size, digits)} {name}"


def format_flops(flop: float, digits: int = 3) -> str:
    """'989 TFLOP' — append '/s' yourself for a rate."""
    name, size = _pick(flop, _FLOP)
    return f"{_fmt(flop / size, digits)} {name}"


def format_count(value: float, digits: int = 3) -> str:
    """Compact count: 6.74B, 175B, 1.3M, 512."""
    for name, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            return f"{_fmt(value / size, digits)}{name}"
    return _fmt(value, digits)
