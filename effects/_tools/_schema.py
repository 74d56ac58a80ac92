"""The JSON schema a tool offers the model, and the pydantic model that validates its arguments.

Built once, when the tool is declared. Two shapes are understood:

* named parameters with annotations (``def add(a: int, b: int = 0)``): each
  becomes a property, its docstring line the property's description;
* a single parameter annotated with a pydantic model (``def search(q: Query)``):
  the model's own schema is the tool's schema.

A parameter named ``tool_call_id`` receives the call's id (an idempotency key)
and is never part of the schema.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

CALL_ID_PARAMETER = "tool_call_id"
"""A tool parameter with this name receives the tool call's id instead of a model argument."""


class Signature:
    """What calling a tool needs: the validating model, the schema, and how to pass arguments."""

    def __init__(self, fn: Callable[..., Any], name: str, param_docs: dict[str, str]) -> None:
        parameters = inspect.signature(fn).parameters
        try:
            hints = get_type_hints(fn, include_extras=True)
        except NameError as error:
            raise TypeError(
                f"tool {name!r}: cannot resolve the annotation {error.name!r}; "
                "expected annotations importable from the function's module (define models at module level)"
            ) from error
        for parameter in parameters.values():
            if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TypeError(
                    f"tool {name!r}: parameter {parameter.name!r} is variadic; "
                    "expected named parameters (or one pydantic model), since the model sends named JSON arguments"
                )
        self.takes_call_id = CALL_ID_PARAMETER in parameters
        names = [p for p in parameters if p != CALL_ID_PARAMETER]
        model_param = _single_model_parameter(names, hints)
        self.model_parameter = model_param
        if model_param is not None:
            self.model: type[BaseModel] = hints[model_param]
        else:
            fields: dict[str, Any] = {}
            for param_name in names:
                parameter = parameters[param_name]
                default = ... if parameter.default is inspect.Parameter.empty else parameter.default
                fields[param_name] = (
                    hints.get(param_name, Any),
                    Field(default, description=param_docs.get(param_name)),
                )
            self.model = create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
        self.field_names = tuple(self.model.model_fields)
        self.schema = strip_titles(self.model.model_json_schema())

    def arguments(self, validated: BaseModel, tool_call_id: str) -> dict[str, Any]:
        """The keyword arguments to call the tool with."""
        if self.model_parameter is not None:
            kwargs: dict[str, Any] = {self.model_parameter: validated}
        else:
            kwargs = {}
            for name in self.field_names:  # a loop: on 3.11 a comprehension here would make a cell on every call
                kwargs[name] = getattr(validated, name)
        if self.takes_call_id:
            kwargs[CALL_ID_PARAMETER] = tool_call_id
        return kwargs


def _single_model_parameter(names: list[str], hints: dict[str, Any]) -> str | None:
    if len(names) != 1:
        return None
    hint = hints.get(names[0])
    return names[0] if isinstance(hint, type) and issubclass(hint, BaseModel) else None


# Keys whose value is a map of name -> schema, or a schema, or a list of schemas.
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")


def strip_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema without pydantic's generated ``title`` keys: they repeat the names and cost tokens.

    Only schema objects lose their title; a *property* named ``title`` stays.
    """
    out = {key: value for key, value in schema.items() if key != "title" or not isinstance(value, str)}
    for key in _SCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {name: strip_titles(sub) if isinstance(sub, dict) else sub for name, sub in out[key].items()}
    for key in _SCHEMA_VALUES:
        if isinstance(out.get(key), dict):
            out[key] = strip_titles(out[key])
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [strip_titles(sub) if isinstance(sub, dict) else sub for sub in out[key]]
    return out


def describe_parameters(schema: dict[str, Any]) -> str:
    """A one-line summary of a schema's parameters for error messages: ``a: integer (required), b: string``."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return "no arguments ({})"
    required = set(schema.get("required", ()))
    parts = []
    for name, sub in properties.items():
        kind = _type_name(sub) if isinstance(sub, dict) else "any"
        parts.append(f"{name}: {kind}" + (" (required)" if name in required else ""))
    return ", ".join(parts)


def _type_name(schema: dict[str, Any]) -> str:
    if "type" in schema:
        return str(schema["type"])
    if "$ref" in schema:
        return "object"
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        return " or ".join(_type_name(o) for o in options if isinstance(o, dict))
    return "any"
