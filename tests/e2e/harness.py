"""Start the app on loopback and drive Debian's Chromium with Playwright (tests and benchmarks)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# --no-sandbox: tests run as root; the rest stop Chromium calling Google hosts on a closed network.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc) -> None:
    """Terminate a server process; kill it if it has not exited within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def wait_healthy(proc, url: str, timeout_s: float, why) -> None:
    """Poll Streamlit's health endpoint until it answers "ok"; RuntimeError (with `why()`) if the
    process exits or `timeout_s` passes first."""
    deadline = time.time() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.read() == b"ok":
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"streamlit did not become healthy ({why()})")
        time.sleep(0.2)


@contextmanager
def running_app(
    log_path: Path | None = None, extra_args: tuple[str, ...] = (), cwd: Path = ROOT
) -> Iterator[str]:
    """`streamlit run app.py` headless on 127.0.0.1; yields the base URL once healthy. `cwd`: the
    checkout to serve (benchmarks.against serves another commit's worktree beside this one)."""
    port = free_port()
    log = open(log_path or os.devnull, "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
            *extra_args,
        ],
        cwd=cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, url, 60, lambda: f"exit code {proc.poll()}")
        yield url
    finally:
        stop(proc)
        log.close()


def launch_browser(playwright):
    """Headless Debian Chromium (never a Playwright-downloaded browser)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)


def wait_for_app_run(page, timeout_ms: int = 30_000) -> None:
    """Connected, script finished, no status widget: the rerun is done."""
    from playwright.sync_api import expect

    app = page.get_by_test_id("stApp")
    expect(app).to_have_attribute("data-test-connection-state", "CONNECTED", timeout=timeout_ms)
    expect(app).to_have_attribute("data-test-script-state", "notRunning", timeout=timeout_ms)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout_ms)


# A chart (app_pages/common/plot.js); or, on commits before the chart component (5ebd3ca),
# Streamlit's own: `python -m benchmarks.against <older commit>` times both with this harness.
CHART = "[data-testid='splitlabChart'], [data-testid='stPlotlyChart']"


def wait_for_charts(page, timeout_ms: int = 30_000) -> int:
    """Wait until every Plotly chart on the page has drawn its SVG; return how many there are."""
    page.wait_for_function(
        f"""() => {{ const c = [...document.querySelectorAll("{CHART}")];
                   return c.length > 0 && c.every(e => e.querySelector('.main-svg')); }}""",
        timeout=timeout_ms,
    )
    return page.locator(CHART).count()


# Installed before a key press: records when the key went down and every later change inside a
# chart.
LATENCY_PROBE = """() => {
  window.__t_key = null; window.__t_last = null; window.__t_first = null;
  window.__t_anim = null; window.__t_drawn = null;
  document.addEventListener('keydown', () => { if (window.__t_key === null) window.__t_key =
  performance.now(); },
                            {capture: true, once: true});
  // A glide (app_pages/common/glide.py) starts with Plotly.animate once the chart is drawn: the
  // redraw ends there; the frames after it are the animation, timed apart.
  const P = window.Plotly;
  if (P && !P.__probed) {
    const animate = P.animate;
    P.animate = function (...args) {
      if (window.__t_key !== null && window.__t_anim === null) window.__t_anim = performance.now();
      return animate.apply(this, args);
    };
    P.__probed = true;
  }
  const obs = new MutationObserver((muts) => {
    if (window.__t_key === null) return;
    if (muts.some(m => m.target.closest && m.target.closest("__CHART__"))) {
      window.__t_last = performance.now();
      if (window.__t_anim === null) window.__t_drawn = window.__t_last;
    }
    // first redraw inside Plotly's own DOM (not Streamlit marking the old element stale)
    if (window.__t_first === null &&
        muts.some(m => m.target.closest && m.target.closest(".js-plotly-plot .main-svg")))
      window.__t_first = performance.now();
  });
  obs.observe(document.querySelector("[data-testid='stMain']") || document.body,
              {subtree: true, childList: true, characterData: true, attributes: true});
  window.__probe_obs = obs;
}""".replace("__CHART__", CHART)


def slider_to_chart_ms(page, thumb, key: str = "ArrowRight") -> tuple[float, float]:
    """Press a key on a slider thumb; ms from keydown to (first chart redrawn, last chart
    change before any glide starts: every chart drawn). `slider_timeline_ms` adds the glide.
    """
    first, drawn, _ = slider_timeline_ms(page, thumb, key)
    return first, drawn


def slider_timeline_ms(page, thumb, key: str = "ArrowRight") -> tuple[float, float, float | None]:
    """Press a key on a slider thumb; ms from keydown to (first chart redrawn, every chart drawn,
    the last glide frame or None when nothing glided)."""
    page.evaluate(LATENCY_PROBE)
    thumb.focus()
    thumb.press(key)
    page.wait_for_function("window.__t_last !== null", timeout=30_000)
    wait_for_app_run(page)
    # Plotly paints after the script finishes: let the last draw land, then read the newest change.
    settled, last = 0, None
    while settled < 3:
        time.sleep(0.1)
        now = page.evaluate("window.__t_last")
        settled = settled + 1 if now == last else 0
        last = now
    page.evaluate("window.__probe_obs.disconnect()")
    first, drawn, anim, last = page.evaluate(
        """[(window.__t_first ?? window.__t_last) - window.__t_key,
            (window.__t_drawn ?? window.__t_last) - window.__t_key,
            window.__t_anim, window.__t_last - window.__t_key]"""
    )
    return first, drawn, (last if anim is not None else None)


def full_screenshot(page, path: str, max_height_px: int = 7000) -> None:
    """Screenshot the whole page: Streamlit scrolls inside stMain, so grow the viewport to fit
    it.
    """
    height = page.evaluate("""() => { const m = document.querySelector("[data-testid='stMain']");
                                      return m ? m.scrollHeight : document.body.scrollHeight; }""")
    width = page.viewport_size["width"]
    page.set_viewport_size({"width": width, "height": min(max(height, 800), max_height_px)})
    page.wait_for_timeout(600)  # Plotly re-lays out on resize
    page.screenshot(path=path)
