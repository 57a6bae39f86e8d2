"""Unit formatting: decimal vs binary prefixes, time and FLOP scales."""

import pytest

from core import units
from tests.charts import charts


def test_gib_vs_gb_differ_by_the_prefix_not_the_bytes():
    assert units.format_bytes(2**30, "binary") == "1 GiB"
    assert units.format_bytes(2**30, "decimal") == "1.07 GB"
    assert units.format_bytes(80e9, "binary") == "74.5 GiB"  # 80e9 / 2**30 = 74.506
    assert units.format_bytes(1.12e12, "decimal") == "1.12 TB"


def test_bytes_in_named_units():
    assert units.bytes_in(3 * 2**20, "MiB") == 3
    assert units.bytes_in(5e9, "GB") == 5
    with pytest.raises(ValueError, match="unknown byte unit"):
        units.bytes_in(1, "gigs")


def test_bandwidth_and_time():
    assert units.format_bandwidth(450e9) == "450 GB/s"
    assert units.format_seconds(6.2635e-3) == "6.26 ms"
    assert units.format_seconds(12.5e-6) == "12.5 µs"
    assert units.format_seconds(7200) == "2 h"
    assert units.format_seconds(0) == "0 ns"


def test_flops_and_counts():
    assert units.format_flops(989.4e12) == "989 TFLOP"
    assert units.format_count(6_738_415_616) == "6.74B"
    assert units.format_count(512) == "512"


def test_unknown_byte_system_names_the_choices():
    with pytest.raises(ValueError, match="decimal.*binary"):
        units.byte_system("metric")
    assert units.gib_or_gb("binary") == ("GiB", 2**30)


def test_pages_speak_decimal_gb_at_the_defaults():
    """Issue 13, units: at the defaults a learner sees the course's numbers in the course's unit
    (ring 2·S·(N−1)/N = 1.75 GB for 1 GB on 8 GPUs; 70B × 16 B = 1.12 TB) and no binary unit
    beside them. (The DP page's "25 MiB" is PyTorch's bucket constant, a name, not a size shown in
    another unit.)"""
    import re

    from tests.test_pages import run_app

    shown = {}
    for page in ("collectives", "memory", "scenarios", "planner", "self_check", "reliability"):
        at = run_app(f"app_pages/{page}.py", {})
        texts = [m.value for m in (*at.markdown, *at.caption, *at.success, *at.info)]
        texts += [f"{m.value} {m.proto.delta}" for m in at.metric]
        texts += [c.spec for c in charts(at)]
        shown[page] = "\n".join(texts)
        assert not re.findall(r"\d\s?(?:KiB|MiB|GiB|TiB)\b", shown[page]), page
    assert "1.75 GB" in shown["collectives"]
    assert "1.12 TB" in shown["scenarios"] and "70 GB per GPU" in shown["scenarios"]
