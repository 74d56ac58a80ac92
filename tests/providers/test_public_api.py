"""``effects.providers`` has one public door: a sorted, complete ``__all__``, every name documented."""

from __future__ import annotations

import inspect
import types

import effects.providers as providers
import effects.testing


def test_all_is_sorted_and_complete() -> None:
    def order(name: str) -> tuple[int, str]:  # ruff's RUF022: CONSTANTS, Classes, functions
        return (0 if name.isupper() else 1 if name[:1].isupper() else 2), name

    bound = {n for n, v in vars(providers).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert providers.__all__ == sorted(providers.__all__, key=order)
    assert set(providers.__all__) == bound - {"annotations"}


def test_every_public_class_and_function_is_documented() -> None:
    undocumented = [
        name
        for name in providers.__all__
        if (inspect.isclass(obj := getattr(providers, name)) or inspect.isfunction(obj)) and not inspect.getdoc(obj)
    ]
    assert undocumented == []
    for cls in (providers.OpenAIModel, providers.AnthropicModel, providers.McpServer, effects.testing.FakeProviderServer):
        public = [m for n, m in vars(cls).items() if not n.startswith("_") and inspect.isfunction(m)]
        assert [m.__name__ for m in public if not m.__doc__] == []


def test_importing_the_package_imports_no_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, effects.providers; print(sorted({'openai', 'anthropic', 'mcp'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", "the SDKs are optional: import them when an adapter is built"
