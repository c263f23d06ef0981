from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from lifelong.contracts import WriteCandidate
from lifelong.errors import ConfigError, PluginError
from lifelong.host import HOOK_NAMES, Host, implemented_hooks, is_builtin, load_manifest, plugin_entry_points
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
    assert host.decide_write(WriteCandidate("x", "MEMORY.md", "test"), []).action == "warn"
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
    host = Host(make_workspace(), builtins=(), entry_points=False, extra_plugins=[b, a])
    # same order (100): by id, so "pa" is asked first, answers, and "pb" is never asked
    assert host.call("retrieval_pre", ctx=host.ctx, request={}) == [["from a"]]
    assert (a.CALLS, b.CALLS) == (["a"], [])
    a.CALLS.clear()
    late = MANIFEST.format(id="pa", hooks="retrieval_pre") + "order: 150\n"
    a_late = make_plugin(
        "pa2",
        "CALLS = []\n@hookimpl\ndef retrieval_pre(ctx, request):\n    CALLS.append('a')\n    return ['from a']\n",
        "retrieval_pre",
        manifest=late,
    )
    host2 = Host(make_workspace(), builtins=(), entry_points=False, extra_plugins=[a_late, b])
    assert host2.call_first("retrieval_pre", ctx=host2.ctx, request={}) == ["from a"]
    assert (a_late.CALLS, b.CALLS) == (["a"], ["b"])  # b (order 100) first returns None, then a


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


def test_every_builtin_manifest_has_a_valid_json_schema() -> None:
    """The host skips the meta-schema check for built-in plugins (it costs every CLI call the
    jsonschema import): this is where their schemas are checked."""
    for ep in plugin_entry_points():
        if is_builtin(ep):
            load_manifest(ep.load(), ep.name, check_schema=True)


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
        Host(ws3)  # no installed plugin serves it (each provider's plugin checks its own section)


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
    builtins = sorted(ep.name for ep in plugin_entry_points() if is_builtin(ep))
    assert "recall" in builtins and sorted(host.plugins) == builtins
    for record in host.plugins.values():
        assert record.source == "builtin"
        assert sorted(record.hooks) == implemented_hooks(record.module), record.id
    orders = [(r.order, r.id) for r in host.plugins.values()]
    assert orders == sorted(orders)


def test_hooks_run_in_plugin_order(make_plugin, make_workspace) -> None:
    body = """
        CALLS = []
        @hookimpl
        def on_files_changed(ctx, changes):
            CALLS.append(__name__)
        """
    late = make_plugin(
        "late",
        body,
        "on_files_changed",
        manifest=MANIFEST.format(id="late", hooks="on_files_changed") + "order: 300\n",
    )
    early = make_plugin(
        "early",
        body,
        "on_files_changed",
        manifest=MANIFEST.format(id="early", hooks="on_files_changed") + "order: 5\n",
    )
    host = Host(make_workspace(), builtins=(), entry_points=False, extra_plugins=[late, early])
    assert host.implementers("on_files_changed") == ["early", "late"]
    host.call("on_files_changed", ctx=host.ctx, changes=None)
    assert late.CALLS == ["tp_late"] and early.CALLS == ["tp_early"]
    assert list(host.plugins) == ["early", "late"]


def test_unknown_builtin_name_is_refused(make_workspace) -> None:
    with pytest.raises(PluginError, match="no built-in plugin named 'recal'"):
        Host(make_workspace(), builtins=("recal",), entry_points=False)


def test_configuring_a_plugin_that_is_not_installed_is_refused(make_workspace) -> None:
    with pytest.raises(ConfigError, match=r"plugins\.recal: no such plugin"):
        Host(make_workspace(config={"plugins": {"recal": {}}}))
    # a host that loads only some plugins cannot tell a typo from a plugin it did not load
    Host(make_workspace(config={"plugins": {"recal": {}}}), builtins=("recall",), entry_points=False)


def test_every_hook_has_a_docstring() -> None:
    import lifelong.hookspecs as specs

    for name in HOOK_NAMES:
        assert (getattr(specs, name).__doc__ or "").strip(), name
    assert {
        "register_commands",
        "register_tools",
        "register_migrations",
        "provide_embedder",
        "provide_recall_store",
        "status_report",
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
    bad_type = host.call_tool("memory_search", {"query": "x", "max_results": "many"})["error"]
    assert bad_type == "memory_search: max_results: invalid value 'many' (allowed: type integer)"
    assert (
        "max_results: invalid value 0"
        in host.call_tool("memory_search", {"query": "x", "max_results": 0})["error"]
    )
    assert "arguments must be an object" in host.call_tool("memory_search", ["x"])["error"]


# --- layering -------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


DYNAMIC_IMPORTERS = {"import_module", "__import__", "find_spec", "spec_from_file_location", "run_module"}
PACKAGES_ABOVE_THE_CORE = ("lifelong_plugins", "plugins", "lifelong_evals", "evals")


def _imports(path: Path) -> set[str]:
    """Every module a file imports: import statements, and the string literals handed to
    importlib.import_module / __import__ / find_spec / runpy (dynamic imports), including
    f-strings' constant parts."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in DYNAMIC_IMPORTERS and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.add(arg.value)
                elif isinstance(arg, ast.JoinedStr):
                    names.add("".join(v.value for v in arg.values if isinstance(v, ast.Constant)))
    return names


def _mentions(path: Path) -> set[str]:
    """String constants in a file that name a package above the core (an entry-point string or a
    module path built at run time is an import too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for pkg in ("lifelong_plugins", "lifelong_evals"):
                if pkg in node.value:
                    found.add(node.value)
    return found


def test_core_never_imports_plugins_or_the_eval_harness() -> None:
    for path in (ROOT / "lifelong").rglob("*.py"):
        bad = {n for n in _imports(path) if n.split(".")[0] in PACKAGES_ABOVE_THE_CORE}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
        assert not _mentions(path), f"{path.relative_to(ROOT)} names {_mentions(path)}"


def test_the_layering_check_sees_dynamic_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import importlib\n"
        "def load(pid):\n"
        "    importlib.import_module(f'lifelong_plugins.{pid}')\n"
        "    __import__('lifelong_evals.harness')\n"
    )
    assert {"lifelong_plugins.", "lifelong_evals.harness"} <= _imports(probe)
    assert _mentions(probe) == {"lifelong_plugins.", "lifelong_evals.harness"}


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
