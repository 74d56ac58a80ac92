"""The layers of ``effects``, checked on the source (AST): which part may import which, and no import cycle.

Bottom to top: the generic machine; the clock and the model protocol; tools
and the scripted model; the store (it knows ``agent_core`` and the machine's
journal, never the agent); the agent runtime (effects, sessions, resume);
observability (spans, metrics, conversations: projections of the log) and the
viewer over it; model adapters; test doubles; the protocols (AG-UI, A2A, MCP, over
the package's public names); the CLI. A part imports only parts below it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EFFECTS = ROOT / "effects"

# Each part of effects, and the parts it may import (besides agent_core and outside packages).
# Leaves any part may import: small helpers with no dependency inside effects.
LEAVES = frozenset({"_text", "_arguments", "_extras"})

ALLOWED: dict[str, frozenset[str]] = {
    "_text": frozenset(),
    "_arguments": frozenset(),
    "_extras": frozenset(),
    "_machine": frozenset(),
    "_clock": frozenset({"_machine"}),
    "_model": frozenset(),
    "_tools": frozenset({"_model", "_clock"}),
    "_scripted": frozenset({"_model", "_clock"}),
    "_store": frozenset({"_machine"}),
    "_money": frozenset({"_model"}),
    "_agent": frozenset({"_machine", "_clock", "_model", "_tools", "_store", "_money"}),
    "_observe": frozenset({"_machine", "_store", "_agent"}),
    "_ui": frozenset({"_observe", "_store"}),
    "demo": frozenset({"_scripted", "_tools", "_model", "_clock"}),
    "providers": frozenset({"_model", "_tools", "_clock", "_scripted", "demo"}),
    "testing": frozenset({"_agent", "_clock", "_scripted", "_model"}),
    "temporal": frozenset({"_machine", "_agent", "_clock", "_model", "_tools", "_store"}),
    # The protocols build on the package's public names only (its door).
    "protocols": frozenset({"__init__"}),
    "cli": frozenset(
        {
            "__init__",
            "_machine",
            "_clock",
            "_model",
            "_tools",
            "_scripted",
            "_store",
            "_agent",
            "_observe",
            "_ui",
            "demo",
            "providers",
            "temporal",
            "protocols",
        }
    ),
    "__init__": frozenset({"_machine", "_clock", "_model", "_tools", "_store", "_money", "_agent", "_observe", "_ui"}),
    "__main__": frozenset({"cli"}),
}


def modules() -> dict[str, Path]:
    """Dotted name -> file, for every module of effects."""
    found = {}
    for path in sorted(EFFECTS.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = ["effects", *path.relative_to(EFFECTS).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The effects modules ``name`` imports (relative imports resolved; ``from pkg import mod`` counted as mod)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # `from pkg import mod` imports the module; `from mod import name` imports mod.
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        else:
            continue
        yield from (t for t in targets if t in known and t != name)


def part(module: str) -> str:
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "__init__"


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def test_the_scanner_sees_the_layers() -> None:
    edges = graph()
    assert "effects._store" in edges["effects._agent._resume"]  # guards the guard
    assert {part(m) for m in edges} <= set(ALLOWED), "a new part of effects needs a row in ALLOWED"


def test_each_part_imports_only_the_parts_below_it() -> None:
    offending = sorted(
        f"{name} ({part(name)}) imports {target} ({part(target)})"
        for name, targets in graph().items()
        for target in targets
        if part(target) != part(name) and part(target) not in ALLOWED[part(name)] | LEAVES
    )
    assert offending == [], "effects' layers (see this test's docstring) are crossed:\n" + "\n".join(offending)


def test_effects_has_no_import_cycle() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == [], "import cycles in effects:\n" + "\n".join(cycles)


def test_no_import_reaches_into_another_package_s_private_module() -> None:
    """A module imports another package through its door (``__init__``), never one of its private modules.

    Within a package, siblings import each other freely; a sub-package's
    modules are reached through its own door.
    """
    known = modules()
    offending = []
    for name, targets in graph().items():
        package = name if known[name].name == "__init__.py" else name.rpartition(".")[0]
        for target in targets:
            inside = package.split(".")
            parts = target.split(".")
            common = 0
            while common < min(len(inside), len(parts)) and inside[common] == parts[common]:
                common += 1
            beyond = parts[common + 1 :]  # what comes after the package (or module) the importer may see
            if any(part.startswith("_") for part in beyond):
                offending.append(f"{name} imports {target}")
    assert offending == [], "import these through their package's door (its __init__):\n" + "\n".join(sorted(offending))
