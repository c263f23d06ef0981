"""The typed contracts of the hooks: what a plugin receives and returns.

A plugin imports only ``lifelong`` (never another plugin), so every value that crosses a hook is
defined here: the search request and its candidates (``retrieval_pre``, ``retrieval_post``,
``corpus_supplement``), the files a sync changed (``on_files_changed``), a durable write and the
decision on it (``before_message_write``), a chat session and its messages (``before_prompt_build``,
``before_compaction``, ``after_compaction``), the gate's and the flush's results, a
consolidation run (``dreaming_phase``, ``after_consolidation``), and recall's index as other
plugins read and write it (:class:`RecallStore`, hook ``provide_recall_store``).

Frozen dataclasses where a value is handed over and not changed; :class:`Candidate` is mutable on
purpose (each ranking step fills in its own scores). JSON-shaped data (tool results, reports) is
typed :data:`JSON`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol, TypedDict

from .errors import InputError, LifelongError

if TYPE_CHECKING:  # pragma: no cover - typing only (numpy is not imported by `lifelong --version`)
    import click
    import numpy as np
    import numpy.typing as npt
    from sqlite_utils.migrations import Migrations

    from .journal import Journal

JSON = str | int | float | bool | None | list["JSON"] | dict[str, "JSON"]
JSONObject = dict[str, JSON]

# ---------------------------------------------------------------------------------------------
# Searching

Corpus = Literal["memory", "wiki", "all"]
ValidityMode = Literal["current", "valid-at", "all"]
CORPORA: tuple[str, ...] = ("memory", "wiki", "all")
MODES: tuple[str, ...] = ("current", "valid-at", "all")


@dataclass(frozen=True)
class SearchRequest:
    """One ``memory_search``. ``max_tokens`` (when set) asks for results filling that budget of
    returned text instead of a count; ``session`` lets re-scoring plugins (task focus) see the
    conversation the search serves; ``query_vector`` is a precomputed query embedding
    (benchmarks exclude embedding time with it); ``scope`` ``private`` also searches private
    notes (see ``lifelong.privacy``), ``shared`` (default) never does."""

    query: str
    max_results: int = 6
    min_score: float = 0.2
    corpus: Corpus = "memory"
    mode: ValidityMode = "current"
    as_of: dt.datetime | None = None
    source: str = "tool"
    record: bool = True
    max_tokens: int | None = None
    session: Session | None = None
    query_vector: npt.NDArray[np.float32] | None = None
    scope: str = "shared"

    def validate(self) -> SearchRequest:
        if not self.query or not self.query.strip():
            raise InputError("query is empty")
        if self.corpus not in CORPORA:
            raise InputError(f"corpus: invalid value {self.corpus!r} (allowed: {', '.join(CORPORA)})")
        if self.mode not in MODES:
            raise InputError(f"mode: invalid value {self.mode!r} (allowed: {', '.join(MODES)})")
        if self.mode == "valid-at" and self.as_of is None:
            raise InputError("mode valid-at needs as_of (an ISO 8601 date/time)")
        if not 1 <= self.max_results <= 100:
            raise InputError(f"max_results: invalid value {self.max_results} (allowed: 1 to 100)")
        if not 0.0 <= self.min_score <= 1.0:
            raise InputError(f"min_score: invalid value {self.min_score} (allowed: 0 to 1)")
        if self.scope not in ("shared", "private"):
            raise InputError(f"scope: invalid value {self.scope!r} (allowed: shared, private)")
        if self.max_tokens is not None and not 1 <= self.max_tokens <= 100_000:
            raise InputError(f"max_tokens: invalid value {self.max_tokens} (allowed: 1 to 100000)")
        return self


@dataclass
class Candidate:
    """One search candidate as it moves through the ranking. ``corpus`` names where it comes
    from (memory, wiki, or a supplement's own name); ``extra`` carries what a plugin attached
    (a wiki hit's claim id and evidence, a concept-index match) through to the result.

    ``score`` is what orders the candidates at each step: relevance (hybrid x decay, re-scored
    by plugins) until MMR, then MMR's value of the pick on the same scale (see
    ``recall.search.select_results``), which ``relevance`` keeps the score before. ``parts``:
    the units a result merges (fragments of one message), each with its own scores."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    text: str
    corpus: str = "memory"
    heading: str = ""
    source_date: float | None = None  # epoch seconds
    evergreen: bool = False
    generated: bool = False
    cosine: float | None = None  # raw cosine similarity
    similarity: float | None = None  # the vector score used in the hybrid
    bm25: float | None = None
    fts_rank: float | None = None
    hybrid: float = 0.0
    decay: float = 1.0
    score: float = 0.0
    mmr_penalty: float = 0.0
    rescued: bool = False
    validity_end: float | None = None
    superseded_by: str | None = None
    extra: dict[str, JSON] = field(default_factory=dict)
    # dated after now on the real clock (a plan); under a pinned clock such notes are not returned
    upcoming: bool = False
    # the source dates (epoch seconds, ascending) of near-duplicates folded into this result
    also_dates: tuple[float, ...] = ()
    relevance: float | None = None  # the score before MMR (None: not reordered by MMR)
    parts: tuple[Candidate, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.path}:{self.start_line}:{self.end_line}"

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"


@dataclass(frozen=True)
class FileChanges:
    """What a sync of the markdown files into the index changed (workspace-relative paths)."""

    new: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.new or self.modified or self.deleted)

    def as_json(self) -> JSONObject:
        return {
            "new": list(self.new),
            "modified": list(self.modified),
            "deleted": list(self.deleted),
            "unchanged": len(self.unchanged),
        }


