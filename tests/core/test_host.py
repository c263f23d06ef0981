from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from lifelong.errors import ConfigError, PluginError
from lifelong.host import BUILTIN_PLUGINS, HOOK_NAMES, Host, implemented_hooks, load_manifest
from lifelong.workspace import Workspace

MANIFEST = """\
id: {id}
description: test plugin {id}
hooks: [{hooks}]
config_schema:
  type: object
  additionalProperties: false
  properties:
    level: {{type: integer, minimum: 1, maximum: 5, default: 2}}
"""


@pytest.fixture
def make_plugin(write_plugin):
    def make(pid: str, body: str, hooks: str, manifest: str | bool | None = None):
        if manifest is None:
            manifest = MANIFEST.format(id=pid, hooks=hooks)
        return write_plugin(f"tp_{pid}", body, manifest=manifest)

    return make


def test_a_raising_plugin_does_not_stop_the_others(make_plugin, make_workspace) -> None:
    ws = make_workspace()
    bad = make_plugin(
        "bad",
        """
        @hookimpl
        def before_prompt_build(ctx, session):
            raise RuntimeError("boom")

        @hookimpl
        def before_message_write(ctx, candidate, existing):
            raise ValueError("broken gate")
        """,
        "before_prompt_build, before_message_write",
    )
    good = make_plugin(
        "good",
        """
        @hookimpl
        def before_prompt_build(ctx, session):
            return GateResult(status="ok", note="from good", prefix="P", source="good")

        @hookimpl
        def before_message_write(ctx, candidate, existing):
            return WriteDecision("warn", "similar fact exists")
        """,
        "before_prompt_build, before_message_write",
    )
    host = Host(ws, builtins=(), entry_points=False, extra_plugins=[good, bad])
    result = host.before_reply({"id": "s1"}, "hello")
    assert result.note == "from good" and result.prefix == "P"
    assert host.decide_write({"text": "x"}, []).action == "warn"
    assert [f["plugin"] for f in host.faults] == ["bad", "bad"]
    log = (ws.logs_dir / "bad.log").read_text()
    assert "RuntimeError: boom" in log and "Traceback" in log and "ValueError: broken gate" in log


def test_firstresult_stops_at_first_answer(make_plugin, make_workspace) -> None:
    a = make_plugin(
        "pa",
        """
        CALLS = []
        @hookimpl
        def retrieval_pre(ctx, request):
            CALLS.append("a")
            return ["from a"]
        """,
        "retrieval_pre",
    )
    b = make_plugin(
        "pb",
        """
        CALLS = []
        @hookimpl
        def retrieval_pre(ctx, request):
            CALLS.append("b")
            return None
        """,
        "retrieval_pre",
    )
    host = Host(make_workspace(), builtins=(), entry_points=False, extra_plugins=[a, b])
    # pluggy order: last registered first; b returns None, so a is asked and answers
    assert host.call("retrieval_pre", ctx=host.ctx, request={}) == [["from a"]]
    assert (a.CALLS, b.CALLS) == (["a"], ["b"])
    a.CALLS.clear()
    b.CALLS.clear()
    host2 = Host(make_workspace(), builtins=(), entry_points=False, extra_plugins=[b, a])
    assert host2.call_first("retrieval_pre", ctx=host2.ctx, request={}) == ["from a"]
    assert (a.CALLS, b.CALLS) == (["a"], [])  # a answered first: b is never asked


def test_missing_schema_refuses_with_clear_error(make_plugin, make_workspace) -> None:
    mod = make_plugin("noschema", "", "", manifest="id: noschema\ndescription: x\nhooks: []\n")
    with pytest.raises(
        PluginError, match=r"plugin 'noschema': plugin.yaml has no config_schema; refusing to load"
    ):
        Host(make_workspace(), builtins=(), entry_points=False, extra_plugins=[mod])
    nofile = make_plugin("nofile", "", "", manifest=False)
    with pytest.raises(PluginError, match="no plugin.yaml"):
        load_manifest(nofile)


def test_invalid_schema_refuses(make_plugin) -> None:
    mod = make_plugin(
        "badschema",
        "",
        "",
        manifest=(
            "id: badschema\nhooks: []\nconfig_schema:\n  type: object\n  properties:\n    x: {type: integer}\n"
        ),
    )
    with pytest.raises(PluginError, match="property 'x' has no default"):
        load_manifest(mod)
    mod2 = make_plugin(
        "badschema2",
        "",
        "",
        manifest=(
            "id: badschema2\nhooks: []\nconfig_schema:\n  type: object\n  properties:\n    x: {type: 12, default: 1}\n"
        ),
    )
    with pytest.raises(PluginError, match="not a valid JSON Schema"):
        load_manifest(mod2)


