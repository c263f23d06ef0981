"""JSON-Schema validation of config with one-line errors, and defaults filled from the schema."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    import jsonschema

# keywords that only annotate (jsonschema ignores them and every "x-…" keyword)
_ANNOTATIONS = frozenset({"default", "title", "description", "$schema", "$id", "$comment", "examples"})
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def surely_valid(value: Any, schema: Any) -> bool:
    """True only when ``value`` is valid against ``schema`` for certain, decided without
    jsonschema (a CLI call would pay ~0.1 s to import it for a config that is fine). It reads
    the keywords the suite's schemas use (type, enum, minimum/maximum and their exclusive forms,
    minLength/maxLength, properties, additionalProperties, required, items, uniqueItems) and is
    stricter than JSON Schema where that is simpler (an integer must be an int, an enum value of
    the same type); any other keyword, or any doubt, gives False and the caller asks jsonschema
    (``tests/core/test_schema.py`` checks it never accepts what jsonschema refuses)."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict):
        return False
    for key, want in schema.items():
        if key in _ANNOTATIONS or key.startswith("x-") or key in ("properties", "additionalProperties"):
            continue
        if key == "type":
            names = want if isinstance(want, list) else [want]
            if not any(
                n in _TYPES and isinstance(value, _TYPES[n]) and (n == "boolean") == isinstance(value, bool)
                for n in names
            ):
                return False
        elif key == "enum":
            if isinstance(value, dict | list) or not any(
                type(e) is type(value) and e == value for e in want if not isinstance(e, dict | list)
            ):
                return False
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if not isinstance(want, int | float) or isinstance(want, bool):
                return False
            if isinstance(value, int | float) and not isinstance(value, bool):
                ok = {
                    "minimum": value >= want,
                    "maximum": value <= want,
                    "exclusiveMinimum": value > want,
                    "exclusiveMaximum": value < want,
                }[key]
                if not ok:
                    return False
        elif key in ("minLength", "maxLength"):
            if isinstance(value, str) and not (
                len(value) >= want if key == "minLength" else len(value) <= want
            ):
                return False
        elif key == "required":
            if isinstance(value, dict) and not all(k in value for k in want):
                return False
        elif key == "items":
            if isinstance(value, list) and not all(surely_valid(v, want) for v in value):
                return False
        elif key == "uniqueItems":
            if want and isinstance(value, list):  # scalars only; 1, 1.0 and True count as one
                if not all(isinstance(v, str | int | float | type(None)) for v in value):
                    return False
                if len(set(value)) != len(value):
                    return False
        else:
            return False  # a keyword this reader does not know: ask jsonschema
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                if not surely_valid(v, props[k]):
                    return False
            elif extra is False or not surely_valid(v, extra):
                return False
    return True


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
    if surely_valid(value, schema):
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
