import os

import pytest

from tests.split_probe.probe import hold

# The control run (SPLIT_PROBE_QUIET=0) leaves the mark off, to show the overlap it prevents.
marks = [pytest.mark.quiet] if os.environ.get("SPLIT_PROBE_QUIET") == "1" else []


@pytest.mark.parametrize("_", [pytest.param(0, marks=marks)])
def test_measures(_):
    hold("quiet", 1.0)
