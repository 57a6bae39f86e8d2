"""The Dockerfile rehearsed without a Docker engine (none runs on this machine): the build context
its .dockerignore allows, started with its ENTRYPOINT, probed with its HEALTHCHECK, driven in
Chromium.
"""

import fnmatch
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.markers import Marker  # streamlit's own dependency

from tests.e2e.harness import ROOT, free_port, wait_for_app_run, wait_for_charts

pytestmark = pytest.mark.browser
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _instruction(name: str) -> str:
    """The text of one instruction, continuation lines joined."""
    text = DOCKERFILE.replace("\\\n", " ")
    return next(line for line in text.splitlines() if line.startswith(name + " "))[len(name) + 1 :]


def _ignored(rel: str, patterns: list[str]) -> bool:
    """Docker's rule: the last pattern that matches the path (or one of its parents) decides."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    verdict = False
    for raw in patterns:
        keep, pat = raw.startswith("!"), raw.lstrip("!").rstrip("/")
        pat = pat[3:] if pat.startswith("**/") else pat
        deep = raw.lstrip("!").startswith("**/")
        if any(fnmatch.fnmatchcase(p if not deep else p.split("/")[-1], pat) for p in prefixes):
            verdict = not keep
    return verdict


def _context_list() -> list[str]:
    """The tracked files `COPY . .` receives once .dockerignore has filtered the build context."""
    patterns = [
        ln.strip()
        for ln in (ROOT / ".dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    try:  # tracked files: an untracked module the app imports would be missing from a real build
        files = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (
        OSError,
        subprocess.CalledProcessError,
    ):  # a tree without .git (a CI export): every file
        files = [
            p.relative_to(ROOT).as_posix()
            for p in ROOT.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(ROOT).parts
        ]
    return [p for p in files if not _ignored(p, patterns)]


def _context(dest: Path) -> None:
    """Copy the build context into dest, as the image's /app would hold it."""
    for rel in _context_list():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)


def _applies(line: str) -> bool:
    """A requirement line's environment marker holds here (no marker: it always does)."""
    _, _, marker = line.partition(";")
    return not marker.strip() or Marker(marker).evaluate()


def test_requirements_are_pinned_and_installed_at_those_versions():
    lines = [
        ln.split("#")[0].strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()
    ]
    # "name==version" with, at most, an environment marker (uvloop: no Windows build)
    pins = [ln.split(";")[0].strip() for ln in lines if ln and _applies(ln)]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][^ ]*", p) for p in pins), pins
    for pin in pins:
        name, want = pin.split("==")
        assert version(name.split("[")[0]) == want, (
            f"{name}: installed {version(name)}, pinned {want}"
        )


def test_build_context_holds_the_app_and_nothing_else():
    kept = _context_list()
    assert "app.py" in kept and ".streamlit/config.toml" in kept and "requirements.txt" in kept
    assert any(p.startswith("core/") for p in kept) and any(
        p.startswith("app_pages/") for p in kept
    )
    assert "data/traces/ddp_gloo_rank0.json.gz" in kept  # the trace page's demo
    assert not [
        p for p in kept if p.startswith(("tests/", "benchmarks/", ".git", "docs/", "deploy/"))
    ]
    assert ".streamlit/secrets.toml" not in kept


def test_image_entrypoint_serves_the_app_and_the_healthcheck_passes(tmp_path, browser):
    _context(tmp_path)
    port = free_port()
    entry = json.loads(_instruction("ENTRYPOINT"))
    assert entry[:3] == ["streamlit", "run", "app.py"]
    args = [a.replace("8501", str(port)).replace("0.0.0.0", "127.0.0.1") for a in entry[3:]]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            *args,
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        probe = json.loads(_instruction("HEALTHCHECK").split(" CMD ", 1)[1])
        probe = [a.replace("localhost:8501", f"127.0.0.1:{port}") for a in probe]
        assert probe[0] == "python"
        deadline, code = time.time() + 60, None
        while time.time() < deadline:
            code = subprocess.run([sys.executable, *probe[1:]], capture_output=True).returncode
            if code == 0:
                break
            time.sleep(0.5)
        assert code == 0, "the image's HEALTHCHECK never passed"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as r:
            assert r.read() == b"ok"
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        url = f"http://127.0.0.1:{port}"
        tab.goto(url)
        wait_for_app_run(tab)
        for path in ("collectives", "trace"):  # trace reads data/ from the image
            tab.goto(f"{url}/{path}")
            wait_for_app_run(tab)
            assert wait_for_charts(tab) >= 1
            assert tab.get_by_test_id("stException").count() == 0
            assert tab.get_by_text("Something went wrong").count() == 0
        tab.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