# ---------------------------------------------------------------------------------------------
# Durable writes

WriteAction = Literal["allow", "warn", "block", "supersede"]
DECISION_RANK: Mapping[str, int] = {"allow": 0, "warn": 1, "supersede": 2, "block": 3}


@dataclass(frozen=True)
class RelatedFact:
    """An existing memory related to a write candidate (found by search, the concept index or a
    scan of the target file). ``chunk_id`` is set for facts of the recall index, ``key`` for
    promoted MEMORY.md items."""

    text: str
    path: str
    start_line: int
    end_line: int
    similarity: float = 0.0
    chunk_id: int | None = None
    key: str | None = None
    source_date: dt.date | None = None


@dataclass(frozen=True)
class WriteCandidate:
    """A durable memory write about to happen: ``text`` goes into ``target`` (a workspace path)
    on behalf of ``source`` (dreaming, flush, remember, wiki…). ``path``/``start_line``/
    ``end_line`` say where the text came from when it was copied from a note; ``event_date``
    is the date the text itself states (a later note about an earlier event), used to order
    facts in time; ``depends_on`` names facts this one was derived from."""

    text: str
    target: str
    source: str
    key: str | None = None
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    heading: str = ""
    subject: str | None = None
    written_on: dt.date | None = None
    event_date: dt.date | None = None
    run_id: str | None = None
    score: float | None = None
    depends_on: tuple[str, ...] = ()

    @property
    def citation(self) -> str | None:
        if self.path is None or self.start_line is None:
            return None
        return f"{self.path}#L{self.start_line}-L{self.end_line or self.start_line}"


@dataclass(frozen=True)
class WriteDecision:
    """What ``before_message_write`` returns. ``action``: allow | warn | block | supersede. For
    supersede, ``supersedes`` names the keys / chunk ids whose validity interval is closed;
    ``conflicts`` are the existing facts the decision is about."""

    action: WriteAction
    reason: str = ""
    supersedes: tuple[str, ...] = ()
    source: str = ""
    conflicts: tuple[RelatedFact, ...] = ()


# ---------------------------------------------------------------------------------------------
# Conversations


class Message(TypedDict, total=False):
    """One chat message: ``role`` user | assistant | system | tool; ``id`` and ``ts`` (ISO 8601)
    when the runtime has them."""

    role: str
    content: str
    id: str
    ts: str


class Session(TypedDict, total=False):
    """The chat a hook runs for (every key optional).

    - ``id``: session id; ``chat_type``: direct | group | channel; ``chat_id``: conversation id;
      ``kind``: interactive | subagent | cron | heartbeat | oneshot | gate
    - ``messages``: the recent thread, oldest first; ``message``: the latest user message
    - ``model``: the session's chat model; ``gate_enabled``: per-session gate toggle;
      ``query_mode``: the gate's query mode for this call
    - compaction: ``context_window`` and ``total_tokens`` (tokens in use), ``compaction_count``
      (compactions so far), ``compaction_path`` (normal | forced | overflow)
    - ``task``: an explicit task descriptor for task-conditioned scoring
    - ``scope``: the privacy scope the session may read (e.g. ``private``)
    """

    id: str
    chat_type: str
    chat_id: str
    kind: str
    messages: list[Message]
    message: str
    model: str
    gate_enabled: bool
    query_mode: str
    context_window: int
    total_tokens: int
    compaction_count: int
    compaction_path: str
    task: str
    scope: str


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
    detail: JSONObject = field(default_factory=dict)

    def verbose_line(self) -> str:
        return f"Memory gate: {self.status} {self.elapsed_ms:.0f} ms, {len(self.note)} chars"


