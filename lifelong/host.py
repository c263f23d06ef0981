"""The plugin host: discovers plugins, validates their manifests and config, and calls hooks with
fault isolation.

Every plugin, built-in or not, is an entry point of group ``lifelong`` (the built-in ones are
declared in this distribution's pyproject.toml), so the core names no plugin. Each plugin has a
``plugin.yaml`` beside its module (or a ``PLUGIN_MANIFEST`` dict attribute) with ``id``,
``description``, ``hooks``, an optional ``order`` (default 100) and a JSON-Schema
``config_schema`` whose properties carry defaults. Each plugin validates its own config: its
``plugins.<id>`` section against ``config_schema``, and a plugin serving embedding providers
declares them with the schema of the top-level ``embedding`` section for them (manifest key
``embedding: {providers: [...], config_schema: {...}}``), so the core names no provider.

The host never lets pluggy run a hook chain itself: it calls the implementations in ascending
plugin ``order`` (ties by id), each inside try/except, logging failures to
``.lifelong/logs/<plugin>.log``.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import hashlib
import importlib
import importlib.metadata
import logging
import os
import threading
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pluggy
import yaml

from . import clock, hookspecs, llm
from .contracts import (
    DECISION_RANK,
    Embedder,
    FlushResult,
    GateResult,
    JSONObject,
    Message,
    PluginContext,
    RecallStore,
    RelatedFact,
    Session,
    ToolHandler,
    WriteCandidate,
    WriteDecision,
)
from .errors import ConfigError, InputError, PluginError
from .schema import apply_defaults, describe_error, validate
from .workspace import Workspace

if TYPE_CHECKING:
    from .store import Store

log = logging.getLogger("lifelong.host")

ENTRY_POINT_GROUP = "lifelong"
DISTRIBUTION = "lifelong"  # plugins of this distribution are the built-in ones
DEFAULT_ORDER = 100
HOOK_NAMES: tuple[str, ...] = tuple(
    name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "lifelong_spec")
)


@functools.lru_cache(maxsize=1)
def installed_entry_points() -> importlib.metadata.EntryPoints:
    """Every installed entry point, read once per process: each read scans the metadata of every
    installed distribution (20-50 ms), and a CLI call needs the plugins' twice and the extra
    commands' once."""
    eps = importlib.metadata.entry_points()
    if isinstance(eps, importlib.metadata.EntryPoints):  # Python 3.12 and later
        return eps
    # Python 3.11: a (deprecated) dict of EntryPoints by group, which .select() would return as is
    return importlib.metadata.EntryPoints(ep for group in eps.values() for ep in group)


