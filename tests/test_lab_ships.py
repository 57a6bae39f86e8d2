"""The course lab ships (issue 15 §4): the solution passes lab/test_lab.py, the stubs fail it, from
the repository root, from inside lab/, and from the zip the Self-check page offers.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from app_pages.common.course_lab import FOLDER, LAB_FILES, RUN_COMMAND, lab_zip_bytes

ROOT = Path(__file__).resolve().parents[1]
# The lab's five functions, each with its own tests: 5 ring + 3 bytes + 3 DP + 1 unequal + 4 TP
# layers + 4 TP MLP + 10 GPipe + 12 ZeRO + 1 ZeRO paper = 43 tests.
NUM_TESTS = 43


def _run(cwd: Path, target: str, module: str | None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "LAB_MODULE"}
    if module:
        env["LAB_MODULE"] = module
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"] + [target],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    return done.returncode, done.stdout + done.stderr


def _count(word: str, out: str) -> int:
    found = re.search(rf"(\d+) {word}", out)
    return int(found.group(1)) if found else 0


@pytest.mark.parametrize("where", ["root", "lab"])
def test_solution_passes_and_stubs_fail(where):
    cwd, target = (ROOT, "lab/test_lab.py") if where == "root" else (ROOT / "lab", "test_lab.py")
    code, out = _run(cwd, target, "solution")
    assert code == 0 and _count("passed", out) == NUM_TESTS, out[-2000:]
    code, out = _run(cwd, target, None)  # default LAB_MODULE=lab: the stubs
    assert code == 1, out[-2000:]
    assert _count("failed", out) == NUM_TESTS and _count("passed", out) == 0, out[-2000:]
    assert "NotImplementedError" in out


def test_the_repository_suite_does_not_collect_the_stubs():
    code, out = _run(ROOT, "--collect-only", None)  # testpaths and norecursedirs of pyproject
    assert "test_lab.py" not in out and "test_lab_ships.py" in out, out[-2000:]


def test_the_zip_runs_on_its_own(tmp_path):
    with zipfile.ZipFile(io.BytesIO(lab_zip_bytes())) as zf:
        names = set(zf.namelist())
        assert {f"{FOLDER}/{f}" for f in LAB_FILES} <= names
        assert f"{FOLDER}/core/collectives/ring.py" in names
        assert not any("/tests/" in n or "/app_pages/" in n for n in names)
        zf.extractall(tmp_path)
    code, out = _run(tmp_path / FOLDER / "lab", "test_lab.py", "solution")
    assert code == 0 and _count("passed", out) == NUM_TESTS, out[-2000:]
    assert "cd splitlab-lab/lab" in RUN_COMMAND and "LAB_MODULE=solution" in RUN_COMMAND
