"""Fragment guard tests: does moving a widget rerun only its `st.fragment`, and which builders run?

Why not AppTest: in Streamlit 1.67 `AppTest` (streamlit/testing/v1) always reruns the whole script
(`LocalScriptRunner.run` builds a `RerunData` with no `fragment_id`), so it cannot show what a
fragment saves. This module starts a real `streamlit run app.py` whose process wraps the named
functions ("module:attr") in call counters, and drives it over the same WebSocket protocol a
browser tab speaks (streamlit/proto: BackMsg.rerun_script with `fragment_id` = the fragment that
holds the widget, exactly what the frontend sends for a widget inside a fragment).

Recipe: one server for the whole test session, shared by every module (`shared_app()`); at
start it wraps every module-level function (and st.cache_data / functools.cache function) of
every module under figures/ and app_pages/common/ in a call counter, so a test counts any of them:

    from tests.fragments import shared_app

    @pytest.fixture(scope="module")
    def app():
        return shared_app()

    def test_step_reruns_only_the_ring(app):
        tab = app.open("collectives")            # a new tab: the page's first full run
        with app.counting() as calls:
            tab.move("step", 3)                   # the widget's user key, a value of its type
        assert tab.fragment_run                   # the server ran only a fragment
        assert calls["app_pages.common:start_page"] == 0   # the page body did not rerun
        assert calls["figures.collectives:open_at_step"] == 1

A name is "module:attr" as the caller spells it (`figures.collectives:open_at_step` and the
defining submodule's name count the same calls); `from m import f` bindings inside those modules
are rebound to the counter too. Functions defined inside a page file itself are not counted: a
section worth guarding lives in a module under app_pages/common/ (the planner's planner_view).
Caches are shared by every test of the session: assert `== 0` for what must not run; for what must
run, spy a function that is not cached, or move to a value no other test used. `tab.texts` holds the
bodies of the markdown, headings and alerts the last rerun sent; `tab.charts` lists
the charts the last rerun sent in full (their keys; like the browser, a tab sends the hashes of the
messages it holds, so an unchanged chart of 10 kB or more comes back as a reference, counted in
`tab.refs`, its key in `tab.kept`); `tab.url_bound` the URL keys of the `bind="query-params"`
widgets it drew (the browser, not the server, writes those to the URL, so a bound widget inside a
fragment must carry its key in the fragment's run); `tab.query_string` the URL after the
server's own `st.query_params` writes. `spied_app("module:attr", ...)` starts a private
server instead.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tests.charts import chart_of
from tests.e2e.harness import stop, wait_healthy

ROOT = Path(__file__).resolve().parents[1]
SPY_ENV, LOG_ENV = "SPLITLAB_SPY", "SPLITLAB_SPY_LOG"
EVERYTHING = ("figures", "app_pages.common")  # the packages `shared_app` counts whole


def _counter(original, name: str, fd: int):
    """A stand-in that writes `name` to the log, then calls `original`. Plain functions get a
    function (it binds and hashes like one); cached ones an object that forwards `.clear()` &c."""
    line = (name + "\n").encode()
    if inspect.isfunction(original):

        def spy(*args, **kwargs):
            os.write(fd, line)
            return original(*args, **kwargs)

        return functools.update_wrapper(spy, original, updated=())

    class Spy:
        def __call__(self, *args, **kwargs):
            os.write(fd, line)
            return original(*args, **kwargs)

        def __getattr__(self, attr):
            return getattr(original, attr)

    return Spy()


def _spyable(obj, packages: tuple[str, ...]) -> bool:
    """A function (or cached function) defined in one of `packages`; classes are left alone."""
    home = getattr(obj, "__module__", None) or ""
    in_packages = any(home == p or home.startswith(p + ".") for p in packages)
    return (
        in_packages and callable(obj) and not isinstance(obj, type) and hasattr(obj, "__qualname__")
    )


def _install_spies(targets: list[str], log_path: str) -> None:
    """In the server process: count calls of each "module:attr" target, or of every function of
    every module in a package target ("pkg.*"); write the aliases (names -> counted name)."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    packages = tuple(t[:-2] for t in targets if t.endswith(".*"))
    modules = []
    for pkg in packages:
        modules.append(importlib.import_module(pkg))
        for info in pkgutil.walk_packages(modules[-1].__path__, pkg + "."):
            modules.append(importlib.import_module(info.name))
    spies, aliases = {}, {}  # id(original) -> (counted name, counter); "mod:attr" -> counted name
    for target in (t for t in targets if not t.endswith(".*")):
        mod_name, attr = target.split(":")
        modules.append(importlib.import_module(mod_name))
        original = getattr(modules[-1], attr)
        spies[id(original)] = (target, _counter(original, target, fd))
    for mod in modules:  # every function once, under the module that defines it
        for obj in list(vars(mod).values()):
            if id(obj) not in spies and _spyable(obj, packages):
                name = f"{obj.__module__}:{obj.__qualname__}"
                spies[id(obj)] = (name, _counter(obj, name, fd))
    for mod in modules:  # then every name bound to one of them, re-exports and imports included
        for attr, obj in list(vars(mod).items()):
            if id(obj) in spies and not attr.startswith("__"):
                name, spy = spies[id(obj)]
                setattr(mod, attr, spy)
                aliases[f"{mod.__name__}:{attr}"] = name
    Path(log_path + ".aliases.json").write_text(json.dumps(aliases))


