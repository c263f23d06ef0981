"""JSON-Schema validation of config with one-line errors, and defaults filled from the schema."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    import jsonschema

# keywords that put no constraint on an empty object: {} is valid against a schema holding only
# these, with no validator (jsonschema costs a CLI call ~0.1 s to import)
_SILENT_ON_EMPTY = frozenset(
    {"type", "properties", "additionalProperties", "patternProperties", "propertyNames", "default"}
    | {"title", "description", "$schema", "$id", "$comment", "examples"}
)


def _allowed(error: jsonschema.ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    v = error.validator
    if v == "enum":
        return "one of " + ", ".join(repr(x) for x in schema.get("enum", []))
    if v == "type":
        t = schema.get("type")
        return f"type {' or '.join(t) if isinstance(t, list) else t}"
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if lo is not None and hi is not None:
            return f"a number from {lo} to {hi}"
        return f"{v} {error.validator_value}"
    if v == "additionalProperties":
        return "known keys: " + ", ".join(sorted(schema.get("properties", {})))
    return f"{v} {error.validator_value!r}"


def describe_error(value: Any, schema: dict[str, Any], *, where: str = "") -> str | None:
    """The first way ``value`` breaks ``schema``, as one line naming the key, the value and what
    is allowed; None when it is valid."""
    if value == {} and schema.get("type", "object") == "object" and set(schema) <= _SILENT_ON_EMPTY:
        return None
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: (len(e.path), list(map(str, e.path))))
    if not errors:
        return None
    err = errors[0]
    path = ".".join(str(p) for p in err.path)
    key = ".".join(p for p in (where, path) if p) or "(top level)"
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        key = ".".join(p for p in (key if key != "(top level)" else "", extra[0] if extra else "") if p)
        return f"{key}: unknown key ({_allowed(err)})"
    if err.validator == "required":
        return f"{key}: {err.message}"
    return f"{key}: invalid value {err.instance!r} (allowed: {_allowed(err)})"


def validate(value: Any, schema: dict[str, Any], *, where: str) -> None:
    """Raise ConfigError naming the key, the value and what is allowed."""
    problem = describe_error(value, schema, where=where)
    if problem:
        raise ConfigError(problem)


def apply_defaults(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``value`` with every missing property that has a default filled in, recursively."""
    result = copy.deepcopy(value)
    for key, sub in schema.get("properties", {}).items():
        if key not in result and "default" in sub:
            result[key] = copy.deepcopy(sub["default"])
        if isinstance(result.get(key), dict) and sub.get("type") == "object":
            result[key] = apply_defaults(result[key], sub)
    return result
