"""The built-in tools' names that plugins call through ``ctx.call_tool`` are spelt once, in
lifelong.contracts; each must name a tool a built-in plugin really registers."""

from __future__ import annotations

import pytest

from lifelong import contracts
from lifelong.host import Host

NAMES = {
    name: getattr(contracts, name)
    for name in ("MEMORY_SEARCH", "MEMORY_GET", "MEMORY_INDEX", "MEMORY_WHY", "REMEMBER", "DREAM_NIGHT")
}


@pytest.mark.parametrize("constant", sorted(NAMES))
def test_each_tool_name_constant_is_a_registered_tool(constant: str) -> None:
    host = Host(None)
    assert NAMES[constant] in host.tools, f"contracts.{constant} = {NAMES[constant]!r} is no registered tool"


def test_an_unknown_name_is_an_error_result_not_an_exception() -> None:
    host = Host(None)
    result = host.ctx.call_tool("memory_serch", query="x")
    assert "unknown tool 'memory_serch'" in str(result["error"])
