import pytest

from tests.split_probe.probe import hold


@pytest.mark.parametrize("n", range(8))
def test_busy(n):
    hold(f"busy{n}", 0.3)