@dataclass(frozen=True)
class FlushResult:
    """What ``before_compaction`` returns: whether a flush turn wrote durable facts, the captured
    notes written, how many trivial messages went to the reversible cache, and the pointer line
    the runtime should put into its summary."""

    status: str
    flushed: bool = False
    captured_paths: tuple[str, ...] = ()
    cached_count: int = 0
    pointer: str = ""
    detail: JSONObject = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Consolidation

RunMode = Literal["nightly", "backfill"]


@dataclass(frozen=True)
class PromotedItem:
    """One item a consolidation run wrote into MEMORY.md: its key, text, the daily lines it cites
    (``path#Lx-Ly`` each) and the run's score for it."""

    key: str
    text: str
    sources: tuple[str, ...]
    score: float = 0.0
    section: str = ""


@dataclass
class ConsolidationRun:
    """What ``dreaming_phase`` and ``after_consolidation`` get: the run's identity, its journal
    (every file write through it is undone by ``lifelong dream rollback RUN``), the reports of
    the phases so far and, after the deep phase, what was promoted. The dreaming plugin's own
    run object extends this with its working state."""

    run_id: str
    now: dt.datetime
    mode: RunMode = "nightly"
    dry_run: bool = False
    journal: Journal | None = None
    reports: dict[str, JSONObject] = field(default_factory=dict)
    promoted_items: list[PromotedItem] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Status


@dataclass(frozen=True)
class StatusReport:
    """One plugin's part of ``lifelong status``: a few human lines (``summary``), the same facts as
    JSON (``data``), problems the user should know about (``warnings``) and what to do next
    (``next_steps``, commands to run)."""

    plugin: str
    summary: tuple[str, ...] = ()
    data: JSONObject = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Recall's index, for other plugins

# recall's own SQLite tables are its private business: another plugin reads and writes the index
# only through the :class:`RecallStore` that ``ctx.recall`` returns (hook ``provide_recall_store``)


@dataclass(frozen=True)
class ChunkRecord:
    """One chunk of recall's index: lines ``start_line``..``end_line`` of ``path`` (1-based,
    inclusive). ``hash`` is the sha256 of ``text``; ``source_date`` the epoch seconds of its day
    (daily notes) or of its file's mtime; ``validity_start``/``validity_end`` its validity
    interval (None: open), ``superseded_by`` what closed it."""

    id: int
    path: str
    start_line: int
    end_line: int
    text: str
    heading: str = ""
    corpus: str = "memory"
    hash: str = ""
    source_date: float | None = None
    evergreen: bool = False
    generated: bool = False
    validity_start: float | None = None
    validity_end: float | None = None
    superseded_by: str | None = None


@dataclass(frozen=True)
class UnitRecord:
    """One retrieval unit of a chunk (a list item, a turn, a paragraph)."""

    chunk_id: int
    start_line: int
    end_line: int
    heading: str
    text: str


class RecallEvent(NamedTuple):
    """One search result recall recorded: the search (``ts``, ``day`` in the workspace time zone,
    the query and its hash, ``source`` tool | gate | cli | eval) and the lines it returned with
    their relevance before decay (``score``)."""

    id: int
    ts: float
    day: str
    query_hash: str
    query: str
    path: str
    start_line: int
    end_line: int
    score: float
    source: str


@dataclass(frozen=True)
class ChunkFilter:
    """Which chunks a read returns: those valid at ``at`` (epoch seconds) by ``mode`` (current:
    not closed by then; valid-at: open at that instant; all: any) in ``corpus`` seen from
    ``scope`` (see ``lifelong.privacy``; None: every corpus)."""

    mode: ValidityMode = "all"
    at: float | None = None
    corpus: Corpus | None = None
    scope: str = "shared"

    @classmethod
    def for_request(cls, request: SearchRequest, now: dt.datetime) -> ChunkFilter:
        """The chunks ``request`` may return at ``now``: valid at its ``as_of`` (mode valid-at)
        or now, in its corpus and scope."""
        at = request.as_of if request.mode == "valid-at" and request.as_of is not None else now
        return cls(request.mode, at.timestamp(), request.corpus, request.scope)


