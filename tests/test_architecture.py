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
    offenders = [
        str(f.relative_to(ROOT))
        for f in (ROOT / "app_pages").rglob("*.py")
        if "plotly" in _imports(f)
    ]
    assert offenders == []


def test_detector_catches_a_violation(tmp_path):
    """The checker itself can fail: a file importing streamlit is seen."""
    f = tmp_path / "x.py"
    f.write_text(
        "import numpy\nfrom streamlit import session_state\nimport plotly.graph_objects as go\n"
    )
    assert _imports(f) == {"numpy", "streamlit", "plotly"}


# Line budgets (CONTRIBUTING.md): core and figure modules ≤ 300 lines, pages ≤ 150; the pages'
# shared helpers (the package app_pages/common/) are modules, ≤ 300.
BUDGETS = {"core": 300, "figures": 300, "app_pages": 150, "app_pages/common": 300}


@pytest.mark.parametrize("folder", sorted(BUDGETS))
def test_modules_stay_within_their_line_budget(folder):
    limit = BUDGETS[folder]
    pattern = "*.py" if folder == "app_pages" else "**/*.py"  # pages: app_pages/*.py only
    files = list((ROOT / folder).glob(pattern))
    big = {
        str(f.relative_to(ROOT)): n for f in files if (n := len(f.read_text().splitlines())) > limit
    }
    assert big == {}, f"over {limit} lines: split by concept"


# ---------- inside core: shared nouns, concept packages, compositions; no cycles ----------
SHARED_NOUNS = {
    "units",
    "checks",
    "hardware",
    "model",
    "parallel",
    "schedule_names",
    "training",
    "zero_stages",
}
CONCEPTS = {
    "collectives",
    "pipeline",
    "memory",
    "data_parallel",
    "tensor_parallel",
    "reliability",
    "traces",
    "context_parallel",
    "expert_parallel",
}
COMPOSITIONS = {"planner", "scenarios", "quiz", "stepplan"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _core_edges(path: Path) -> set[str]:
    """Every core module a file imports: top-level, lazy and TYPE_CHECKING imports alike."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("core.")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "core":
                out |= {f"core.{a.name}" for a in node.names}
            elif node.module.startswith("core."):
                out.add(node.module)
    return out


def _core_graph() -> dict[str, set[str]]:
    files = {_module_name(f): f for f in (ROOT / "core").rglob("*.py")}
    graph = {}
    for mod, f in files.items():
        edges = set()
        for target in _core_edges(f):
            while target not in files and "." in target:  # `from core.pkg.mod import name`
                target = target.rsplit(".", 1)[0]
            if target in files and target != mod:
                edges.add(target)
        graph[mod] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_core_has_no_import_cycles():
    """A package's own modules import each other directly, never through their package."""
    assert _cycles(_core_graph()) == []


def test_cycle_detector_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _top(mod: str) -> str:
    return mod.split(".")[1] if mod.count(".") else mod


def test_core_layers():
    """Shared nouns import no concept package; concepts never import planner, scenarios or quiz."""
    bad = []
    for mod, edges in _core_graph().items():
        if mod == "core":
            continue
        top, used = _top(mod), {_top(e) for e in edges} - {_top(mod)}
        if top in SHARED_NOUNS:
            bad += [f"{mod} → core.{u}" for u in used if u not in SHARED_NOUNS]
        elif top in CONCEPTS:
            bad += [f"{mod} → core.{u}" for u in used if u in COMPOSITIONS]
        else:
            assert top in COMPOSITIONS, (
                f"{mod}: place it among the shared nouns, concepts or compositions"
            )
    assert bad == []


@pytest.mark.parametrize("package", sorted(CONCEPTS | {"planner"}))
def test_packages_list_their_public_names(package):
    """Each package's __init__ lists its public names, and every listed name is importable."""
    import importlib

    mod = importlib.import_module(f"core.{package}")
    assert mod.__doc__ and mod.__all__, f"core/{package}/__init__.py needs a docstring and __all__"
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert missing == []


def test_issue_12_import_paths():
    """The names other code relies on keep working from their packages."""
    from core.collectives import all_reduce_time_s, bus_bandwidth_factor, ring_all_reduce  # noqa: F401
    from core.model import MODEL_PRESETS, ModelSpec  # noqa: F401
    from core.pipeline import SCHEDULES, simulate  # noqa: F401
    from core.planner import Layout, Training, evaluate, search  # noqa: F401
