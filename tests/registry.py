"""The pages app.py registers, read from its PAGES literal (no Streamlit import needed)."""

import ast
from pathlib import Path

from tests.charts import charts

ROOT = Path(__file__).resolve().parents[1]


def registered_pages() -> list[tuple[str, str]]:
    """(file, title) for every page in app.PAGES whose file exists."""
    tree = ast.parse((ROOT / "app.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PAGES":
            entries = ast.literal_eval(node.value)
            return [(path, title) for path, title, *_ in entries if (ROOT / path).exists()]
    raise AssertionError("app.py has no PAGES list")


def url_path(page_file: str) -> str:
    """Streamlit serves app_pages/<name>.py at /<name>."""
    return Path(page_file).stem


def run_page_file(page_file: str, **params: str):
    """AppTest of one page file with URL params seeded; fails on any exception in the script."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / page_file), default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart_specs(at) -> list[dict]:
    """The Plotly JSON of every chart an AppTest run drew, in page order."""
    import json

    return [json.loads(c.spec) for c in charts(at)]


def assert_self_check(at, key: str, right: float, wrong: float) -> None:
    """A self-check box accepts the worked answer and explains a wrong one."""
    box = at.number_input(key=key)
    box.set_value(right).run()
    assert any("Correct" in s.value for s in at.success)
    box.set_value(wrong).run()
    assert any("Not quite" in e.value for e in at.error)


def plain_arrays(obj):
    """Plotly JSON with its base64 typed arrays ({dtype, bdata, shape}) turned back into lists."""
    import base64

    import numpy as np

    if isinstance(obj, dict):
        if set(obj) >= {"dtype", "bdata"}:
            arr = np.frombuffer(base64.b64decode(obj["bdata"]), dtype=np.dtype(obj["dtype"]))
            shape = obj.get("shape")
            if shape:
                arr = arr.reshape([int(s) for s in str(shape).split(",")])
            return arr.tolist()
        return {k: plain_arrays(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain_arrays(v) for v in obj]
    return obj
