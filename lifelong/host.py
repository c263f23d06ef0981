"""The plugin host: discovers plugins, validates their manifests and config, and calls hooks with
fault isolation.

Built-in plugins come from ``lifelong_plugins.<id>`` (a fixed list, in order); third-party ones
from the entry-point group ``lifelong``. Each plugin has a ``plugin.yaml`` beside its module (or a
``PLUGIN_MANIFEST`` dict attribute) with ``id``, ``description``, ``hooks`` and a JSON-Schema
``config_schema`` whose properties carry defaults.

The host never lets pluggy run a hook chain itself: it walks the implementations in pluggy's
order and calls each inside try/except, logging failures to ``.lifelong/logs/<plugin>.log``.
"""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.metadata
import logging
import threading
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy
import yaml

from . import clock, hookspecs
from .embeddings import Embedder, make_embedder
from .errors import ConfigError, PluginError
from .hookspecs import GateResult, WriteDecision
from .schema import apply_defaults, validate
from .store import Store
from .workspace import Workspace

log = logging.getLogger("lifelong.host")

BUILTIN_PLUGINS: tuple[str, ...] = (
    "recall",
    "gate",
    "dreaming",
    "wiki",
    "flush",
    "concepts",
    "task_focus",
    "supersede",
)
ENTRY_POINT_GROUP = "lifelong"
HOOK_NAMES: tuple[str, ...] = tuple(
    name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "lifelong_spec")
)
_DECISION_RANK = {"allow": 0, "warn": 1, "supersede": 2, "block": 3}


@dataclass
class PluginRecord:
    """One plugin the host knows about, loaded or not."""

    id: str
    status: str  # loaded | disabled | not_available
    description: str = ""
    hooks: list[str] = field(default_factory=list)
    source: str = "builtin"
    config: dict[str, Any] = field(default_factory=dict)
    schema: dict[str, Any] = field(default_factory=dict)
    module: ModuleType | None = None
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "enabled": self.status == "loaded",
            "description": self.description,
            "hooks": self.hooks,
            "source": self.source,
            "note": self.note,
        }


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[..., dict[str, Any]]
    plugin: str

    def schema(self) -> dict[str, Any]:
        """The OpenAI/litellm function-tool schema."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def load_manifest(module: ModuleType, expected_id: str | None = None) -> dict[str, Any]:
    """Read and check a plugin's manifest; PluginError names the plugin and the problem."""
    label = expected_id or module.__name__
    manifest = getattr(module, "PLUGIN_MANIFEST", None)
    if manifest is None:
        path = Path(module.__file__ or "").parent / "plugin.yaml"
        if not path.is_file():
            raise PluginError(f"plugin {label!r}: no plugin.yaml beside {module.__name__}; refusing to load")
        try:
            manifest = yaml.safe_load(path.read_text("utf-8"))
        except yaml.YAMLError as exc:
            raise PluginError(f"plugin {label!r}: plugin.yaml is not valid YAML ({exc})") from exc
    if not isinstance(manifest, dict) or not manifest.get("id"):
        raise PluginError(f"plugin {label!r}: manifest needs an 'id'")
    pid = manifest["id"]
    if expected_id and pid != expected_id:
        raise PluginError(f"plugin {label!r}: manifest id is {pid!r}")
    schema = manifest.get("config_schema")
    if not isinstance(schema, dict) or not schema:
        raise PluginError(f"plugin {pid!r}: plugin.yaml has no config_schema; refusing to load")
    if schema.get("type") != "object" or not isinstance(schema.get("properties", {}), dict):
        raise PluginError(
            f"plugin {pid!r}: config_schema must be a JSON Schema of type object with properties"
        )
    try:
        import jsonschema

        jsonschema.Draft202012Validator.check_schema(schema)
    except Exception as exc:
        raise PluginError(
            f"plugin {pid!r}: config_schema is not a valid JSON Schema ({str(exc).splitlines()[0]})"
        ) from exc
    for key, prop in schema.get("properties", {}).items():
        if isinstance(prop, dict) and "default" not in prop and key != "enabled":
            raise PluginError(f"plugin {pid!r}: config_schema property {key!r} has no default")
    hooks = manifest.get("hooks") or []
    unknown = [h for h in hooks if h not in HOOK_NAMES]
    if unknown:
        raise PluginError(f"plugin {pid!r}: unknown hook(s) in manifest: {', '.join(unknown)}")
    return manifest


def _with_enabled(schema: dict[str, Any]) -> dict[str, Any]:
    props = dict(schema.get("properties", {}))
    props.setdefault("enabled", {"type": "boolean", "default": True})
    return {**schema, "properties": props}


def implemented_hooks(module: ModuleType) -> list[str]:
    """The hook names a plugin module really implements (functions marked with @hookimpl)."""
    return sorted(
        name
        for name in dir(module)
        if name in HOOK_NAMES and getattr(getattr(module, name), "lifelong_impl", None) is not None
    )


