"""The ``lifelong`` command line. Core commands live here; plugins add theirs through the
``register_commands`` hook. Errors users can act on print one line on stderr and exit 1.

Every CLI call is a new process, so this module and the command modules plugins register import
only what listing commands needs (click, the plugin manifests); a command imports its work when
it runs (``tests/core/test_cold_start.py`` checks it, ``python -m evals.cli_cold_start`` times it)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__, clock
from .errors import LifelongError
from .workspace import Workspace, init_workspace, resolve_root

if TYPE_CHECKING:
    from .host import Host

JSON_SCHEMA_VERSION = 1


class CliState:
    """What the group's options resolve to; commands ask it for the host lazily."""

    def __init__(self, workspace: str | None, now: str | None):
        self.workspace_option = workspace
        self.now_option = now
        self._host: Host | None = None

    def workspace(self) -> Workspace:
        return Workspace(resolve_root(self.workspace_option))

    def host(self) -> Host:
        if self._host is None:
            from .host import Host

            ws = self.workspace()
            if self.now_option:
                clock.set_now(clock.parse_instant(self.now_option, ws.timezone))
            self._host = Host(ws)
        return self._host

    def pin_now(self, value: str) -> None:
        """A subcommand's ``--now`` (it wins over the group's)."""
        self.now_option = value
        clock.set_now(clock.parse_instant(value))  # re-parsed in the workspace zone by host()
        if self._host is not None and self._host.workspace is not None:
            clock.set_now(clock.parse_instant(value, self._host.workspace.timezone))


def cli_state(ctx: click.Context) -> CliState:
    """The ``lifelong`` group's state; a one-line error for a command run outside the group."""
    state = ctx.find_object(CliState)
    if state is None:
        raise click.UsageError("this command runs under the `lifelong` command group")
    return state


NOW_HELP = "Pretend it is this time (ISO 8601; a naive time is in the workspace's zone)."


