"""app_pages/common/heap.py: after the first whole run of a page the live heap is frozen (the
collector's full passes stop walking it), once per page and process, and only after a
collection, so garbage is not frozen."""

import gc
from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_pages.common import heap


def test_the_first_run_of_a_page_collects_then_freezes_once(monkeypatch):
    monkeypatch.setattr(heap, "_SETTLED", set())
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    assert heap.settle("collectives") is True
    assert calls == ["collect", "freeze"]  # collected first: no garbage is frozen
    assert heap.settle("collectives") is False  # the second run of that page: nothing
    assert heap.settle("pipeline") is True  # another page's first run imports its modules
    assert calls == ["collect", "freeze", "collect", "freeze"]


def test_garbage_is_not_frozen_and_the_frozen_heap_is_not_walked(monkeypatch):
    monkeypatch.setattr(heap, "_SETTLED", set())

    class Node:
        pass

    loop = Node()
    loop.me = loop  # a reference cycle: only the cyclic collector frees it
    del loop
    before = gc.get_freeze_count()
    try:
        assert heap.settle("a page") is True
        frozen = gc.get_freeze_count()
        assert frozen > before
        assert not any(type(o) is Node for o in gc.get_objects())  # collected, not frozen
        assert len(gc.get_objects()) < frozen  # what the collector still walks is what is new
    finally:
        gc.unfreeze()


def test_the_app_settles_after_a_whole_page_run(monkeypatch):
    monkeypatch.setattr(heap, "_SETTLED", set())
    monkeypatch.setattr(gc, "freeze", lambda: None)  # the test process keeps its own heap
    at = AppTest.from_file(str(Path(__file__).parents[1] / "app.py"), default_timeout=120)
    at.switch_page("app_pages/collectives.py").run()
    assert not at.exception
    assert "collectives" in heap._SETTLED