def plugin_entry_points() -> list[importlib.metadata.EntryPoint]:
    """The installed plugins: entry points of group ``lifelong`` (the built-in ones are this
    distribution's own, declared in its pyproject.toml)."""
    return sorted(installed_entry_points().select(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def is_builtin(ep: importlib.metadata.EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    return dist is not None and _distribution_name(dist) == DISTRIBUTION


@functools.lru_cache(maxsize=64)
def _distribution_name(dist: importlib.metadata.Distribution) -> str:
    """A distribution's name, lower case. ``dist.name`` parses its METADATA file on every read
    (~1.5 ms); the entry points of one distribution share its object, so this parses it once."""
    return (dist.name or "").lower()


@dataclass
class PluginRecord:
    """One installed plugin, loaded or disabled by config."""

    id: str
    status: str  # loaded | disabled
    description: str = ""
    hooks: list[str] = field(default_factory=list)
    source: str = "builtin"
    order: int = DEFAULT_ORDER
    config: dict[str, Any] = field(default_factory=dict)
    schema: dict[str, Any] = field(default_factory=dict)
    module: ModuleType | None = None
    note: str = ""
    # the embedding providers this plugin serves and the schema of the `embedding` section for them
    embedding_providers: tuple[str, ...] = ()
    embedding_schema: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> JSONObject:
        return {
            "id": self.id,
            "status": self.status,
            "enabled": self.status == "loaded",
            "description": self.description,
            "hooks": list(self.hooks),
            "source": self.source,
            "order": self.order,
            "note": self.note,
        }


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # a JSON Schema, read by key
    handler: ToolHandler
    plugin: str
    annotations: JSONObject | None = None
    agent: bool = True  # False: a service for other plugins (ctx.call_tool), never offered to a model

    def public_parameters(self) -> JSONObject:
        """The parameters a model may set: properties marked ``"x-internal": true`` (e.g. recall's
        ``source``, set by the suite's own callers) are left out."""
        props = {
            k: v for k, v in (self.parameters.get("properties") or {}).items() if not v.get("x-internal")
        }
        return {**self.parameters, "properties": props}

    def internal_parameters(self) -> set[str]:
        return {k for k, v in (self.parameters.get("properties") or {}).items() if v.get("x-internal")}

    def schema(self) -> JSONObject:
        """The OpenAI/litellm function-tool schema (public parameters only)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.public_parameters(),
            },
        }


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# checked manifests by (plugin.yaml path, mtime, size): a CLI call builds a host for its command
# list and another for the workspace, and each would parse and check every manifest again
_checked_manifests: dict[tuple[str, int, int, str | None, bool], dict[str, Any]] = {}


def load_manifest(
    module: ModuleType, expected_id: str | None = None, *, check_schema: bool = True
) -> dict[str, Any]:
    """Read and check a plugin's manifest; PluginError names the plugin and the problem.
    ``check_schema=False`` skips checking ``config_schema`` against the JSON Schema meta-schema:
    the host does so for the built-in plugins, whose schemas the test suite checks (jsonschema
    costs every CLI call ~0.1 s to import)."""
    label = expected_id or module.__name__
    manifest = getattr(module, "PLUGIN_MANIFEST", None)
    if manifest is not None:
        return _check_manifest(manifest, label, expected_id, check_schema=check_schema)
    path = Path(module.__file__ or "").parent / "plugin.yaml"
    try:
        st = path.stat()
    except OSError:
        raise PluginError(
            f"plugin {label!r}: no plugin.yaml beside {module.__name__}; refusing to load"
        ) from None
    key = (str(path), st.st_mtime_ns, st.st_size, expected_id, check_schema)
    if key not in _checked_manifests:
        try:
            manifest = yaml.load(path.read_text("utf-8"), Loader=_YAML_LOADER)  # noqa: S506 - a safe loader
        except yaml.YAMLError as exc:
            raise PluginError(f"plugin {label!r}: plugin.yaml is not valid YAML ({exc})") from exc
        _checked_manifests[key] = _check_manifest(manifest, label, expected_id, check_schema=check_schema)
    return copy.deepcopy(_checked_manifests[key])


def _check_manifest(
    manifest: Any, label: str, expected_id: str | None, *, check_schema: bool = True
) -> dict[str, Any]:
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
    if check_schema:
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
    _check_embedding(manifest.get("embedding"), pid, check_schema=check_schema)
    hooks = manifest.get("hooks") or []
    unknown = [h for h in hooks if h not in HOOK_NAMES]
    if unknown:
        raise PluginError(f"plugin {pid!r}: unknown hook(s) in manifest: {', '.join(unknown)}")
    order = manifest.get("order", DEFAULT_ORDER)
    if not isinstance(order, int) or isinstance(order, bool):
        raise PluginError(f"plugin {pid!r}: order must be an integer, got {order!r}")
    return manifest


def _check_embedding(section: Any, pid: str, *, check_schema: bool) -> None:
    """A manifest's optional ``embedding`` key: the providers it serves and the JSON Schema of
    the ``embedding`` config section for them."""
    if section is None:
        return
    providers = section.get("providers") if isinstance(section, dict) else None
    schema = section.get("config_schema") if isinstance(section, dict) else None
    if (
        not isinstance(providers, list)
        or not providers
        or not all(isinstance(p, str) and p and p != "none" for p in providers)
    ):
        raise PluginError(
            f"plugin {pid!r}: embedding.providers must be a list of provider names (not 'none')"
        )
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise PluginError(f"plugin {pid!r}: embedding.config_schema must be a JSON Schema of type object")
    if check_schema:
        try:
            import jsonschema

            jsonschema.Draft202012Validator.check_schema(schema)
        except Exception as exc:
            raise PluginError(
                f"plugin {pid!r}: embedding.config_schema is not a valid JSON Schema ({str(exc).splitlines()[0]})"
            ) from exc


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
    """What every hook gets as ``ctx``: workspace, config, store, embedder, recall index, tools,
    clock. Plugins see it as :class:`lifelong.contracts.PluginContext` (checked below)."""

    def __init__(self, host: Host):
        self.host = host
        self.state: dict[str, Any] = {}  # per-host caches of plugins, keyed "<plugin>.<name>"

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

    @property
    def recall(self) -> RecallStore | None:
        """The recall index as other plugins read and write it (hook ``provide_recall_store``),
        or None when no loaded plugin provides one."""
        return self.host.recall_store

    def call_tool(self, name: str, **arguments: Any) -> JSONObject:
        return self.host.call_tool(name, arguments)

    def hook(self, name: str, **kwargs: Any) -> list[Any]:
        return self.host.call(name, **kwargs)

    def first(self, name: str, **kwargs: Any) -> Any:
        return self.host.call_first(name, **kwargs)

    def log(self, plugin_id: str, message: str) -> None:
        self.host.log_plugin(plugin_id, message)


if TYPE_CHECKING:  # the type checker proves Context provides every member of PluginContext

    def _implements_plugin_context(ctx: Context) -> PluginContext:
        return ctx


class Host:
    """Load plugins for a workspace and call their hooks.

    ``builtins``: which built-in plugins to load, by id (None: all of them); ``entry_points``:
    whether to load third-party plugins installed as entry points; ``extra_plugins``: modules to
    load as plugins too (tests, embedding applications)."""

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
        self._tools: dict[str, Tool] | None = None  # registered on first use (see ``tools``)
        self._migrations: list[Any] | None = None  # registered when the store is first opened
        self._store: Store | None = None
        self._embedder: Embedder | None = None
        self._embedder_made = False
        self._recall_store: RecallStore | None = None
        self._recall_store_made = False
        self._lock = threading.RLock()
        self.ctx = Context(self)
        wanted = None if builtins is None else set(builtins)
        found = set()
        for ep in plugin_entry_points():
            builtin = is_builtin(ep)
            if builtin and wanted is not None and ep.name not in wanted:
                continue
            if not builtin and not entry_points:
                continue
            try:
                module = ep.load()
            except Exception as exc:
                raise PluginError(f"plugin entry point {ep.name!r} failed to import: {exc}") from exc
            self.add_plugin(module, source="builtin" if builtin else "entrypoint", expected_id=ep.name)
            found.add(ep.name)
        missing = sorted((wanted or set()) - found)
        if missing:
            raise PluginError(f"no built-in plugin named {', '.join(map(repr, missing))}")
        for module in extra_plugins:
            self.add_plugin(module, source="explicit")
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            name = self.pm.get_name(exc.plugin) if getattr(exc, "plugin", None) is not None else "?"
            raise PluginError(f"plugin {name!r}: {exc}") from exc
        everything = builtins is None and entry_points
        if everything:
            self.check_config()  # every installed plugin is loaded: a plugins: key naming none is a typo
        # checked by the plugin serving the provider; an unknown provider is refused at once
        # when every installed plugin is here to claim it, else when the embedder is made
        self.embedding_config = self._embedding_section(strict=everything)
        if self.model_configured():
            llm.warm_up()  # litellm's import is paid in the background, not by the first call's deadline

    def model_configured(self) -> bool:
        """Whether ``llm.model`` or any plugin's ``model`` names a language model."""
        if self.workspace is None:
            return False
        if (self.workspace.config.get("llm") or {}).get("model"):
            return True
        return any(
            isinstance(r.config.get("model"), str) and r.config["model"] for r in self.plugins.values()
        )

    # loading --------------------------------------------------------------------------------
    def add_plugin(
        self, module: ModuleType, *, source: str = "explicit", expected_id: str | None = None
    ) -> None:
        manifest = load_manifest(module, expected_id, check_schema=source != "builtin")
        pid = manifest["id"]
        if pid in self.plugins:
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
            order=int(manifest.get("order", DEFAULT_ORDER)),
            config=config,
            schema=schema,
            module=module,
            embedding_providers=tuple((manifest.get("embedding") or {}).get("providers") or ()),
            embedding_schema=dict((manifest.get("embedding") or {}).get("config_schema") or {}),
        )
        self.plugins = dict(
            sorted({**self.plugins, pid: record}.items(), key=lambda kv: (kv[1].order, kv[0]))
        )
        if record.status == "loaded":
            self.pm.register(module, name=pid)

    def embedding_providers(self) -> dict[str, PluginRecord]:
        """Provider name -> the installed plugin (loaded or disabled) declaring it in its
        manifest, in plugin order (the first declaring a name owns it)."""
        out: dict[str, PluginRecord] = {}
        for record in self.plugins.values():
            for name in record.embedding_providers:
                out.setdefault(name, record)
        return out

    def _embedding_section(self, *, strict: bool) -> dict[str, Any]:
        """The ``embedding`` config section, validated against the schema of the plugin whose
        manifest serves its provider and with that schema's defaults filled in. ConfigError (one
        line naming the key) on a bad value; with ``strict``, also for a provider no installed
        plugin declares."""
        section = dict(self.workspace.config.get("embedding") or {}) if self.workspace else {}
        provider = section.setdefault("provider", "local")
        if provider == "none":
            return section
        owner = self.embedding_providers().get(provider)
        if owner is None:
            if strict:
                allowed = ", ".join(repr(p) for p in [*self.embedding_providers(), "none"])
                raise ConfigError(
                    f"embedding.provider: invalid value {provider!r} (allowed: one of {allowed})"
                )
            return section
        validate(section, owner.embedding_schema, where="embedding")
        return apply_defaults(section, owner.embedding_schema)

    def check_config(self) -> None:
        """Refuse a ``plugins:`` section naming a plugin that is not installed (a typo would
        otherwise be ignored silently). Run at start-up by hosts that load every plugin."""
        if self.workspace is None:
            return
        configured = self.workspace.config.get("plugins") or {}
        unknown = sorted(set(configured) - set(self.plugins))
        if unknown:
            known = ", ".join(self.plugins) or "none"
            raise ConfigError(f"plugins.{unknown[0]}: no such plugin (installed: {known})")

    def plugin_config(self, plugin_id: str) -> dict[str, Any]:
        record = self.plugins.get(plugin_id)
        if record is None:
            raise ConfigError(f"plugin {plugin_id!r} is not installed")
        return record.config

    def enabled(self, plugin_id: str) -> bool:
        record = self.plugins.get(plugin_id)
        return record is not None and record.status == "loaded"

    # hooks ----------------------------------------------------------------------------------
    def _impls(self, name: str) -> list[Any]:
        caller = getattr(self.pm.hook, name)
        return sorted(
            caller.get_hookimpls(),
            key=lambda impl: (self._order(impl.plugin_name), impl.plugin_name),
        )

    def _order(self, plugin_id: str) -> int:
        record = self.plugins.get(plugin_id)
        return record.order if record is not None else DEFAULT_ORDER

    def implementers(self, hook: str) -> list[str]:
        """The ids of the loaded plugins implementing ``hook``, in call order."""
        return [impl.plugin_name for impl in self._impls(hook)]

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
    @property
    def tools(self) -> dict[str, Tool]:
        """Every registered tool by name. The ``register_tools`` hook runs on first use, so a
        host built only to list commands or plugins never imports what the tools run on."""
        with self._lock:
            if self._tools is None:
                self._tools = {}
                self.call("register_tools", register=self._register_tool)
            return self._tools

    @property
    def migrations(self) -> list[Any]:
        """Every plugin's migration set (hook ``register_migrations``, run on first use)."""
        with self._lock:
            if self._migrations is None:
                self._migrations = []
                self.call("register_migrations", register=self._migrations.append)
            return self._migrations

    def migrations_key(self) -> str | None:
        """What decides which migrations exist, known without importing them: lifelong's
        version and, for each loaded plugin implementing ``register_migrations``, its id and the
        path, size and time of every Python file of its package. A store marked with this key
        (``Store.migrated``) is opened without importing the migration sets (nor sqlite-utils,
        nor numpy, which sqlite-utils imports): the cold start of a CLI search. None when a
        plugin's files cannot be named (then the migrations are checked on every open)."""
        from . import __version__

        parts: list[Any] = [__version__]
        for impl in self._impls("register_migrations"):
            file = getattr(impl.plugin, "__file__", None)
            if not file:
                return None
            path = Path(file)
            files: list[str] = [str(path)]
            if path.name == "__init__.py":
                files = sorted(
                    os.path.join(folder, name)
                    for folder, _dirs, names in os.walk(path.parent)
                    for name in names
                    if name.endswith(".py")
                )
            stats = []
            for f in files:
                try:
                    st = os.stat(f)
                except OSError:
                    return None
                stats.append((f, st.st_size, st.st_mtime_ns))
            parts.append((impl.plugin_name, stats))
        return hashlib.sha256(repr(parts).encode()).hexdigest()

    def _register_tool(
        self,
        name: str,
        description: str,
        parameters: JSONObject,
        handler: ToolHandler,
        plugin: str = "",
        annotations: JSONObject | None = None,
        agent: bool = True,
    ) -> None:
        if name in self.tools:
            raise PluginError(f"tool {name!r} registered twice")
        self.tools[name] = Tool(name, description, parameters, handler, plugin, annotations, agent)

    def agent_tools(self) -> list[Tool]:
        """The tools a model may be offered (services registered with ``agent=False`` left out)."""
        return [t for t in self.tools.values() if t.agent]

    def unknown_tool(self, name: str) -> JSONObject:
        """The error for a tool a model may not call: none by that name, or a service. It names
        exactly the tools a model is offered (``agent_tools``; MCP lists the same)."""
        offered = ", ".join(sorted(t.name for t in self.agent_tools())) or "none"
        return {"error": f"unknown tool {name!r}; available: {offered}"}

    def call_tool(self, name: str, arguments: dict[str, Any]) -> JSONObject:
        """Run an agent tool. Arguments are checked against the tool's JSON Schema; bad
        arguments and failures come back as ``{"error": ...}``, never as exceptions."""
        tool = self.tools.get(name)
        if tool is None:
            return self.unknown_tool(name)
        if not isinstance(arguments, dict):
            return {"error": f"{name}: arguments must be an object, got {type(arguments).__name__}"}
        allowed = set(tool.parameters.get("properties", {}))
        unknown = sorted(set(arguments) - allowed)
        if unknown:
            return {"error": f"{name}: unknown argument(s) {', '.join(unknown)}"}
        missing = [k for k in tool.parameters.get("required", []) if k not in arguments]
        if missing:
            return {"error": f"{name}: missing required argument(s) {', '.join(missing)}"}
        problem = describe_error(arguments, tool.parameters)
        if problem:
            return {"error": f"{name}: {problem}"}
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
                from .store import Store

                self.workspace.ensure_state()
                store = Store(self.workspace.index_path)
                key = self.migrations_key()
                if key is None or not store.migrated(key):
                    store.migrate(self.migrations)
                    if key is not None:
                        store.mark_migrated(key)
                self._store = store
            return self._store

    @property
    def embedder(self) -> Embedder | None:
        """The embedder a plugin provides for the ``embedding`` config (``provide_embedder``);
        None for provider ``none``. ConfigError when no loaded plugin serves the provider."""
        with self._lock:
            if not self._embedder_made:
                config = dict(self.embedding_config)
                provider = config.get("provider", "local")
                embedder = None
                if provider != "none":
                    faults = len(self.faults)
                    embedder = self.call_first("provide_embedder", ctx=self.ctx, config=config)
                    if embedder is None:
                        why = next((f["error"] for f in self.faults[faults:]), None)
                        if why:
                            raise ConfigError(f"embedding.provider {provider!r}: {why}")
                        owner = self.embedding_providers().get(provider)
                        served = ", ".join(
                            f"{p} ({r.id}{'' if r.status == 'loaded' else ', disabled'})"
                            for p, r in self.embedding_providers().items()
                        )
                        raise ConfigError(
                            f"embedding.provider {provider!r}: no loaded plugin provides it "
                            + (f"(plugin {owner.id!r} is {owner.status}; " if owner else "(")
                            + f"installed providers: {served or 'none'}; use provider none for FTS-only search)"
                        )
                self._embedder = embedder
                self._embedder_made = True
            return self._embedder

    @property
    def recall_store(self) -> RecallStore | None:
        """The :class:`~lifelong.contracts.RecallStore` a plugin provides (``provide_recall_store``,
        asked once), or None."""
        with self._lock:
            if not self._recall_store_made:
                self._recall_store = self.call_first("provide_recall_store", ctx=self.ctx)
                self._recall_store_made = True
            return self._recall_store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # conveniences over hooks ----------------------------------------------------------------
    def before_reply(self, session: Session, message: str) -> GateResult:
        """Run ``before_prompt_build`` for one reply. ``session`` describes the chat (id, type,
        recent messages…); ``message`` is the latest user message."""
        session = {**session, "message": message}
        results = [
            r
            for r in self.call("before_prompt_build", ctx=self.ctx, session=session)
            if isinstance(r, GateResult)
        ]
        if not results:
            return GateResult(status="failed" if self.implementers("before_prompt_build") else "disabled")
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

    def decide_write(self, candidate: WriteCandidate, existing: list[RelatedFact]) -> WriteDecision:
        """The strictest ``before_message_write`` decision (allow when nobody objects)."""
        if not isinstance(candidate, WriteCandidate):
            raise InputError(f"decide_write needs a WriteCandidate, got {type(candidate).__name__}")
        decisions = [
            d
            for d in self.call("before_message_write", ctx=self.ctx, candidate=candidate, existing=existing)
            if isinstance(d, WriteDecision)
        ]
        if not decisions:
            return WriteDecision("allow")
        return max(decisions, key=lambda d: DECISION_RANK.get(d.action, 0))

    def before_compaction(self, session: Session, messages: list[Message]) -> FlushResult:
        """Run ``before_compaction`` once for one compaction of ``session``: the single entry a
        runtime calls on every compaction path. Returns the first plugin's result."""
        faults = len(self.faults)
        results = [
            r
            for r in self.call("before_compaction", ctx=self.ctx, session=session, messages=messages)
            if isinstance(r, FlushResult)
        ]
        if results:
            return results[0]
        if not self.implementers("before_compaction"):
            return FlushResult(status="disabled", detail={"reason": "no plugin implements before_compaction"})
        errors = [f"{f['plugin']}: {f['error']}" for f in self.faults[faults:]]
        return FlushResult(
            status="failed",
            detail={"error": "; ".join(errors) or "no plugin returned a result", "compaction": "goes on"},
        )

    def after_compaction(self, session: Session, summary: str) -> None:
        self.call("after_compaction", ctx=self.ctx, session=session, summary=summary)
