"""The direction of imports, checked on the source (AST), not by importing anything.

``agent_core`` is pure: no I/O, clock, randomness, threads or event loop, and
no dependency on ``effects``. ``effects`` imports ``agent_core``, never the
reverse. Examples import only the packages' public doors.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "agent_core"

FORBIDDEN_IN_CORE = frozenset(
    {"effects", "asyncio", "time", "random", "uuid", "threading", "os", "socket", "logging", "pydantic"}
)
# A dynamic import would hide a dependency from this test.
DYNAMIC_IMPORTS = frozenset({"importlib", "__import__"})


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) for every import in ``path``; relative imports are skipped."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def dynamic_imports(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in DYNAMIC_IMPORTS:
            yield node.lineno, node.id


def top(module: str) -> str:
    return module.partition(".")[0]


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_the_import_scanner_sees_imports() -> None:
    # Guards the guard: a scanner that found nothing would pass every rule below.
    found = {top(m) for path in python_files(CORE) for _, m in imports(path)}
    assert {"msgspec", "immutables"} <= found


def test_agent_core_imports_nothing_impure() -> None:
    offending = [
        f"{where(path, line)} imports {module}"
        for path in python_files(CORE)
        for line, module in imports(path)
        if top(module) in FORBIDDEN_IN_CORE
    ]
    assert offending == [], (
        "agent_core must stay pure (no I/O, clock, randomness, threads, event loop, effects or pydantic); "
        "move this code to effects/ or pass the value in through an input:\n" + "\n".join(offending)
    )


def test_agent_core_has_no_dynamic_imports() -> None:
    offending = [
        f"{where(path, line)} uses {name}" for path in python_files(CORE) for line, name in dynamic_imports(path)
    ]
    assert offending == [], "agent_core imports statically, so this test can see every dependency:\n" + "\n".join(
        offending
    )


def test_relative_imports_stay_inside_agent_core() -> None:
    offending = []
    for path in python_files(CORE):
        depth = len(path.relative_to(CORE).parts) - 1  # 0 for agent_core/x.py
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > depth + 1:
                offending.append(f"{where(path, node.lineno)} climbs {node.level} levels out of the package")
    assert offending == []


def test_examples_import_only_the_public_doors() -> None:
    offending = [
        f"{where(path, line)} imports {module}"
        for path in python_files(ROOT / "examples")
        for line, module in imports(path)
        if top(module) in {"agent_core", "effects"} and any(part.startswith("_") for part in module.split("."))
    ]
    assert offending == [], "examples import only from the package roots (agent_core, effects):\n" + "\n".join(
        offending
    )
