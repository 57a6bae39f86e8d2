"""The pages app.py registers, read from its PAGES literal (no Streamlit import needed)."""
import ast
from pathlib import Path

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
    """Streamlit serves app_pages/x.py at /x."""
    return Path(page_file).stem