class Context:
    """What every hook gets as ``ctx``: workspace, config, store, embedder, tools, clock."""

    def __init__(self, host: Host):
        self.host = host
        self.state: dict[str, Any] = {}

    @property
    def workspace(self) -> Workspace:
        if self.host.workspace is None:
            raise PluginError("this call needs a workspace (pass --workspace DIR)")
        return self.host.workspace

    def now(self) -> dt.datetime:
        return clock.now(self.workspace.timezone)

    def config(self, plugin_id: str) -> dict[str, Any]:
        return self.host.plugin_config(plugin_id)

    @property
    def store(self) -> Store:
        return self.host.store

    @property
    def embedder(self) -> Embedder | None:
        return self.host.embedder

    def call_tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        return self.host.call_tool(name, arguments)

    def hook(self, name: str, **kwargs: Any) -> list[Any]:
        return self.host.call(name, **kwargs)

    def first(self, name: str, **kwargs: Any) -> Any:
        return self.host.call_first(name, **kwargs)

    def log(self, plugin_id: str, message: str) -> None:
        self.host.log_plugin(plugin_id, message)


class Host:
    """Load plugins for a workspace and call their hooks."""

    def __init__(
        self,
        workspace: Workspace | None,
        *,
        builtins: Iterable[str] | None = None,
        extra_plugins: Iterable[ModuleType] = (),
        entry_points: bool = True,
    ):
        self.workspace = workspace
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.plugins: dict[str, PluginRecord] = {}
        self.faults: list[dict[str, Any]] = []
        self.tools: dict[str, Tool] = {}
        self.migrations: list[Any] = []
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._embedder_made = False
        self._lock = threading.RLock()
        self.ctx = Context(self)
        for pid in BUILTIN_PLUGINS if builtins is None else builtins:
            self._load_builtin(pid)
        if entry_points:
            for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
                try:
                    module = ep.load()
                except Exception as exc:
                    raise PluginError(f"plugin entry point {ep.name!r} failed to import: {exc}") from exc
                self.add_plugin(module, source="entrypoint")
        for module in extra_plugins:
            self.add_plugin(module, source="explicit")
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            name = self.pm.get_name(exc.plugin) if getattr(exc, "plugin", None) is not None else "?"
            raise PluginError(f"plugin {name!r}: {exc}") from exc
        self.call("register_tools", register=self._register_tool)
        self.call("register_migrations", register=self.migrations.append)

    # loading --------------------------------------------------------------------------------
    def _load_builtin(self, pid: str) -> None:
        try:
            module = importlib.import_module(f"lifelong_plugins.{pid}")
        except ModuleNotFoundError as exc:
            if exc.name != f"lifelong_plugins.{pid}":
                raise
            self.plugins[pid] = PluginRecord(pid, "not_available", note="not yet implemented in this version")
            return
        self.add_plugin(module, source="builtin", expected_id=pid)

    def add_plugin(
        self, module: ModuleType, *, source: str = "explicit", expected_id: str | None = None
    ) -> None:
        manifest = load_manifest(module, expected_id)
        pid = manifest["id"]
        if pid in self.plugins and self.plugins[pid].status != "not_available":
            raise PluginError(f"plugin {pid!r} is registered twice")
        schema = _with_enabled(manifest["config_schema"])
        raw = self.workspace.plugin_config(pid) if self.workspace else {}
        validate(raw, schema, where=f"plugins.{pid}")
        config = apply_defaults(raw, schema)
        record = PluginRecord(
            pid,
            "loaded" if config.get("enabled", True) else "disabled",
            description=str(manifest.get("description", "")).strip(),
            hooks=list(manifest.get("hooks") or []),
            source=source,
            config=config,
            schema=schema,
            module=module,
        )
        self.plugins[pid] = record
        if record.status == "loaded":
            self.pm.register(module, name=pid)

    def plugin_config(self, plugin_id: str) -> dict[str, Any]:
        record = self.plugins.get(plugin_id)
        if record is None or record.status == "not_available":
            raise ConfigError(f"plugin {plugin_id!r} is not available")
        return record.config

    def enabled(self, plugin_id: str) -> bool:
        record = self.plugins.get(plugin_id)
        return record is not None and record.status == "loaded"

    # hooks ----------------------------------------------------------------------------------
    def _impls(self, name: str) -> list[Any]:
        caller = getattr(self.pm.hook, name)
        return list(reversed(caller.get_hookimpls()))  # pluggy's call order

    def call(self, hook: str, **kwargs: Any) -> list[Any]:
        """Call every implementation of ``hook``; return their non-None results in call order.
        An implementation that raises is logged and skipped. firstresult hooks stop at the first
        non-None result."""
        caller = getattr(self.pm.hook, hook)
        firstresult = bool(caller.spec and caller.spec.opts.get("firstresult"))
        results: list[Any] = []
        for impl in self._impls(hook):
            if impl.hookwrapper or impl.wrapper:
                raise PluginError(f"plugin {impl.plugin_name!r}: hook wrappers are not supported ({hook})")
            args = {name: kwargs[name] for name in impl.argnames if name in kwargs}
            missing = [name for name in impl.argnames if name not in kwargs]
            if missing:
                raise PluginError(f"hook {hook} called without {', '.join(missing)}")
            try:
                result = impl.function(**args)
            except Exception as exc:
                self._fault(impl.plugin_name, hook, exc)
                continue
            if result is not None:
                results.append(result)
                if firstresult:
                    break
        return results

    def call_first(self, hook: str, **kwargs: Any) -> Any:
        results = self.call(hook, **kwargs)
        return results[0] if results else None

    def _fault(self, plugin: str, hook: str, exc: BaseException) -> None:
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        self.faults.append({"plugin": plugin, "hook": hook, "error": f"{type(exc).__name__}: {exc}"})
        self.log_plugin(plugin, f"hook {hook} raised {type(exc).__name__}: {exc}\n{tb}")

    def log_plugin(self, plugin: str, message: str) -> None:
        line = f"{clock.now().isoformat(timespec='seconds')} {message.rstrip()}\n"
        if self.workspace is None:
            log.warning("[%s] %s", plugin, message)
            return
        try:
            self.workspace.logs_dir.mkdir(parents=True, exist_ok=True)
            with open(self.workspace.logs_dir / f"{plugin}.log", "a", encoding="utf-8") as fh:
                fh.write(line)
        except OSError:  # a read-only workspace must not break the caller
            log.warning("[%s] %s", plugin, message)

    # tools ----------------------------------------------------------------------------------
    def _register_tool(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        handler: Callable[..., dict[str, Any]],
        plugin: str = "",
    ) -> None:
        if name in self.tools:
            raise PluginError(f"tool {name!r} registered twice")
        self.tools[name] = Tool(name, description, parameters, handler, plugin)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run an agent tool. Bad arguments and failures come back as ``{"error": ...}``."""
        tool = self.tools.get(name)
        if tool is None:
            return {"error": f"unknown tool {name!r}; available: {', '.join(sorted(self.tools)) or 'none'}"}
        allowed = set(tool.parameters.get("properties", {}))
        unknown = sorted(set(arguments) - allowed)
        if unknown:
            return {"error": f"{name}: unknown argument(s) {', '.join(unknown)}"}
        missing = [k for k in tool.parameters.get("required", []) if k not in arguments]
        if missing:
            return {"error": f"{name}: missing required argument(s) {', '.join(missing)}"}
        try:
            return tool.handler(self.ctx, **arguments)
        except Exception as exc:
            self._fault(tool.plugin or name, f"tool:{name}", exc)
            return {"error": f"{name} failed: {type(exc).__name__}: {exc}"}

    # resources ------------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        with self._lock:
            if self._store is None:
                if self.workspace is None:
                    raise PluginError("the index needs a workspace")
                self.workspace.ensure_state()
                store = Store(self.workspace.index_path)
                store.migrate(self.migrations)
                self._store = store
            return self._store

    @property
    def embedder(self) -> Embedder | None:
        with self._lock:
            if not self._embedder_made:
                config = self.workspace.config.get("embedding", {}) if self.workspace else {}
                self._embedder = make_embedder(config)
                self._embedder_made = True
            return self._embedder

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # conveniences over hooks ----------------------------------------------------------------
    def before_reply(self, session: dict[str, Any], message: str) -> GateResult:
        """Run ``before_prompt_build`` for one reply. ``session`` describes the chat (id, type,
        recent messages…); ``message`` is the latest user message."""
        session = {**session, "message": message}
        results = [
            r
            for r in self.call("before_prompt_build", ctx=self.ctx, session=session)
            if isinstance(r, GateResult)
        ]
        if not results:
            return GateResult(status="disabled" if not self.enabled("gate") else "failed")
        if len(results) == 1:
            return results[0]
        prefix = "\n\n".join(r.prefix for r in results if r.prefix)
        best = next((r for r in results if r.prefix), results[0])
        return GateResult(
            best.status,
            best.note,
            prefix,
            max(r.elapsed_ms for r in results),
            tuple(c for r in results for c in r.citations),
            best.source,
        )

    def decide_write(self, candidate: dict[str, Any], existing: list[Any]) -> WriteDecision:
        """The strictest ``before_message_write`` decision (allow when nobody objects)."""
        decisions = [
            d
            for d in self.call("before_message_write", ctx=self.ctx, candidate=candidate, existing=existing)
            if isinstance(d, WriteDecision)
        ]
        if not decisions:
            return WriteDecision("allow")
        return max(decisions, key=lambda d: _DECISION_RANK.get(d.action, 0))