def _subcommand_now(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        state = ctx.find_object(CliState)
        if state is not None:
            state.pin_now(value)


def add_now_option(command: click.Command) -> click.Command:
    """Give ``command`` (and a group's subcommands) the ``--now`` option, so it can be written
    after the command as well as before it (``lifelong search q --now 2026-03-04``)."""
    if not any("--now" in getattr(p, "opts", ()) for p in command.params):
        command.params.append(
            click.Option(
                ["--now"],
                metavar="ISO8601",
                help=NOW_HELP,
                expose_value=False,
                is_eager=True,
                callback=_subcommand_now,
            )
        )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_now_option(sub)
    return command


def get_host(ctx: click.Context | None = None) -> Host:
    """The host for the running command (plugins call this from their commands)."""
    ctx = ctx or click.get_current_context()
    return cli_state(ctx).host()


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


class LifelongGroup(click.Group):
    """The root group. Plugin commands are added on first use (not at import, so a plugin's
    command module may import this module without a circular import)."""

    _plugins_loaded = False

    def load_plugin_commands(self) -> None:
        if not self._plugins_loaded:
            self._plugins_loaded = True
            _register_plugin_commands(self)
            _register_extra_commands(self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load_plugin_commands()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self.load_plugin_commands()
        return super().get_command(ctx, cmd_name)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        super().add_command(add_now_option(cmd), name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LifelongError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            ctx.exit(130)


@click.group(cls=LifelongGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="lifelong")
@click.option(
    "--workspace",
    "-w",
    metavar="DIR",
    help="Workspace folder (default: $LIFELONG_WORKSPACE, "
    "then the current folder if it holds lifelong.yaml).",
)
@click.option("--now", metavar="ISO8601", help=NOW_HELP + " Also accepted after any subcommand.")
@click.pass_context
def cli(ctx: click.Context, workspace: str | None, now: str | None) -> None:
    """lifelong: a memory for personal AI agents that deepens over months.

    Markdown files in the workspace are the truth; everything else is derived from them."""
    ctx.obj = CliState(workspace, now)
    if now:
        clock.set_now(clock.parse_instant(now))  # re-parsed in the workspace zone by the host
    ctx.call_on_close(lambda: clock.set_now(None))


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print the created and kept files as JSON.")
def init(directory: str, as_json: bool) -> None:
    """Create an empty workspace in DIRECTORY: MEMORY.md, memory/, wiki/, lifelong.yaml (with
    this machine's time zone) and lifelong-agent.md (instructions to paste into the agent's own).
    Existing files are never overwritten, so an existing (OpenClaw) workspace can be initialised
    in place."""
    created, kept = init_workspace(Path(directory))
    if as_json:
        emit_json(
            {
                "version": JSON_SCHEMA_VERSION,
                "workspace": str(Path(directory).resolve()),
                "created": created,
                "kept": kept,
            }
        )
        return
    click.echo(f"workspace: {Path(directory).resolve()}")
    for rel in created:
        click.echo(f"  created {rel}")
    for rel in kept:
        click.echo(f"  kept    {rel} (already there)")


def status_data(host: Host) -> dict[str, Any]:
    """What ``lifelong status`` shows: the workspace, plugin health, each plugin's report
    (hook ``status_report``), warnings and the next steps."""
    from .contracts import StatusReport

    ws = host.workspace
    assert ws is not None
    emb = host.embedding_config  # the section with its provider plugin's defaults
    host.tools  # noqa: B018 - registered now (they register on first use), so a plugin failing to shows as a fault
    reports = [r for r in host.call("status_report", ctx=host.ctx) if isinstance(r, StatusReport)]
    faults_by_plugin: dict[str, int] = {}
    for fault in host.faults:
        faults_by_plugin[fault["plugin"]] = faults_by_plugin.get(fault["plugin"], 0) + 1
    plugins = []
    for record in host.plugins.values():
        row = record.as_json()
        row["health"] = (
            "disabled"
            if record.status != "loaded"
            else (f"{faults_by_plugin[record.id]} fault(s)" if record.id in faults_by_plugin else "ok")
        )
        plugins.append(row)
    warnings: list[str] = []
    warnings_file = ws.state_dir / "warnings.json"
    if warnings_file.exists():
        try:
            warnings += json.loads(warnings_file.read_text("utf-8"))
        except ValueError:
            warnings.append("warnings.json unreadable")
    for r in reports:
        warnings += [f"{r.plugin}: {w}" for w in r.warnings]
    return {
        "version": JSON_SCHEMA_VERSION,
        "lifelong": __version__,
        "workspace": str(ws.root),
        "timezone": str(ws.timezone),
        "now": clock.now(ws.timezone).isoformat(timespec="seconds"),
        "config": ws.config,
        "plugins": plugins,
        "reports": {r.plugin: {"summary": list(r.summary), **r.data} for r in reports},
        "index": {"path": str(ws.index_path), "sqlite_version": host.store.sqlite_version},
        "embedding": {
            "provider": emb.get("provider", "local"),
            "model": emb.get("model"),
            "engine": emb.get("engine", "float32") if emb.get("provider", "local") == "local" else None,
        },
        "warnings": list(dict.fromkeys(warnings)),
        "faults": host.faults,
        "next_steps": list(dict.fromkeys(step for r in reports for step in r.next_steps)),
    }


@cli.command()
@click.option(
    "--json", "as_json", is_flag=True, help="Print machine-readable JSON (documented in docs/cli.md)."
)
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """What is in memory and whether it is healthy: each plugin's state (files and chunks
    indexed, last index, last dream, MEMORY.md items...), warnings, faults and the next step."""
    data = status_data(get_host(ctx))
    if as_json:
        emit_json(data)
        return
    click.echo(f"lifelong {data['lifelong']}  workspace {data['workspace']}")
    click.echo(f"  time zone {data['timezone']}, now {data['now']}")
    plugins = ", ".join(f"{p['id']} ({p['health']})" for p in data["plugins"])
    click.echo(f"  plugins: {plugins}")
    for plugin, report in data["reports"].items():
        for n, line in enumerate(report["summary"]):
            click.echo(f"{plugin + ':' if n == 0 else '':<11}{line}")
    for w in data["warnings"]:
        click.echo(f"warning: {w}")
    for f in data["faults"]:
        click.echo(f"plugin fault: {f['plugin']} in {f['hook']}: {f['error']}")
    for step in data["next_steps"]:
        click.echo(f"next: {step}")


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def plugins_cmd(ctx: click.Context, as_json: bool) -> None:
    """List plugins: id, enabled, hooks."""
    from .host import Host

    state = cli_state(ctx)
    try:
        host = state.host()
    except LifelongError:
        host = Host(None)  # no workspace: show what is installed with default config
    rows = [r.as_json() for r in host.plugins.values()]
    if as_json:
        emit_json({"version": JSON_SCHEMA_VERSION, "plugins": rows})
        return
    for r in host.plugins.values():
        mark = "on " if r.status == "loaded" else "off"
        click.echo(f"{mark} {r.id:<11} {', '.join(r.hooks) or r.note}")


@cli.command("audit")
@click.option("--run", "run_id", default=None, help="Only the writes of this run id.")
@click.option("--path", "path_filter", default=None, help="Only the writes to this workspace path.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="Newest N entries.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def audit_cmd(
    ctx: click.Context, run_id: str | None, path_filter: str | None, limit: int, as_json: bool
) -> None:
    """Every automatic durable write (promotions, diary, reports, wiki, captures, flushes,
    rollbacks, supersedes): time, run, file, action, sha256 before and after."""
    from dataclasses import asdict

    from . import audit

    ws = cli_state(ctx).workspace()
    entries, bad = audit.read(ws)
    entries = [
        e
        for e in entries
        if (run_id is None or e.run_id == run_id) and (path_filter is None or e.path == path_filter)
    ][-limit:]
    if as_json:
        emit_json(
            {"version": JSON_SCHEMA_VERSION, "entries": [asdict(e) for e in entries], "unreadable_lines": bad}
        )
        return
    if not entries:
        click.echo("no automatic writes recorded" + (" for that filter" if run_id or path_filter else ""))
    for e in entries:
        change = f"{(e.before_sha or '-')[:8]} -> {(e.after_sha or '-')[:8]}"
        click.echo(
            f"{e.time}  {e.action:<15} {e.path}  {change}  {e.plugin or '-'} {e.run_id or ''}".rstrip()
        )
    if bad:
        click.echo(f"({bad} unreadable line(s) skipped in .lifelong/audit.jsonl)")


@cli.command("mcp")
@click.option(
    "--workspace",
    "-w",
    "workspace",
    metavar="DIR",
    default=None,
    help="Workspace folder (as the global option).",
)
@click.pass_context
def mcp_cmd(ctx: click.Context, workspace: str | None) -> None:
    """Serve every memory tool (memory_search, memory_get, memory_index and every other plugin's) and the
    MEMORY.md and today resources over MCP on stdio."""
    from .mcp_server import serve_stdio

    state = cli_state(ctx)
    if workspace:
        state.workspace_option = workspace
    serve_stdio(get_host(ctx))


def _register_plugin_commands(group: click.Group) -> None:
    from .host import Host

    try:
        host = Host(None)
    except LifelongError as exc:  # a broken third-party plugin must not hide the built-in commands
        click.echo(f"warning: {exc}", err=True)
        host = Host(None, entry_points=False)
    host.call("register_commands", cli=group)


COMMANDS_GROUP = "lifelong.commands"


def _register_extra_commands(group: click.Group) -> None:
    """Commands installed as entry points of group ``lifelong.commands`` (the eval harness's
    ``lifelong eval``): a click command each, added under its entry-point name."""
    from .host import installed_entry_points

    for ep in installed_entry_points().select(group=COMMANDS_GROUP):
        if ep.name in group.commands:
            continue
        try:
            command = ep.load()
        except Exception as exc:  # an extra command that cannot load must not break the CLI
            click.echo(
                f"warning: command {ep.name!r} could not be loaded ({type(exc).__name__}: {exc})", err=True
            )
            continue
        if isinstance(command, click.Command):
            group.add_command(command, ep.name)
    if "eval" not in group.commands:
        group.add_command(eval_not_installed, "eval")


EVAL_MISSING = (
    "the eval harness is not installed (it is not part of the product wheel); from a clone of the "
    "repository: pip install -e ./evals"
)


@click.command(
    "eval",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.pass_context
def eval_not_installed(ctx: click.Context) -> None:
    """The eval harness (not installed here: `pip install -e ./evals` from a clone of the repository)."""
    click.echo(f"error: {EVAL_MISSING}", err=True)
    ctx.exit(1)


def main() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        cli.main(prog_name="lifelong")
    except LifelongError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    # run the importable module, not this __main__ copy: plugins look up lifelong.cli's classes
    from lifelong.cli import main as _main

    _main()
