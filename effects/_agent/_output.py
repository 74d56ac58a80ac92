"""Structured output where the answer enters: the schema an output type gives, and the validator that judges
the model's answer.

An output type is a pydantic model (or anything pydantic's ``TypeAdapter``
takes whose schema is an object: a dataclass, a ``TypedDict``), validated by
pydantic; or a JSON Schema (a dict, or its JSON text), validated by the
``jsonschema`` package (the ``json-schema`` extra). Either way the schema, not
the type, goes into ``session-started``, and the verdict into the log: a
replay needs neither. A session resumed without its output type is validated
against the logged schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

import pydantic

from agent_core import MAX_OUTPUT_PROBLEMS, MAX_PROBLEM_CHARS, AgentState, OutputProblem, output_schema_problem

from .._extras import missing

OutputType = type[Any] | Mapping[str, Any] | str
"""What ``Agent(output_type=...)`` takes: a pydantic model (or a type pydantic validates), or a JSON Schema."""


class OutputValidator(Protocol):
    """Judges a model's answer against an output schema."""

    @property
    def schema(self) -> str:
        """The output schema, as the JSON text ``session-started`` carries."""
        ...

    def validate(self, text: str) -> str | tuple[OutputProblem, ...]:
        """The answer as canonical JSON text when it validates, else what was wrong with it, where."""
        ...


class PydanticOutput:
    """Validates with pydantic against a Python type; the output is the validated value dumped as JSON."""

    def __init__(self, output_type: type[Any]) -> None:
        try:
            self._adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(output_type)
            schema = self._adapter.json_schema()
        except pydantic.PydanticUserError as error:
            raise TypeError(
                f"expected output_type to be a pydantic model or a type pydantic can validate, "
                f"got {output_type!r}: {error}"
            ) from None
        self._schema = _checked(json.dumps(schema, separators=(",", ":"), ensure_ascii=False), output_type)

    @property
    def schema(self) -> str:
        """The type's JSON Schema (pydantic's), as JSON text."""
        return self._schema

    def validate(self, text: str) -> str | tuple[OutputProblem, ...]:
        """The validated value as JSON text, or pydantic's errors (each at its JSON path)."""
        try:
            value = self._adapter.validate_json(unfenced(text))
        except pydantic.ValidationError as error:
            return _bounded(
                OutputProblem(where=json_path(e["loc"]), what=e["msg"]) for e in error.errors(include_url=False)
            )
        return self._adapter.dump_json(value).decode()


class JsonSchemaOutput:
    """Validates with the ``jsonschema`` package against a JSON Schema (its draft from ``$schema``, else 2020-12)."""

    def __init__(self, schema: Mapping[str, Any] | str) -> None:
        text = schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        self._schema = _checked(text, "the JSON Schema")
        try:
            import jsonschema  # type: ignore[import-untyped]  # no typed release; only its validators are used
        except ImportError as error:
            raise missing("validating answers against a JSON Schema", "json-schema", error) from None
        decoded = json.loads(text)
        cls = jsonschema.validators.validator_for(decoded, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(decoded)
        except jsonschema.SchemaError as error:
            raise ValueError(
                f"expected output_schema to be a valid JSON Schema: {error.message} "
                f"(at {error.json_path} of the schema)"
            ) from None
        self._validator = cls(decoded)

    @property
    def schema(self) -> str:
        """The schema, as JSON text."""
        return self._schema

    def validate(self, text: str) -> str | tuple[OutputProblem, ...]:
        """The answer as compact JSON text, or the schema's violations (each at its JSON path)."""
        try:
            value = json.loads(unfenced(text))
        except ValueError as error:
            return (OutputProblem(where="$", what=f"Invalid JSON: {error}"),)
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
        if errors:
            return _bounded(OutputProblem(where=e.json_path, what=e.message) for e in errors)
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def output_validator(output_type: OutputType) -> PydanticOutput | JsonSchemaOutput:
    """The validator of ``output_type``: pydantic for a type, ``jsonschema`` for a JSON Schema (dict or text)."""
    if isinstance(output_type, (str, Mapping)):
        return JsonSchemaOutput(output_type)
    if isinstance(output_type, type) or getattr(output_type, "__origin__", None) is not None:
        return PydanticOutput(output_type)
    raise TypeError(
        f"expected output_type to be a pydantic model (or a type pydantic validates) or a JSON Schema "
        f"(a dict or its JSON text), got {type(output_type).__name__}"
    )


T = TypeVar("T")


class NoOutput(LookupError):
    """The last turn has no structured output to return: it failed, was cancelled, is still open, or the
    session asks for no output type."""


def loaded_output(state: AgentState, output_type: type[T]) -> T:
    """The last completed turn's validated output (``state.last_outcome.output``) as ``output_type``."""
    outcome = state.last_outcome
    if state.turn is not None or outcome is None:
        what = "a turn is still open" if state.turn is not None else "no turn has ended yet"
        raise NoOutput(f"expected a finished turn with a structured output, but {what}; await session.turn_done()")
    if outcome.kind != "completed":
        why = f"{outcome.reason}: {outcome.detail}" if outcome.detail else outcome.reason or outcome.kind
        raise NoOutput(f"the last turn {outcome.kind} ({why}), so it has no output; expected a completed turn")
    if not outcome.output:
        raise NoOutput(
            "the last turn completed without a structured output: the session asks for none; "
            "expected Agent(output_type=...) or AgentConfig(output_schema=...)"
        )
    value: T = _adapter(output_type).validate_json(outcome.output)
    return value


_adapters: dict[Any, pydantic.TypeAdapter[Any]] = {}


def _adapter(output_type: Any) -> pydantic.TypeAdapter[Any]:
    """pydantic's adapter of ``output_type``, built once per type (building one costs far more than a validation)."""
    adapter = _adapters.get(output_type)
    if adapter is None:
        adapter = _adapters[output_type] = pydantic.TypeAdapter(output_type)
    return adapter


def unfenced(text: str) -> str:
    """``text`` without surrounding whitespace and one Markdown code fence around it (```json ... ```),
    which models often add to a JSON answer."""
    stripped = text.strip()
    if len(stripped) < 6 or not (stripped.startswith("```") and stripped.endswith("```")):
        return stripped
    inner = stripped[3:-3]
    first, newline, rest = inner.partition("\n")
    if newline and (not first.strip() or first.strip().isalnum()):  # a language tag: ```json
        inner = rest
    return inner.strip()


def json_path(loc: Sequence[int | str]) -> str:
    """pydantic's error location as a JSON path: ``("cities", 0, "name")`` -> ``$.cities[0].name``."""
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _bounded(problems: Any) -> tuple[OutputProblem, ...]:
    """The first :data:`MAX_OUTPUT_PROBLEMS` problems, each field cut to :data:`MAX_PROBLEM_CHARS`."""
    kept: list[OutputProblem] = []
    for problem in problems:
        if len(kept) == MAX_OUTPUT_PROBLEMS:
            break
        kept.append(OutputProblem(where=_cut(problem.where), what=_cut(problem.what)))
    return tuple(kept)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_PROBLEM_CHARS else text[: MAX_PROBLEM_CHARS - 1] + "…"


def _checked(schema: str, what: object) -> str:
    problem = output_schema_problem(schema)
    if problem is not None:
        raise ValueError(f"output type {what!r}: {problem}")
    return schema
