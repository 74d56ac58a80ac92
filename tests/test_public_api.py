"""One public door per package: ``__all__`` is sorted and complete, and every public name is documented.

Classes and functions carry their own docstring; constants and type aliases
carry an attribute docstring (a string right after the assignment), which is
what documentation tools show for them.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import types
from pathlib import Path
from typing import Any

import pytest

import agent_core
import effects
import effects.protocols
import effects.providers
import effects.testing

PACKAGES = [agent_core, effects, effects.protocols, effects.providers, effects.testing]


def isort_key(name: str) -> tuple[int, str]:
    """The order ``ruff`` (RUF022) keeps ``__all__`` in: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return 0, name
    if name[:1].isupper():
        return 1, name
    return 2, name


def public_names(package: types.ModuleType) -> set[str]:
    """Names bound in the package root that are neither private nor submodules."""
    return {
        name
        for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"
    }


def attribute_docstrings(package: types.ModuleType) -> set[str]:
    """Module-level names followed by a string literal, in any module of ``package``."""
    documented: set[str] = set()
    folder = Path(package.__file__ or "").parent
    for path in folder.rglob("*.py"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for node, after in itertools.pairwise(body):
            if not (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)):
                continue
            if not isinstance(after.value.value, str):
                continue
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                documented.add(node.targets[0].id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                documented.add(node.target.id)
    return documented


def has_own_docstring(value: Any) -> bool:
    if inspect.isclass(value):
        return bool((vars(value).get("__doc__") or "").strip())
    return bool((getattr(value, "__doc__", None) or "").strip())


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_all_is_sorted(package: types.ModuleType) -> None:
    names = list(package.__all__)
    assert names == sorted(names, key=isort_key), "keep __all__ sorted: CONSTANTS, then Classes, then functions"
    assert len(set(names)) == len(names), "a name is listed twice in __all__"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_all_lists_exactly_the_public_names(package: types.ModuleType) -> None:
    listed = set(package.__all__)
    bound = public_names(package)
    assert sorted(bound - listed) == [], "public names missing from __all__ (add them, or prefix with _)"
    assert sorted(listed - bound) == [], "names in __all__ that the package does not define"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_every_public_name_has_a_docstring(package: types.ModuleType) -> None:
    attribute_docs = attribute_docstrings(package)
    undocumented = []
    for name in package.__all__:
        value = getattr(package, name)
        if inspect.isclass(value) or inspect.isroutine(value):
            if not has_own_docstring(value):
                undocumented.append(name)
        elif name not in attribute_docs:
            undocumented.append(name)
    assert undocumented == [], (
        f"document these public names of {package.__name__} (a docstring, or for a constant or alias "
        f"a string on the line after its assignment): {', '.join(undocumented)}"
    )


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.__name__)
def test_the_package_has_a_docstring(package: types.ModuleType) -> None:
    assert (package.__doc__ or "").strip()


def test_the_design_names_are_exported_from_agent_core() -> None:
    # The names the documented public API promises to users of agent_core.
    promised = {
        "AgentState", "AgentConfig", "ToolDefinition", "initial_state", "transition", "check", "InvalidInput",
        "Rejection", "effects_at", "llm_context", "phase", "check_invariants", "replay", "state_hash",
        "encode_input", "decode_input", "encode_state", "decode_state", "DecodeError", "input_json_schema",
        "CallLlm", "CallTool", "WaitUntil",
    }  # fmt: skip
    assert sorted(promised - set(agent_core.__all__)) == []


def test_every_input_kind_has_an_exported_class() -> None:
    exported = {
        getattr(agent_core, name).__struct_config__.tag
        for name in agent_core.__all__
        if inspect.isclass(getattr(agent_core, name)) and hasattr(getattr(agent_core, name), "__struct_config__")
    }
    assert set(agent_core.INPUT_TAGS) <= exported


def test_agent_core_testing_is_importable_on_its_own() -> None:
    # A public submodule users import directly (hypothesis strategies).
    module = importlib.import_module("agent_core.testing")
    assert (module.__doc__ or "").strip()