def test_invalid_config_value_is_one_line(make_plugin, make_workspace) -> None:
    mod = make_plugin("cfg", "", "")
    ws = make_workspace(config={"plugins": {"cfg": {"level": 9}}})
    with pytest.raises(ConfigError) as err:
        Host(ws, builtins=(), entry_points=False, extra_plugins=[mod])
    assert str(err.value) == "plugins.cfg.level: invalid value 9 (allowed: a number from 1 to 5)"
    ws2 = make_workspace(config={"plugins": {"cfg": {"levle": 2}}})
    with pytest.raises(ConfigError, match=r"plugins.cfg.levle: unknown key \(known keys: enabled, level\)"):
        Host(ws2, builtins=(), entry_points=False, extra_plugins=[mod])
    ws3 = make_workspace(config={"embedding": {"provider": "openai"}})
    with pytest.raises(
        ConfigError, match=r"embedding.provider: invalid value 'openai' \(allowed: one of 'local'"
    ):
        ws3.config  # noqa: B018


def test_config_defaults_and_disable(make_plugin, make_workspace) -> None:
    mod = make_plugin(
        "dflt",
        """
        @hookimpl
        def before_prompt_build(ctx, session):
            return GateResult(status="ok", note=str(ctx.config("dflt")["level"]))
        """,
        "before_prompt_build",
    )
    host = Host(make_workspace(), builtins=(), entry_points=False, extra_plugins=[mod])
    assert host.plugins["dflt"].config == {"level": 2, "enabled": True}
    assert host.before_reply({}, "x").note == "2"
    sys.modules.pop(mod.__name__)
    mod = importlib.import_module(mod.__name__)
    off = Host(
        make_workspace(config={"plugins": {"dflt": {"enabled": False}}}),
        builtins=(),
        entry_points=False,
        extra_plugins=[mod],
    )
    assert off.plugins["dflt"].status == "disabled"
    assert off.call("before_prompt_build", ctx=off.ctx, session={}) == []


def test_misspelled_hookimpl_fails_loudly(make_plugin, make_workspace) -> None:
    mod = make_plugin(
        "typo",
        """
        @hookimpl
        def before_prompt_biuld(ctx, session):
            return None
        """,
        "",
    )
    with pytest.raises(PluginError, match="typo"):
        Host(make_workspace(), builtins=(), entry_points=False, extra_plugins=[mod])


def test_unknown_hook_in_manifest(make_plugin) -> None:
    mod = make_plugin("unk", "", "on_everything")
    with pytest.raises(PluginError, match="unknown hook"):
        load_manifest(mod)


def test_builtin_manifests_match_implemented_hooks() -> None:
    host = Host(None, entry_points=False)
    available = [r for r in host.plugins.values() if r.status != "not_available"]
    assert available, "at least the recall plugin must be available"
    for record in available:
        assert sorted(record.hooks) == implemented_hooks(record.module), record.id
    assert [r for r in host.plugins] == list(BUILTIN_PLUGINS)


def test_every_hook_has_a_docstring() -> None:
    import lifelong.hookspecs as specs

    for name in HOOK_NAMES:
        assert (getattr(specs, name).__doc__ or "").strip(), name
    assert {
        "register_commands",
        "register_tools",
        "register_migrations",
        "on_files_changed",
        "retrieval_pre",
        "retrieval_post",
        "corpus_supplement",
        "before_prompt_build",
        "before_message_write",
        "before_compaction",
        "after_compaction",
        "dreaming_phase",
        "after_consolidation",
    } == set(HOOK_NAMES)


def test_tools_return_errors_not_exceptions(make_host) -> None:
    host = make_host({"MEMORY.md": "# M\n- fact\n"}, {"embedding": {"provider": "none"}})
    assert "unknown tool" in host.call_tool("nope", {})["error"]
    assert "missing required argument" in host.call_tool("memory_search", {})["error"]
    assert "unknown argument" in host.call_tool("memory_search", {"query": "x", "bogus": 1})["error"]


def test_not_available_plugins_are_listed_honestly() -> None:
    host = Host(None, entry_points=False)
    for record in host.plugins.values():
        if record.module is None:
            assert record.status == "not_available"


# --- layering -------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_never_imports_plugins() -> None:
    for path in (ROOT / "lifelong").rglob("*.py"):
        bad = {n for n in _imports(path) if n.split(".")[0] in ("lifelong_plugins", "plugins")}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_plugins_do_not_import_each_other() -> None:
    for plugin_dir in (ROOT / "plugins").iterdir():
        if not plugin_dir.is_dir() or plugin_dir.name.startswith("__"):
            continue
        for path in plugin_dir.rglob("*.py"):
            for name in _imports(path):
                parts = name.split(".")
                if parts[0] in ("lifelong_plugins", "plugins") and len(parts) > 1:
                    assert parts[1] == plugin_dir.name, f"{path.relative_to(ROOT)} imports {name}"


def test_workspace_fixture_is_real(make_workspace) -> None:
    ws = make_workspace({"memory/2026-01-01.md": "x"})
    assert isinstance(ws, Workspace) and (ws.root / "memory/2026-01-01.md").read_text() == "x"
