"""Every hook of the suite, one docstring each.

Calls are keyword-only; an implementation may take fewer arguments than its spec. The host calls
each implementation itself inside try/except (fault isolation): one that raises is logged to
``.lifelong/logs/<plugin>.log`` and the call goes on as if it were not registered.

``ctx`` is the :class:`lifelong.host.Context` of the call: the workspace, config, the store, the
embedder, the tool registry and the clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pluggy

PROJECT = "lifelong"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@dataclass(frozen=True)
class GateResult:
    """What ``before_prompt_build`` returns: a hidden note for the main agent and how it went.

    ``status`` is one of ok, empty, no_relevant_memory, timeout, timeout_partial,
    skipped_ineligible, skipped_trivial, failed, disabled. ``prefix`` is the exact text to prepend
    to the user-role prompt ('' when there is nothing to add)."""

    status: str
    note: str = ""
    prefix: str = ""
    elapsed_ms: float = 0.0
    citations: tuple[str, ...] = ()
    source: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    def verbose_line(self) -> str:
        return f"Memory gate: {self.status} {self.elapsed_ms:.0f} ms, {len(self.note)} chars"


@dataclass(frozen=True)
class WriteDecision:
    """What ``before_message_write`` returns. ``action``: allow | warn | block | supersede.
    For supersede, ``supersedes`` names the keys/chunk ids whose validity interval is closed."""

    action: str
    reason: str = ""
    supersedes: tuple[str, ...] = ()
    source: str = ""


# --- registration ---------------------------------------------------------------------------


@hookspec
def register_commands(cli: Any) -> None:
    """Add click subcommands to the ``lifelong`` group ``cli``. Called once when the CLI is
    built, before any workspace is known: commands resolve their host at run time."""


@hookspec
def register_tools(register: Any) -> None:
    """Register agent tools: ``register(name, description, parameters, handler)`` where
    ``parameters`` is an OpenAI/litellm JSON-Schema object and ``handler(ctx, **arguments)``
    returns a JSON-serialisable dict (errors as ``{"error": ...}``, never exceptions)."""


@hookspec
def register_migrations(register: Any) -> None:
    """Register a ``sqlite_utils.migrations.Migrations`` set with ``register(migrations)``.
    The host applies every set when it opens the index."""


# --- index lifecycle ------------------------------------------------------------------------


@hookspec
def on_files_changed(ctx: Any, changes: Any) -> None:
    """After a sync of markdown into the index. ``changes`` has ``new``, ``modified``,
    ``deleted`` (lists of workspace-relative paths)."""


# --- retrieval ------------------------------------------------------------------------------


@hookspec(firstresult=True)
def retrieval_pre(ctx: Any, request: Any) -> Any:
    """Before search. Return a list of candidates to answer the request without searching (the
    concept index does this for known names); None to let search run. First non-None wins."""


@hookspec
def retrieval_post(ctx: Any, request: Any, candidates: Any) -> Any:
    """After hybrid scoring and decay, before MMR. Return a new candidate list (re-scored), or
    None to leave it unchanged. Implementations are applied in turn."""


@hookspec
def corpus_supplement(ctx: Any, request: Any) -> Any:
    """For ``corpus`` wiki or all: return a list of extra candidates from another corpus, each
    with ``corpus`` set; the search merges them with a per-corpus cap, then backfills."""


# --- conversation ---------------------------------------------------------------------------


@hookspec
def before_prompt_build(ctx: Any, session: Any) -> GateResult | None:
    """Before each reply is generated: return a :class:`GateResult` whose ``prefix`` is
    prepended to the user-role prompt, or None. Gates must document whether they fail open."""


@hookspec
def before_message_write(ctx: Any, candidate: Any, existing: Any) -> WriteDecision | None:
    """Before any durable memory write. ``candidate`` is the text (and metadata) about to be
    written, ``existing`` the related memories found. Return a :class:`WriteDecision`; the
    strictest decision wins (block > supersede > warn > allow)."""


@hookspec
def before_compaction(ctx: Any, session: Any, messages: Any) -> None:
    """Before the runtime summarises its context: save what matters (the flush plugin)."""


@hookspec
def after_compaction(ctx: Any, session: Any, summary: Any) -> None:
    """After the runtime summarised its context into ``summary``."""


# --- consolidation --------------------------------------------------------------------------


@hookspec
def dreaming_phase(ctx: Any, phase: str, run: Any) -> Any:
    """One phase of the nightly consolidation: ``phase`` is light, rem or deep, called in that
    order with the same ``run`` object (which carries the run id, now, journal, and what earlier
    phases staged). Return a phase report dict or None."""


@hookspec
def after_consolidation(ctx: Any, run: Any) -> None:
    """After a consolidation run finished writing (wiki compile + lint, concept rebuild)."""