class RecallStore(Protocol):
    """The recall index as other plugins may use it: ``ctx.recall`` (None when no plugin
    provides one, e.g. recall disabled). Reads see the caller's connection; writes join the
    caller's transaction (the caller commits, under ``ctx.store.lock``)."""

    def chunk_count(self) -> int:
        """How many chunks the index holds (every corpus, closed ones included)."""
        ...

    def chunks(
        self,
        *,
        ids: Sequence[int] | None = None,
        paths: Sequence[str] | None = None,
        where: ChunkFilter | None = None,
        open_only: bool = False,
        include_generated: bool = True,
    ) -> list[ChunkRecord]:
        """The chunks with these ids and/or of these paths (None: no restriction) passing
        ``where``; ``open_only``: only those whose validity is open; ``include_generated``
        False leaves out the suite's own managed sections. Ordered by id."""
        ...

    def chunk_at(self, path: str, start_line: int, end_line: int) -> int | None:
        """The id of the last-starting chunk of ``path`` that holds lines start..end, or None."""
        ...

    def units(self, chunk_ids: Sequence[int]) -> dict[int, list[UnitRecord]]:
        """The retrieval units of these chunks, by chunk id, in line order (a chunk without
        units is absent)."""
        ...

    def keyword_ids(self, match: str, limit: int) -> list[int]:
        """Chunk ids best-first for a full-text query in SQLite FTS5 MATCH syntax (``"word"``,
        ``"stem"*``, ``OR``), at most ``limit``. A query FTS5 cannot parse raises InputError."""
        ...

    def doc_freqs(self, terms: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each term of the full-text index (as it tokenises: lower case,
        diacritics removed); a term in none is absent."""
        ...

    def close_chunk(self, chunk: ChunkRecord, end: float, superseded_by: str) -> bool:
        """Close an open chunk's validity at ``end`` (epoch seconds) because of
        ``superseded_by``, and keep the closing across a re-index of its file. False when it
        was closed already."""
        ...

    def events(
        self,
        *,
        ids: Sequence[int] | None = None,
        after: float | None = None,
        until: float | None = None,
        path_prefix: str | None = None,
    ) -> list[RecallEvent]:
        """Recorded search results by id, or in the time window ``after`` < ts <= ``until``,
        of paths starting with ``path_prefix``; ordered by id."""
        ...

    def decay(self, age_days: float | None) -> float:
        """Recall's temporal decay for content ``age_days`` old (its configured half-life and
        floor); 1.0 for None (evergreen)."""
        ...


# ---------------------------------------------------------------------------------------------
# Registration


class EmbeddingUnavailable(LifelongError):
    """The embedding provider could not embed (missing key, network, quota)."""


class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors: stored text as passages, searches as
    queries. A provider that fails raises :class:`EmbeddingUnavailable`."""

    provider: str
    model: str

    @property
    def dim(self) -> int: ...

    def embed_passages(self, texts: list[str]) -> npt.NDArray[np.float32]: ...

    def embed_query(self, text: str) -> npt.NDArray[np.float32]: ...

    def status_warning(self) -> str | None: ...


ToolHandler = Callable[..., JSONObject]


class ToolRegistrar(Protocol):
    """``register(name, description, parameters, handler, plugin, annotations=None, agent=True)``:
    ``parameters`` is a JSON-Schema object (OpenAI/litellm function parameters); ``handler(ctx,
    **arguments)`` returns a JSON object (errors as ``{"error": ...}``); ``annotations`` are MCP
    tool annotations (``readOnlyHint``, ``destructiveHint``…). ``agent=False`` registers a
    service for the suite's own plugins (``ctx.call_tool``) that is never offered to a model: not
    in ``Memory.tools()``, the MCP server or ``lifelong chat``."""

    def __call__(
        self,
        name: str,
        description: str,
        parameters: JSONObject,
        handler: ToolHandler,
        plugin: str = "",
        annotations: JSONObject | None = None,
        agent: bool = True,
    ) -> None: ...


CommandRegistrar = Callable[["click.Group"], None]
MigrationRegistrar = Callable[["Migrations"], None]
