"""Issue 15 (what a new user trips on): the recall items 8, 12, 16, 17, 18 and wiki/reports."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from click.testing import CliRunner
from lifelong_plugins.recall import service

from lifelong.cli import cli


def schema_defaults() -> dict[str, object]:
    manifest = yaml.safe_load((Path(service.__file__).parent / "plugin.yaml").read_text("utf-8"))
    return {k: p["default"] for k, p in manifest["config_schema"]["properties"].items()}


# item 12 ----------------------------------------------------------------------------------------
def test_every_default_in_the_tool_schema_is_the_config_schema_default() -> None:
    defaults = schema_defaults()
    checked = set()
    for params in (service.SEARCH_PARAMETERS, service.GET_PARAMETERS):
        for name, prop in params["properties"].items():
            if name not in defaults:  # e.g. memory_get's from: always line 1, not configurable
                continue
            for value in re.findall(r"Default:? ([0-9][0-9.]*[0-9]|[0-9])", prop.get("description", "")):
                assert value == str(defaults[name]), (name, value, defaults[name])
                checked.add(name)
            for bound in ("minimum", "maximum"):
                assert prop.get(bound) == yaml_bound(name, bound), (name, bound)
    assert {"min_score", "max_results"} <= checked


def yaml_bound(name: str, bound: str) -> object:
    manifest = yaml.safe_load((Path(service.__file__).parent / "plugin.yaml").read_text("utf-8"))
    return manifest["config_schema"]["properties"][name].get(bound)


def test_every_default_in_search_and_get_help_is_the_config_schema_default(tmp_path: Path) -> None:
    defaults = schema_defaults()
    runner = CliRunner()
    for command, options in (
        ("search", {"--min-score": "min_score", "--max-results": "max_results"}),
        ("get", {"--lines": "get_max_lines"}),
    ):
        out = runner.invoke(cli, ["--workspace", str(tmp_path), command, "--help"], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        text = " ".join(out.output.split())
        for flag, key in options.items():
            # the option's help text, up to the next option
            m = re.search(re.escape(flag) + r" [A-Z]+ (.*?)(?= -{1,2}[a-z]|$)", text)
            assert m, (flag, text)
            numbers = re.findall(r"(?:default|at most):? ([0-9][0-9.]*[0-9]|[0-9])", m.group(1))
            assert numbers == [str(defaults[key])], (flag, m.group(1), defaults[key])
