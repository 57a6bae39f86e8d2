"""Two app replicas behind nginx on loopback (deploy/run_replicas.sh): health, sticky sessions,
gzip,
and a real browser session whose WebSocket goes through the proxy to one replica."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
from playwright.sync_api import expect

from tests.e2e.harness import free_port, slider_to_chart_ms, wait_for_app_run, wait_for_charts
from tests.registry import ROOT, registered_pages, url_path

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
COOKIE = "splitlab_replica"


def _get(url: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def _active_sessions(base: str) -> int:
    text = _get(base + "/_stcore/metrics")[2].decode()
    return int(float(re.search(r"^active_sessions (\S+)", text, re.M).group(1)))


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    """deploy/run_replicas.sh in the foreground on free ports; stopped (SIGTERM) afterwards."""
    if not Path(NGINX).exists():
        msg = f"{NGINX} is missing: install it with `apt-get install -y nginx`"
        if os.environ.get("CI"):
            pytest.fail(msg)  # CI must never pass by skipping the proxy
        pytest.skip(msg)
    ports: set[int] = set()
    while len(ports) < 3:
        ports.add(free_port())
    proxy_port, port_a, port_b = sorted(ports)
    prefix = tmp_path_factory.mktemp("nginx")
    env = {
        **os.environ,
        "PROXY_PORT": str(proxy_port),
        "APP_PORT_A": str(port_a),
        "APP_PORT_B": str(port_b),
        "PREFIX": str(prefix),
        "PYTHON": sys.executable,
        "NGINX": NGINX,
    }
    log = open(prefix / "run_replicas.log", "w")
    proc = subprocess.Popen(
        ["bash", str(ROOT / "deploy" / "run_replicas.sh")],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    proxy = f"http://127.0.0.1:{proxy_port}"
    try:
        deadline = time.time() + 150  # two cold app starts on a busy 2-core machine
        while "SplitLab on" not in (prefix / "run_replicas.log").read_text():
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(
                    "run_replicas.sh did not come up:\n"
                    + (prefix / "run_replicas.log").read_text()
                    + "".join(p.read_text() for p in prefix.glob("*.log"))
                )
            time.sleep(0.3)
        yield SimpleNamespace(
            proxy=proxy,
            prefix=prefix,
            proc=proc,
            a=f"http://127.0.0.1:{port_a}",
            b=f"http://127.0.0.1:{port_b}",
        )
    finally:
        proc.send_signal(signal.SIGTERM)  # the script's trap stops both apps and nginx
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # only the group this fixture started
        log.close()


def test_both_replicas_are_healthy_and_the_cookie_pins_a_replica(replicas):
    for base in (replicas.a, replicas.b):
        assert _get(base + "/_stcore/health")[2] == b"ok"
    for name in ("a", "b"):
        for _ in range(5):
            status, headers, body = _get(
                replicas.proxy + "/_stcore/health", {"Cookie": f"{COOKIE}={name}"}
            )
            assert (status, body) == (200, b"ok")
            assert headers["x-splitlab-replica"] == name
    # A first visit (no cookie) is spread over both replicas, and is told which one it got.
    seen = set()
    for _ in range(24):
        _, headers, _ = _get(replicas.proxy + "/_stcore/health")
        seen.add(headers["x-splitlab-replica"])
        assert f"{COOKIE}={headers['x-splitlab-replica']};" in headers["set-cookie"]
    assert seen == {"a", "b"}


def test_proxy_gzips_javascript(replicas):
    html = _get(replicas.proxy + "/", {"Cookie": f"{COOKIE}=a"})[2].decode()
    js = re.search(r'src="\.?/?(static/js/[^"]+\.js)"', html).group(1)
    raw_status, raw_headers, raw = _get(f"{replicas.a}/{js}", {"Accept-Encoding": "identity"})
    assert raw_status == 200 and "content-encoding" not in raw_headers
    status, headers, body = _get(
        f"{replicas.proxy}/{js}", {"Accept-Encoding": "gzip", "Cookie": f"{COOKIE}=a"}
    )
    assert status == 200
    assert headers.get("content-encoding") == "gzip", headers
    assert gzip.decompress(body) == raw  # the same file, compressed
    assert len(body) < 0.5 * len(raw), (len(body), len(raw))


@pytest.mark.browser
def test_browser_session_goes_through_nginx_to_one_replica(replicas, browser):
    path, title = registered_pages()[0]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    hosts = set()
    page.on(
        "request", lambda r: hosts.add(r.url.split("/")[2]) if r.url.startswith("http") else None
    )
    try:
        page.goto(replicas.proxy + "/")
        wait_for_app_run(page)
        expect(page.get_by_role("heading", name="SplitLab")).to_be_visible()
        replica = next(c["value"] for c in context.cookies() if c["name"] == COOKIE)
        mine, other = (replicas.a, replicas.b) if replica == "a" else (replicas.b, replicas.a)

        # Open a page from the landing page (same WebSocket session), then move its first slider.
        link = page.locator(f"[data-testid='stMain'] a[href$='/{url_path(path)}']")
        if link.count() == 0:  # no card for it on the landing page: the sidebar menu then
            link = page.get_by_test_id("stSidebarNav").locator(f"a[href$='/{url_path(path)}']")
        link.first.click()
        expect(page).to_have_url(re.compile(rf"/{url_path(path)}"))
        wait_for_app_run(page)
        assert wait_for_charts(page) >= 1
        expect(page.get_by_role("heading", name=title).first).to_be_visible()
        thumb = page.get_by_test_id("stMain").get_by_test_id("stSlider").first.get_by_role("slider")
        before = thumb.get_attribute("aria-valuetext")
        key = "ArrowLeft" if before == thumb.get_attribute("max") else "ArrowRight"
        first_ms, settled_ms = slider_to_chart_ms(page, thumb, key)  # waits for the chart to redraw
        assert thumb.get_attribute("aria-valuetext") != before
        assert 0 < first_ms <= settled_ms < 60_000
        expect(page).to_have_url(re.compile(r"\?.+="))  # the moved slider is in the URL
        expect(page.get_by_test_id("stException")).to_have_count(0)
        expect(page.get_by_text("Something went wrong")).to_have_count(0)

        # The session lives on the cookie's replica only.
        assert _active_sessions(mine) >= 1
        assert _active_sessions(other) == 0
        assert hosts == {replicas.proxy.split("/")[2]}, hosts  # nothing bypassed the proxy

        # A reload (a reconnect) keeps the cookie and so the replica.
        page.reload()
        wait_for_app_run(page)
        wait_for_charts(page)
        assert next(c["value"] for c in context.cookies() if c["name"] == COOKIE) == replica
        assert _active_sessions(other) == 0
        expect(page.get_by_test_id("stException")).to_have_count(0)

        # nginx logs a WebSocket when it closes: the reload closed the first one, upgraded (101).
        deadline = time.time() + 20
        while not re.search(
            r'"GET /_stcore/stream HTTP/1.1" 101 ',
            access := (replicas.prefix / "access.log").read_text(),
        ):
            assert time.time() < deadline, access[-2000:]
            time.sleep(0.3)
    finally:
        context.close()
