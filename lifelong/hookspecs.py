"""Every hook of the suite, one docstring each. The types they exchange are in
:mod:`lifelong.contracts`.

Calls are keyword-only; an implementation may take fewer arguments than its spec. The host calls
each implementation itself inside try/except (fault isolation): one that raises is logged to
``.lifelong/logs/<plugin>.log`` and the call goes on as if it were not registered.

``ctx`` is the :class:`lifelong.host.Context` of the call: the workspace, config, the store, the
embedder, the recall index (``ctx.recall``), the tool registry and the clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

from .contracts import (
    Candidate,
    ConsolidationRun,
    Embedder,
    FileChanges,
    FlushResult,
    GateResult,
    JSONObject,
    Message,
    RecallStore,
    RelatedFact,
    SearchRequest,
    Session,
    StatusReport,
    ToolRegistrar,
    WriteCandidate,
    WriteDecision,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    import click
    from sqlite_utils.migrations import Migrations

    from .host import Context

PROJECT = "lifelong"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

# Re-exported for plugins written against earlier versions (``from lifelong.hookspecs import
# GateResult, WriteDecision``).
__all__ = ["GateResult", "WriteDecision", "hookimpl", "hookspec"]


# --- registration ---------------------------------------------------------------------------


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add click subcommands to the ``lifelong`` group ``cli``. Called once when the CLI is
    built, before any workspace is known: commands resolve their host at run time. Every CLI
    call lists the commands, so the module adding them imports its work inside each command."""


@hookspec
def register_tools(register: ToolRegistrar) -> None:
    """Register agent tools through ``register`` (see :class:`lifelong.contracts.ToolRegistrar`).
    Called when the host's tools are first used (not when it starts)."""


@hookspec
def register_migrations(register: Callable[[Migrations], None]) -> None:
    """Register a ``sqlite_utils.migrations.Migrations`` set with ``register(migrations)``.
    Called, and every set applied, when the host first opens the index."""


@hookspec(firstresult=True)
def provide_embedder(ctx: Context, config: JSONObject) -> Embedder | None:
    """Return the :class:`~lifelong.contracts.Embedder` for the workspace's ``embedding``
    config section, or None when this plugin does not serve that provider. First non-None wins;
    with provider ``none`` nobody answers and search is FTS-only."""


@hookspec(firstresult=True)
def provide_recall_store(ctx: Context) -> RecallStore | None:
    """Return the :class:`~lifelong.contracts.RecallStore` through which other plugins read and
    write the recall index (``ctx.recall``); a plugin never names another's tables. First
    non-None wins; None from everyone (recall disabled) makes ``ctx.recall`` None."""


@hookspec
def status_report(ctx: Context) -> StatusReport | None:
    """This plugin's part of ``lifelong status``: what a user needs to know (counts, last run,
    health, warnings) and the next step, as a :class:`~lifelong.contracts.StatusReport`."""


# --- index lifecycle ------------------------------------------------------------------------


@hookspec
def on_files_changed(ctx: Context, changes: FileChanges) -> None:
    """After a sync of markdown into the index changed files."""


# --- retrieval ------------------------------------------------------------------------------


@hookspec(firstresult=True)
def retrieval_pre(ctx: Context, request: SearchRequest) -> list[Candidate] | None:
    """Before search. Return candidates that answer the request without searching (the concept
    index does this for known names), or None to let search run. First non-None wins."""


@hookspec
def retrieval_post(
    ctx: Context, request: SearchRequest, candidates: list[Candidate]
) -> list[Candidate] | None:
    """After hybrid scoring and decay, before MMR. Return a new candidate list (re-scored), or
    None to leave it unchanged. Implementations are applied in turn."""


@hookspec
def corpus_supplement(ctx: Context, request: SearchRequest) -> list[Candidate] | None:
    """For ``corpus`` wiki or all: return extra candidates from another corpus, each with
    ``corpus`` set; the search merges them with a per-corpus cap, then backfills."""


# --- conversation ---------------------------------------------------------------------------


@hookspec
def before_prompt_build(ctx: Context, session: Session) -> GateResult | None:
    """Before each reply is generated: return a :class:`GateResult` whose ``prefix`` is
    prepended to the user-role prompt, or None. Gates must document whether they fail open."""


@hookspec
def before_message_write(
    ctx: Context, candidate: WriteCandidate, existing: list[RelatedFact]
) -> WriteDecision | None:
    """Before any durable memory write. ``candidate`` is the text about to be written,
    ``existing`` the related memories the writer found (an implementation may look for more).
    Return a :class:`WriteDecision`; the strictest decision wins (block > supersede > warn >
    allow)."""


@hookspec
def before_compaction(ctx: Context, session: Session, messages: list[Message]) -> FlushResult | None:
    """Before the runtime summarises ``messages`` (the turns about to leave its context) away:
    save what matters. Called on every compaction path (normal, forced, overflow recovery)."""


@hookspec
def after_compaction(ctx: Context, session: Session, summary: str) -> None:
    """After the runtime summarised its context into ``summary``."""


# --- consolidation --------------------------------------------------------------------------


@hookspec
def dreaming_phase(ctx: Context, phase: str, run: ConsolidationRun) -> JSONObject | None:
    """One phase of the nightly consolidation: ``phase`` is light, rem or deep, called in that
    order with the same ``run``. Return a phase report (a JSON object) or None."""


@hookspec
def after_consolidation(ctx: Context, run: ConsolidationRun) -> None:
    """After a consolidation run finished writing MEMORY.md (wiki compile + lint, concept
    rebuild). File writes go through ``run.journal`` so a rollback undoes them too."""