class Calls(collections.Counter):
    """Calls per counted name; `calls["figures.collectives:open_at_step"]` also finds a function
    counted under the submodule that defines it."""

    aliases: dict[str, str] = {}

    def __missing__(self, key: str) -> int:
        name = self.aliases.get(key, key)
        return self[name] if name != key else 0


class Tab:
    """One browser tab's WebSocket session (sync), remembering the widgets each run drew."""

    def __init__(self, url: str, page: str, query_string: str = ""):
        from websockets.sync.client import connect

        self.page, self.query_string = page, query_string
        self.widgets: dict[str, tuple[str, str, object]] = {}  # key -> (type, fragment id, proto)
        self.states: dict[str, object] = {}  # widget id -> WidgetState last sent
        self.charts: list[str] = []
        self.kept: list[str] = []  # charts the last run sent as a reference (unchanged)
        self.specs: dict[str, str] = {}  # chart key -> its Plotly JSON, as last sent in full
        # chart key -> where the last run put it (ForwardMsg delta_path; a chart whose path
        # changes is a new React node in the browser: drawn from scratch) and message hash -> key
        self.paths: dict[str, tuple[int, ...]] = {}
        self._chart_of: dict[str, tuple[str, str]] = {}  # message hash -> (key, spec)
        self.elements: list[str] = []
        self.texts: list[str] = []  # the bodies of the markdown, headings and alerts the run sent
        self.exceptions: list[str] = []
        self.url_bound: set[str] = set()  # query_param_key of the bound widgets the run drew
        self.refs = 0  # elements the server sent as a reference to the browser's copy
        self.cached: dict[str, int] = {}  # message hash -> run it was last seen (browser cache)
        self.runs = 0
        self.fragment_run = False
        self.ws = connect(
            url.replace("http", "ws") + "/_stcore/stream",
            subprotocols=["streamlit"],
            origin=url,
            max_size=2**28,
            compression=None,
            open_timeout=60,
            # no keepalive pings: websockets draws each ping's payload from the global `random`
            # (python-websockets/websockets src/websockets/sync/connection.py, `ping`), and a tab
            # of the shared server lives for the whole session, so a ping during a Hypothesis
            # test changed `random`'s state under it (HypothesisDeprecationWarning "Do not use
            # the random module inside strategies")
            ping_interval=None,
        )
        self.rerun()

    def rerun(self, fragment_id: str = "") -> float:
        """Send the tab's widget states (as the browser does); seconds until the run finished."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        state = msg.rerun_script
        state.page_name, state.query_string = self.page, self.query_string
        state.fragment_id = fragment_id
        state.cached_message_hashes.extend(self.cached)  # as the browser does
        for w in self.states.values():
            state.widget_states.widgets.add().CopyFrom(w)
        t0 = time.perf_counter()
        self.ws.send(msg.SerializeToString())
        self.charts, self.elements, self.exceptions, self.url_bound = [], [], [], set()
        self.kept = []
        self.texts = []
        self.refs, self.runs = 0, self.runs + 1
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(self.ws.recv(timeout=60))
            kind = fwd.WhichOneof("type")
            if fwd.metadata.cacheable and fwd.hash:
                self.cached[fwd.hash] = self.runs
            if kind == "ref_hash":  # an unchanged element of 10 kB or more: not sent again
                self.cached[fwd.ref_hash], self.refs = self.runs, self.refs + 1
                if found := self._chart_of.get(fwd.ref_hash):  # the browser's copy is drawn
                    key, self.specs[key] = found
                    self.kept.append(key)
                    self.paths[key] = tuple(fwd.metadata.delta_path)
            elif kind == "page_info_changed":
                self.query_string = fwd.page_info_changed.query_string
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._saw(fwd.delta.new_element, fwd.delta.fragment_id)
                new = fwd.delta.new_element
                if new.WhichOneof("type") == "bidi_component" and chart_of(new.bidi_component):
                    self.paths[self.charts[-1]] = tuple(fwd.metadata.delta_path)
                    key = self.charts[-1]
                    self._chart_of[fwd.hash] = (key, self.specs[key])
            elif kind == "script_finished":
                name = ForwardMsg.ScriptFinishedStatus.Name(fwd.script_finished)
                if name == "FINISHED_EARLY_FOR_RERUN":
                    continue  # a callback or st.rerun: the next run follows on the same stream
                self.fragment_run = name == "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"
                # the browser forgets what went unused for global.maxCachedMessageAge (2) runs
                self.cached = {h: r for h, r in self.cached.items() if self.runs - r < 2}
                return time.perf_counter() - t0

    def _saw(self, el, fragment_id: str) -> None:
        kind = el.WhichOneof("type")
        self.elements.append(kind)
        inner = getattr(el, kind)
        wid = getattr(inner, "id", "") if kind != "exception" else ""
        if kind == "bidi_component" and (chart := chart_of(inner)):
            self.charts.append(chart.key)
            self.specs[chart.key] = chart.spec
        elif kind == "exception":
            self.exceptions.append(inner.message)
        elif kind in ("markdown", "heading", "alert"):
            self.texts.append(inner.body)
        elif wid.startswith("$$ID-") and wid.count("-") >= 2:
            self.widgets[wid.split("-", 2)[2]] = (kind, fragment_id, inner)
            if getattr(inner, "query_param_key", ""):
                self.url_bound.add(inner.query_param_key)

    def move(self, key: str, value) -> float:
        """Set the widget with user key `key` to `value` and rerun as the browser would: only
        the widget's fragment if it sits in one. Sliders take a number (or a (lo, hi) pair),
        checkboxes/toggles a bool, number inputs a number, buttons True; selectboxes, radios
        and select_sliders an option's label as shown or its index, multiselects a list of them,
        text inputs a string."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        if key not in self.widgets:
            seen = sorted(self.widgets)
            raise KeyError(f"no widget with key {key!r} on /{self.page}; seen: {seen}")
        kind, fragment_id, proto = self.widgets[key]

        def label(v) -> str:  # Streamlit 1.67 sends the option's shown label, not its index
            return proto.options[v] if isinstance(v, int) and not isinstance(v, bool) else str(v)

        w = WidgetState(id=proto.id)
        if kind == "slider":
            w.double_array_value.data.extend(value if isinstance(value, tuple) else [value])
        elif kind in ("checkbox", "toggle"):
            w.bool_value = bool(value)
        elif kind == "button":
            w.trigger_value = True
        elif kind in ("selectbox", "radio"):
            w.string_value = label(value)
        elif kind in ("select_slider", "multiselect"):
            many = value if isinstance(value, (tuple, list)) else [value]
            w.string_array_value.data.extend(label(v) for v in many)
        elif kind == "number_input":
            w.double_value = float(value)
        elif kind in ("text_input", "text_area"):
            w.string_value = str(value)
        else:
            raise NotImplementedError(f"move() does not drive a {kind} yet (key {key!r})")
        self.states[proto.id] = w
        try:
            return self.rerun(fragment_id)
        finally:
            if kind == "button":
                del self.states[proto.id]  # a trigger fires once

    def close(self) -> None:
        self.ws.close()


