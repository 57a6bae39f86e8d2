"""The import direction pages → figures → core, checked on every source file's AST."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    """Top-level package names a file imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


FORBIDDEN = {
    "core": {"streamlit", "plotly", "figures", "app_pages", "app"},
    "figures": {"streamlit", "app_pages", "app"},
    "app_pages": {"app"},
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_downward(layer):
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, f"{layer}/ has no Python files"
    bad = {str(f.relative_to(ROOT)): sorted(_imports(f) & FORBIDDEN[layer]) for f in files}
    assert not {k: v for k, v in bad.items() if v}


def test_pages_draw_through_figures_not_plotly():
    """Pages build no figures themselves: every Plotly figure comes from figures/."""
    offenders = [str(f.relative_to(ROOT)) for f in (ROOT / "app_pages").glob("*.py")
                 if "plotly" in _imports(f)]
    assert offenders == []


def test_detector_catches_a_violation(tmp_path):
    """The checker itself can fail: a file importing streamlit is seen."""
    f = tmp_path / "x.py"
    f.write_text("import numpy\nfrom streamlit import session_state\nimport plotly.graph_objects as go\n")
    assert _imports(f) == {"numpy", "streamlit", "plotly"}


def test_core_modules_stay_small():
    """DEVELOPERS.md: core modules ≲250 lines (a little slack before it fails)."""
    big = {f.name: n for f in (ROOT / "core").glob("*.py")
           if (n := len(f.read_text().splitlines())) > 300}
    assert big == {}
