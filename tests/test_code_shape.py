"""The shape of the code, measured: every room stays small enough to read, and the
arrows between packages point one way (README: "How the code is laid out")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parent.parent / "demo"
STATIC = DEMO.parent / "static"
MODULES = sorted(DEMO.rglob("*.py"))

MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 60
WHOLE = {("idempotency.py", "execute")}
"""Kept whole on purpose: ``execute()`` reads like the article's sketch, top to bottom."""


def _module(path: Path) -> str:
    parts = path.relative_to(DEMO.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The ``demo`` modules ``path`` imports, ``TYPE_CHECKING`` ones included."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            candidates = [target] + [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        else:
            continue
        found |= {c for c in candidates if c.startswith("demo") and _exists(c)}
    return found - {name}


def _exists(module: str) -> bool:
    path = DEMO.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(DEMO)))
def test_no_module_is_over_400_lines(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.name}: {lines} lines"


def test_no_script_is_over_400_lines() -> None:
    scripts = sorted(STATIC.rglob("*.js"))
    own = [s for s in scripts if "htmx" not in s.name]
    assert own, "the page's own scripts were found"
    for script in own:
        lines = len(script.read_text().splitlines())
        assert lines <= MAX_MODULE_LINES, f"{script.name}: {lines} lines"


def test_no_class_over_300_lines_and_no_function_over_60() -> None:
    too_long = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if (
                isinstance(node, ast.ClassDef)
                and size > MAX_CLASS_LINES
                or (
                    not isinstance(node, ast.ClassDef)
                    and size > MAX_FUNCTION_LINES
                    and (path.name, node.name) not in WHOLE
                )
            ):
                too_long.append((path.name, node.name, size))
    assert too_long == []


def test_no_import_cycle_in_demo() -> None:
    graph = {_module(p): _imports(p) for p in MODULES}
    # A package's __init__ may gather its own modules; that is not an arrow back up.
    for name in graph:
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    seen: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for target in sorted(graph.get(node, ())):
            if seen.get(target) == 1:
                pytest.fail("import cycle: " + " → ".join([*path, node, target]))
            if target not in seen:
                visit(target, [*path, node])
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node, [])


def test_arrows_point_down() -> None:
    """The engine knows no lab; a lab knows no workspace, lesson or web page; lessons know
    no workspace."""
    graph = {_module(p): _imports(p) for p in MODULES}
    rules = {
        "demo.engine": (
            "demo.payments",
            "demo.retries",
            "demo.lessons",
            "demo.workspace",
            "demo.web",
        ),
        "demo.payments": ("demo.lessons", "demo.workspace", "demo.registry", "demo.web"),
        "demo.lessons": ("demo.workspace", "demo.registry", "demo.web"),
        "demo.retries": (
            "demo.payments",
            "demo.lessons",
            "demo.workspace",
            "demo.registry",
            "demo.web",
        ),
    }
    wrong = [
        (module, target)
        for module, targets in graph.items()
        for prefix, banned in rules.items()
        if module.startswith(prefix)
        for target in targets
        if target.startswith(banned)
    ]
    assert wrong == []
    assert any(t.startswith("demo.engine") for t in graph["demo.payments.lab"])  # found arrows