class SpiedApp:
    def __init__(self, url: str, log_path: Path):
        self.url, self.log_path, self.tabs = url, log_path, []

    def open(self, page: str, query_string: str = "") -> Tab:
        """A fresh tab on /page, after its first full run."""
        self.tabs.append(Tab(self.url, page, query_string))
        return self.tabs[-1]

    def calls(self) -> Calls:
        """Calls of each spied function since the server started."""
        lines = self.log_path.read_text().split() if self.log_path.exists() else []
        aliases = Path(str(self.log_path) + ".aliases.json")
        Calls.aliases = json.loads(aliases.read_text()) if aliases.exists() else {}
        return Calls(lines)

    @contextlib.contextmanager
    def counting(self) -> Iterator[Calls]:
        """Yields a Counter filled, on exit, with the spied calls made inside the block."""
        before, out = self.calls(), Calls()
        yield out
        out.update(self.calls() - before)


@contextlib.contextmanager
def spied_app(*targets: str) -> Iterator[SpiedApp]:
    """`streamlit run app.py` on 127.0.0.1 with call counters on `targets` ("module:attr")."""
    from tests.e2e.harness import free_port

    port, tmp = free_port(), Path(tempfile.mkdtemp(prefix="splitlab-spy-"))
    log_path, out = tmp / "calls.log", open(tmp / "streamlit.log", "w")
    env = dict(os.environ, **{SPY_ENV: ",".join(targets), LOG_ENV: str(log_path)})
    args = ["--server.address", "127.0.0.1", "--server.port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fragments", *args], cwd=ROOT, env=env, stdout=out, stderr=out
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, url, 90, lambda: f"spied server: {(tmp / 'streamlit.log').read_text()}")
        app = SpiedApp(url, log_path)
        yield app
        for tab in app.tabs:
            tab.close()
    finally:
        stop(proc)
        out.close()


_SHARED: list = []


def shared_app() -> SpiedApp:
    """The session's one spied server (started on first use, stopped when pytest exits): every
    function under figures/ and app_pages/common/ counted."""
    if not _SHARED:
        manager = spied_app(*(p + ".*" for p in EVERYTHING))
        _SHARED.append(manager.__enter__())
        atexit.register(manager.__exit__, None, None, None)
    return _SHARED[0]


if __name__ == "__main__":  # the server process: spies first, then Streamlit's own CLI
    sys.path.insert(0, str(ROOT))
    _install_spies([t for t in os.environ.get(SPY_ENV, "").split(",") if t], os.environ[LOG_ENV])
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", "app.py", "--server.headless", "true", *sys.argv[1:]]
    sys.exit(cli.main())
