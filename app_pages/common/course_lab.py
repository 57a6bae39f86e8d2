"""The course lab (lab/) as a download: a zip built in memory when the button is clicked."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAB_FILES = ("lab/README.md", "lab/lab.py", "lab/solution.py", "lab/test_lab.py")
ZIP_NAME = "splitlab-lab.zip"
FOLDER = "splitlab-lab"  # the zip's top folder
RUN_COMMAND = (
    f"unzip {ZIP_NAME} && cd {FOLDER}/lab\n"
    "pytest test_lab.py -v                      # your lab.py (fails until you write it)\n"
    "LAB_MODULE=solution pytest test_lab.py -v  # the solution (passes)"
)


def lab_zip_bytes() -> bytes:
    """lab/ and the core it is checked against (pure Python + numpy), under one folder."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in LAB_FILES:
            zf.write(ROOT / rel, f"{FOLDER}/{rel}")
        for path in sorted((ROOT / "core").rglob("*.py")):
            zf.write(path, f"{FOLDER}/{path.relative_to(ROOT).as_posix()}")
    return buf.getvalue()
