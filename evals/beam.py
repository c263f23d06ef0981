"""BEAM's 100K-token chats as lifelong workspaces: message-level evidence recall within a budget.

    PYTHONPATH=. python -m evals.beam [--chats N] [--fts-only] [--data PATH] [--json OUT.json]
                                      [--max-minutes M] [--cache DIR]

BEAM ("Beyond a Million Tokens", github.com/mohammadtavakoli78/BEAM, arXiv 2510.27246) holds long
user-assistant chats with probing questions for ten memory abilities. This script reads the 20
chats of its 100K size from ``--data`` (never copied into the repository):

- a BEAM checkout, its ``chats/`` folder or its ``chats/100K`` folder, or a folder laid out as
  ``<chat>/chat.json`` + ``<chat>/probing_questions/probing_questions.json``;
- a bare git directory of the repository (as ``fetch`` leaves it): the needed files are extracted
  to ``~/.cache/lifelong-evals/beam/data/100K/`` (``$LIFELONG_EVALS_CACHE`` moves the cache) and
  the path is printed;
- without ``--data``: ``$BEAM_DIR``, else the mirror ``/work/.mirror/mohammadtavakoli78+BEAM/repo``,
  else the extracted cache.

**Data.** A chat is ``chat.json`` (or ``chat_trunecated.json`` where BEAM cut the chat to its
token size: BEAM's own answer generation prefers it, and so does this script): a list of batches
``{batch_number, turns: [[message, ...], ...]}``, every message ``{role, id, content}`` with ``id``
running 0, 1, 2, ... through the chat; the first user message of each batch carries its
``time_anchor`` (``"March-15-2024"``). ``probing_questions.json`` maps each ability
(``abstention``, ``contradiction_resolution``, ``event_ordering``, ``information_extraction``,
``instruction_following``, ``knowledge_update``, ``multi_session_reasoning``,
``preference_following``, ``summarization``, ``temporal_reasoning``) to its questions; a
question names its evidence in ``source_chat_ids``, message ids: a list, or for three abilities
a mapping (knowledge update ``{original_info, updated_info}``, contradiction resolution
``{first_statement, second_statement}``, temporal reasoning ``{first_event, second_event}``).
Abstention questions have no evidence (nothing to find, by design) and a few others an empty
list: they are skipped and counted; an id naming no message is dropped and listed.

**Workspace.** Each batch becomes the daily file ``memory/<anchor date>.md`` (a second batch on
the same day ``memory/<date>-b<N>.md``), the chat written as an agent's transcript: each message
``**User:** first line`` / ``**Assistant:** first line`` and the rest of its content verbatim
(its markdown, lists and code), a blank line between messages. No id is written into the text;
a side table maps every non-blank line to its message. The index is the real recall pipeline
(``RecallIndex.sync``), cached under ``~/.cache/lifelong-evals/beam/workspaces/`` (``--cache``),
with the clock pinned to the day after the last batch, when every question is asked.

**Scoring** (the question is the unit; means over questions, per ability and overall). Each
question goes through the ``memory_search`` tool as an agent calls it, with ``max_tokens`` 2,000
and 5,000 and the tool's other defaults. Only the text the caller receives counts: each result's
snippet is located inside the result's own lines (its ``…``-cut pieces, line by line), and a
message counts as returned when at least :data:`PRESENT_CHARS` of its characters (all of them,
for a shorter message) are in the returned snippets. *Evidence recall* is the fraction of the
question's evidence messages returned. A message counts as *whole* when 90% of its characters
are returned (reported beside it: a long assistant message is often returned in part).

Baselines in the same run: **BM25 over whole messages** (bm25s, English stop words, Snowball
stems; one document per message), filling the same budget with whole messages in rank order (a
message that does not fit is skipped, the next tried); and for knowledge update and
contradiction resolution **newest matching line**: the message of the newest line of the
transcript among those holding the most of the question's words (BM25's tokens: stop words left
out, stems compared): a grep for the question whose latest matching line wins, one message.

Printed: the table per ability (n, lifelong@2k, lifelong@5k, BM25@2k, BM25@5k) and overall, the
knowledge-update / contradiction table with the newest matching line, how full each budget was, search
latency p50 / p95 (the whole tool call: query embedding, auto-sync check, search) and index time
(estimated tokens per second). ``--json`` writes all of it and one row per question.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SIZE = "100K"
BUDGETS = (2000, 5000)
PRESENT_CHARS = 40  # a message counts as returned with this many of its characters (or all)
WHOLE_SHARE = 0.9  # ... and as returned whole with this share of them
MIRROR = Path("/work/.mirror/mohammadtavakoli78+BEAM/repo")
CACHE = Path(os.environ.get("LIFELONG_EVALS_CACHE") or Path.home() / ".cache" / "lifelong-evals") / "beam"
ANCHOR_FORMAT = "%B-%d-%Y"  # "March-15-2024"
ASK_DELAY = dt.timedelta(days=1)  # questions are asked the day after the last batch
PLUGINS = ("embeddings", "recall")
UPDATE_ABILITIES = ("knowledge_update", "contradiction_resolution")
ROLE_MARKS = {"user": "User", "assistant": "Assistant"}
_BLOCK_START = re.compile(r"^(#{1,6}\s|```|~~~|[-*+]\s|\d+[.)]\s|\||>)")


# ---------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Message:
    id: int
    role: str
    content: str


@dataclass(frozen=True)
class Batch:
    number: int
    day: dt.date
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Probe:
    qid: str  # beam-100K-<chat>-<ability>-<index>
    ability: str
    question: str
    evidence: tuple[int, ...]  # message ids, in the order BEAM lists them, no repeats
    evidence_parts: Mapping[str, tuple[int, ...]] = field(default_factory=dict)  # e.g. updated_info


@dataclass(frozen=True)
class Chat:
    name: str  # the folder name: "1" .. "20"
    transcript: str  # the file read: chat_trunecated.json or chat.json
    batches: tuple[Batch, ...]
    probes: tuple[Probe, ...]

    @property
    def messages(self) -> dict[int, Message]:
        return {m.id: m for b in self.batches for m in b.messages}

    @property
    def ask_time(self) -> dt.datetime:
        """When every question is asked: the day after the last batch (UTC)."""
        last = self.batches[-1].day
        return dt.datetime(last.year, last.month, last.day, 12, tzinfo=dt.UTC) + ASK_DELAY


@dataclass
class LoadReport:
    """What loading left out, listed: nothing silently changed."""

    chats: int = 0
    questions: int = 0
    skipped: list[dict[str, Any]] = field(default_factory=list)  # no evidence
    dropped_ids: list[dict[str, Any]] = field(default_factory=list)  # ids naming no message
    undated_batches: list[str] = field(default_factory=list)
    sha256: dict[str, str] = field(default_factory=dict)

    def skipped_by_ability(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.skipped:
            out[s["ability"]] = out.get(s["ability"], 0) + 1
        return out


def flat_ids(value: Any) -> list[Any]:
    """Every leaf of a ``source_chat_ids`` value (a list, a mapping of lists, or nested)."""
    if isinstance(value, Mapping):
        return [i for v in value.values() for i in flat_ids(v)]
    if isinstance(value, list | tuple):
        return [i for v in value for i in flat_ids(v)]
    return [] if value is None else [value]


def parse_anchor(text: str) -> dt.date:
    return dt.datetime.strptime(text.strip(), ANCHOR_FORMAT).date()


def chat_batches(raw: list[dict[str, Any]], name: str, report: LoadReport) -> tuple[Batch, ...]:
    batches: list[Batch] = []
    for i, b in enumerate(raw):
        messages = tuple(
            Message(int(m["id"]), str(m["role"]), str(m.get("content") or ""))
            for turn in b["turns"]
            for m in turn
        )
        anchors = [m["time_anchor"] for turn in b["turns"] for m in turn if m.get("time_anchor")]
        anchor = b.get("time_anchor") or (anchors[0] if anchors else None)
        if anchor:
            day = parse_anchor(anchor)
        else:  # none in BEAM's 100K chats; the day after the previous batch keeps the order
            day = batches[-1].day + dt.timedelta(days=1) if batches else dt.date(2024, 1, 1)
            report.undated_batches.append(f"{name}/{b.get('batch_number', i + 1)}")
        batches.append(Batch(int(b.get("batch_number") or i + 1), day, messages))
    return tuple(batches)


def chat_probes(raw: Mapping[str, list[dict[str, Any]]], name: str, known: set[int], report: LoadReport):
    probes: list[Probe] = []
    for ability, questions in raw.items():
        for qi, q in enumerate(questions):
            qid = f"beam-{SIZE}-{name}-{ability}-{qi}"
            source = q.get("source_chat_ids")
            ids = flat_ids(source)
            bad = [i for i in ids if not isinstance(i, int) or i not in known]
            if bad:
                report.dropped_ids.append({"chat": name, "qid": qid, "ids": bad})
            good = list(dict.fromkeys(i for i in ids if isinstance(i, int) and i in known))
            if not good:
                reason = "abstention: no evidence by design" if source is None else "no evidence id"
                report.skipped.append({"chat": name, "qid": qid, "ability": ability, "reason": reason})
                continue
            parts = (
                {k: tuple(i for i in flat_ids(v) if i in known) for k, v in source.items()}
                if isinstance(source, Mapping)
                else {}
            )
            probes.append(Probe(qid, ability, str(q["question"]), tuple(good), parts))
    return tuple(probes)


def load_chat(folder: Path, report: LoadReport) -> Chat:
    transcript = folder / "chat_trunecated.json"
    if not transcript.exists():
        transcript = folder / "chat.json"
    questions = folder / "probing_questions" / "probing_questions.json"
    for p in (transcript, questions):
        report.sha256[f"{folder.name}/{p.relative_to(folder)}"] = hashlib.sha256(p.read_bytes()).hexdigest()
    batches = chat_batches(json.loads(transcript.read_text("utf-8")), folder.name, report)
    known = {m.id for b in batches for m in b.messages}
    probes = chat_probes(json.loads(questions.read_text("utf-8")), folder.name, known, report)
    report.chats += 1
    report.questions += len(probes)
    return Chat(folder.name, transcript.name, batches, probes)


def chat_folders(root: Path) -> list[Path]:
    """The chat folders under ``root`` in numeric order (1, 2, ..., 10, ...)."""
    found = [p for p in root.iterdir() if (p / "probing_questions" / "probing_questions.json").exists()]
    return sorted(found, key=lambda p: (0, int(p.name)) if p.name.isdigit() else (1, p.name))


def load_chats(root: Path, limit: int | None = None) -> tuple[list[Chat], LoadReport]:
    report = LoadReport()
    folders = chat_folders(root)[:limit] if limit else chat_folders(root)
    return [load_chat(f, report) for f in folders], report


# ---------------------------------------------------------------------------------------------
# Where the data is


def is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def chats_root(path: Path) -> Path | None:
    """The folder holding the 100K chats' folders, given a checkout, ``chats/``, ``chats/100K``
    or that folder itself."""
    for candidate in (path / "chats" / SIZE, path / SIZE, path):
        if candidate.is_dir() and chat_folders(candidate):
            return candidate
    return None


def extract_from_git(git_dir: Path, dest: Path, log: Callable[[str], None]) -> tuple[Path, str]:
    """Extract each 100K chat's transcript and probing questions from a bare git directory to
    ``dest/100K/<chat>/`` (once per commit); (that folder, the commit)."""

    def git(*args: str) -> bytes:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=True).stdout

    commit = git("rev-parse", "HEAD").decode().strip()
    out = dest / SIZE
    stamp = out / "SOURCE"
    if stamp.exists() and stamp.read_text().split() == [str(git_dir), commit]:
        return out, commit
    names = git("ls-tree", "-r", "--name-only", "HEAD", f"chats/{SIZE}/").decode().splitlines()
    wanted = ("chat.json", "chat_trunecated.json", "probing_questions/probing_questions.json")
    for name in names:
        parts = name.split("/", 3)
        if len(parts) == 4 and parts[3] in wanted:
            target = out / parts[2] / parts[3]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(git("show", f"HEAD:{name}"))
    stamp.write_text(f"{git_dir} {commit}\n")
    log(f"BEAM {SIZE} chats extracted from {git_dir} (commit {commit[:12]}) to {out}")
    return out, commit


def resolve_data(arg: str | None, log: Callable[[str], None]) -> tuple[Path, dict[str, Any]]:
    """The folder of the 100K chats and where it came from (``--data``, else ``$BEAM_DIR``, the
    mirror, the extracted cache)."""
    tried = [arg] if arg else [os.environ.get("BEAM_DIR"), str(MIRROR), str(CACHE / "data")]
    for item in tried:
        if not item:
            continue
        path = Path(item).expanduser()
        if is_git_dir(path):
            root, commit = extract_from_git(path, CACHE / "data", log)
            return root, {"source": str(path), "commit": commit, "extracted_to": str(root)}
        if path.is_dir() and (root := chats_root(path)) is not None:
            return root, {"source": str(root)}
    where = f"--data {arg}" if arg else "$BEAM_DIR, " + ", ".join(str(t) for t in tried[1:])
    raise SystemExit(
        f"no BEAM {SIZE} chats found in {where}: fetch github.com/mohammadtavakoli78/BEAM (a checkout or a "
        "bare git directory) and pass --data PATH or set BEAM_DIR"
    )


# ---------------------------------------------------------------------------------------------
# Workspaces


@dataclass(frozen=True)
class ChatFile:
    relpath: str
    text: str
    message_by_line: dict[int, int]  # 1-based line -> message id (non-blank lines only)

    def lines(self) -> list[str]:
        return self.text.split("\n")


def message_lines(m: Message) -> list[str]:
    """A message as a transcript writes it: ``**User:** first line`` and the rest verbatim (the
    mark on a line of its own when the message opens with a heading, list, table or code)."""
    mark = f"**{ROLE_MARKS.get(m.role, m.role.title())}:**"
    body = [line.rstrip() for line in m.content.strip("\n").split("\n")]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    if not body:
        return [mark]
    if _BLOCK_START.match(body[0].lstrip()):
        return [mark, *body]
    return [f"{mark} {body[0].strip()}", *body[1:]]


def chat_files(chat: Chat) -> dict[str, ChatFile]:
    """relpath -> the daily file of each batch (pure)."""
    files: dict[str, ChatFile] = {}
    seen: set[dt.date] = set()
    for b in chat.batches:
        day = b.day.isoformat()
        name = f"memory/{day}.md" if b.day not in seen else f"memory/{day}-b{b.number}.md"
        seen.add(b.day)
        lines = [f"# {day}: chat with my assistant", ""]
        by_line: dict[int, int] = {}
        for m in b.messages:
            if len(lines) > 2:
                lines.append("")
            for text in message_lines(m):
                lines.append(text)
                if text.strip():
                    by_line[len(lines)] = m.id
        files[name] = ChatFile(name, "\n".join(lines) + "\n", by_line)
    return files


def workspace_config(fts_only: bool) -> dict[str, Any]:
    from .locomo import WORKSPACE_CONFIG

    cfg = json.loads(json.dumps(WORKSPACE_CONFIG))
    if fts_only:
        cfg["embedding"] = {"provider": "none"}
    return cfg


def write_workspace(chat: Chat, root: Path, fts_only: bool) -> dict[str, ChatFile]:
    """Lay the chat out under ``root``; unchanged files are left alone (a cached index stays in
    sync), daily files that no longer belong are removed."""
    import yaml

    from .locomo import _write_if_changed

    files = chat_files(chat)
    memory = root / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    for old in memory.glob("*.md"):
        if f"memory/{old.name}" not in files:
            old.unlink()
    _write_if_changed(root / "lifelong.yaml", yaml.safe_dump(workspace_config(fts_only), sort_keys=True))
    for rel, f in files.items():
        _write_if_changed(root / rel, f.text)
    return files


# ---------------------------------------------------------------------------------------------
# What the caller received, message by message (pure)


@dataclass(frozen=True)
class Returned:
    """Characters of each message inside the returned text, and what could not be placed."""

    chars: dict[int, int]
    unplaced: int = 0  # snippet pieces found nowhere in their result's lines


def message_sizes(files: Mapping[str, ChatFile]) -> dict[int, int]:
    """Characters of each message as written (its non-blank lines, stripped)."""
    sizes: dict[int, int] = {}
    for f in files.values():
        lines = f.lines()
        for n, mid in f.message_by_line.items():
            sizes[mid] = sizes.get(mid, 0) + len(lines[n - 1].strip())
    return sizes


def returned_chars(results: Sequence[Mapping[str, Any]], files: Mapping[str, ChatFile]) -> Returned:
    """Place each result's snippet (as the tool returned it) in the result's own lines
    (``start_line``..``end_line``): its ``…``-cut pieces line by line, each found after the
    previous one; every character placed counts for the message of its line."""
    chars: dict[int, int] = {}
    unplaced = 0
    for r in results:
        f = files.get(str(r.get("path")))
        if f is None:
            unplaced += 1
            continue
        file_lines = f.lines()
        first = int(r["start_line"])
        span = file_lines[first - 1 : int(r["end_line"])]
        row, col = 0, 0  # where the next piece is looked for
        for piece in _pieces(str(r.get("snippet") or "")):
            at = _find(span, piece, row, col)
            if at is None:
                at = _find(span, piece, 0, 0)
            if at is None:
                unplaced += 1
                continue
            row, col = at[0], at[1] + len(piece)
            mid = f.message_by_line.get(first + row)
            if mid is not None:
                chars[mid] = chars.get(mid, 0) + len(piece)
    return Returned(chars, unplaced)


_CUTS = re.compile(r"…|\n|\[redacted[^\]\n]{0,40}\]")  # cut ends, lines, the search's redactions


def _pieces(snippet: str) -> list[str]:
    """The snippet's text pieces: cut at ``…``, at line ends and at a ``[redacted …]`` mark (the
    search redacts what looks like a secret), stripped, empty ones left out."""
    return [p.strip() for p in _CUTS.split(snippet) if p.strip()]


def _find(span: Sequence[str], piece: str, row: int, col: int) -> tuple[int, int] | None:
    for i in range(row, len(span)):
        j = span[i].find(piece, col if i == row else 0)
        if j >= 0:
            return i, j
    return None


def present(returned: Returned, sizes: Mapping[int, int], share: float | None = None) -> set[int]:
    """Messages returned: at least :data:`PRESENT_CHARS` characters (all, when shorter); with
    ``share``, that share of their characters."""
    out = set()
    for mid, got in returned.chars.items():
        size = sizes.get(mid, 0)
        need = size * share if share is not None else min(PRESENT_CHARS, size)
        if size and got >= need:
            out.add(mid)
    return out


def recall(found: Iterable[int], evidence: Sequence[int]) -> float:
    got = set(found)
    return sum(1 for e in evidence if e in got) / len(evidence) if evidence else 0.0


# ---------------------------------------------------------------------------------------------
# Baselines


class MessageBM25:
    """BM25 over whole messages (bm25s with the LoCoMo baseline's tokenising: English stop words,
    Snowball stems), answering with whole messages."""

    def __init__(self, chat: Chat, files: Mapping[str, ChatFile]):
        import bm25s

        from lifelong.markdown import estimate_tokens

        from .suite_retrieval import TurnBM25

        self._bm25s = bm25s
        self._tokenizing = TurnBM25._tokenizing()
        self.ids = [m.id for b in chat.batches for m in b.messages]
        written = _written_messages(files)
        self.cost = {mid: estimate_tokens(written.get(mid, "")) for mid in self.ids}
        corpus = [m.content for b in chat.batches for m in b.messages]
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(corpus, **self._tokenizing), show_progress=False)
        line_of = [
            (f.message_by_line[n], f.lines()[n - 1])
            for f in files.values()
            for n in sorted(f.message_by_line)
        ]
        words = bm25s.tokenize([text for _, text in line_of], return_ids=False, **self._tokenizing)
        self.line_words = [(mid, frozenset(ws)) for (mid, _), ws in zip(line_of, words, strict=True)]

    def query_words(self, query: str) -> frozenset[str]:
        return frozenset(self._bm25s.tokenize([query], return_ids=False, **self._tokenizing)[0])

    def ranked(self, query: str) -> list[tuple[int, float]]:
        """(message id, score) for every message scoring above zero, best first."""
        tokens = self._bm25s.tokenize([query], **self._tokenizing)
        if not tokens.vocab or not any(tokens.ids):
            return []
        docs, scores = self.retriever.retrieve(tokens, k=len(self.ids), show_progress=False, n_threads=1)
        return [(self.ids[int(i)], float(s)) for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def within_budget(self, ranked: Sequence[tuple[int, float]], budget: int) -> list[int]:
        return fill_budget([mid for mid, _ in ranked], self.cost, budget)


def fill_budget(ranked: Sequence[int], cost: Mapping[int, int], budget: int) -> list[int]:
    """Whole messages in rank order while they fit; one that does not fit is skipped."""
    out, used = [], 0
    for mid in ranked:
        if used + cost[mid] <= budget:
            out.append(mid)
            used += cost[mid]
    return out


def newest_match(query: frozenset[str], line_words: Sequence[tuple[int, frozenset[str]]]) -> int | None:
    """The message of the newest line (``line_words``: (message id, words) in transcript order)
    among those holding the most of the ``query`` words; None when no line holds any."""
    best, found = 0, None
    for mid, words in line_words:
        held = len(query & words)
        if held and held >= best:
            best, found = held, mid
    return found


def _written_messages(files: Mapping[str, ChatFile]) -> dict[int, str]:
    """Each message's text as written in the workspace (its mark and lines)."""
    parts: dict[int, list[str]] = {}
    for f in files.values():
        lines = f.lines()
        for n in sorted(f.message_by_line):
            parts.setdefault(f.message_by_line[n], []).append(lines[n - 1])
    return {mid: "\n".join(ls) for mid, ls in parts.items()}


# ---------------------------------------------------------------------------------------------
# Running


def index_chat(
    chat: Chat, root: Path, fts_only: bool, log: Callable[[str], None], reindex: bool = False
) -> tuple[dict[str, ChatFile], dict[str, Any]]:
    """Write the workspace and bring its index up to date (re-chunked when the recall code
    changed since the cached index was built; built from nothing, embeddings too, with
    ``reindex``)."""
    from lifelong_plugins.recall import service

    from lifelong import clock
    from lifelong.host import Host
    from lifelong.markdown import estimate_tokens
    from lifelong.workspace import Workspace

    from .suite_retrieval import recall_fingerprint

    if reindex and (root / ".lifelong").exists():
        shutil.rmtree(root / ".lifelong")
    files = write_workspace(chat, root, fts_only)
    stamp = root / ".lifelong" / "eval-fingerprint"
    fingerprint = recall_fingerprint()
    force = stamp.exists() and stamp.read_text().strip() != fingerprint
    host = Host(Workspace(root), builtins=PLUGINS, entry_points=False)
    try:
        with clock.pinned(chat.ask_time):
            started = time.monotonic()
            report = service.index_for(host.ctx).sync(force=force)
            elapsed = time.monotonic() - started
        chunks = host.store.execute("SELECT count(*) FROM chunks").fetchone()[0]
    finally:
        host.close()
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(fingerprint)
    tokens = sum(estimate_tokens(f.text) for f in files.values())
    info = {
        "chat": chat.name,
        "messages": len(chat.messages),
        "tokens": tokens,
        "chunks": chunks,
        "embedded": report.embedded + report.units_embedded + report.sentences_embedded,
        "embedded_chunks": report.embedded,
        "embedded_units": report.units_embedded,
        "embedded_sentences": report.sentences_embedded,
        "embedding_cache_hits": report.cache_hits,
        "indexed_now": report.chunks_added > 0,
        "forced": force,
        "index_s": round(elapsed, 4),
    }
    log(
        f"chat {chat.name}: {len(chat.messages)} messages, {tokens:,} tokens, {chunks} chunks; "
        f"sync {elapsed:.1f} s ({report.chunks_added} chunks added; embedded {report.embedded} chunks, "
        f"{report.units_embedded} units, {report.sentences_embedded} sentences)"
    )
    return files, info


def ask_chat(
    chat: Chat, root: Path, files: Mapping[str, ChatFile], budgets: Sequence[int] = BUDGETS
) -> tuple[list[dict[str, Any]], list[float]]:
    """Every question of ``chat`` through ``memory_search`` at each budget, and the baselines;
    (one row per question, search times in ms)."""
    from lifelong import clock
    from lifelong.host import Host
    from lifelong.markdown import estimate_tokens
    from lifelong.workspace import Workspace

    sizes = message_sizes(files)
    bm25 = MessageBM25(chat, files)
    rows: list[dict[str, Any]] = []
    times: list[float] = []
    host = Host(Workspace(root), builtins=PLUGINS, entry_points=False)
    try:
        with clock.pinned(chat.ask_time):
            for p in chat.probes:
                row: dict[str, Any] = {
                    "qid": p.qid,
                    "chat": chat.name,
                    "ability": p.ability,
                    "evidence": list(p.evidence),
                    "evidence_parts": {k: list(v) for k, v in p.evidence_parts.items()},
                    "lifelong": {},
                    "bm25": {},
                }
                for budget in budgets:
                    started = time.monotonic()
                    out = host.ctx.call_tool(
                        "memory_search", query=p.question, max_tokens=budget, source="eval"
                    )
                    times.append((time.monotonic() - started) * 1000)
                    if "error" in out:
                        raise RuntimeError(f"{p.qid}: memory_search failed: {out['error']}")
                    results = out["results"]
                    got = returned_chars(results, files)
                    found = present(got, sizes)
                    whole = present(got, sizes, WHOLE_SHARE)
                    row["lifelong"][str(budget)] = {
                        "returned": sorted(found),
                        "whole": sorted(whole & set(p.evidence)),
                        "results": len(results),
                        "tokens": sum(estimate_tokens(str(r.get("snippet") or "")) for r in results),
                        "unplaced": got.unplaced,
                    }
                ranked = bm25.ranked(p.question)
                for budget in budgets:
                    picked = bm25.within_budget(ranked, budget)
                    row["bm25"][str(budget)] = {
                        "returned": picked,
                        "tokens": sum(bm25.cost[m] for m in picked),
                    }
                if p.ability in UPDATE_ABILITIES:
                    newest = newest_match(bm25.query_words(p.question), bm25.line_words)
                    row["newest_match"] = [] if newest is None else [newest]
                rows.append(row)
    finally:
        host.close()
    return rows, times


def score_rows(rows: Sequence[Mapping[str, Any]], budgets: Sequence[int] = BUDGETS) -> list[dict[str, Any]]:
    """Each row's recall figures (pure): ``lifelong@2000``, ``bm25@2000``, ..., ``whole@2000``,
    ``newest_match``, and for the abilities whose evidence has parts, ``<part>:<system>``."""
    out = []
    for row in rows:
        ev = row["evidence"]
        m: dict[str, float] = {}
        for b in budgets:
            life = row["lifelong"][str(b)]
            m[f"lifelong@{b}"] = recall(life["returned"], ev)
            m[f"whole@{b}"] = recall(life["whole"], ev)
            m[f"bm25@{b}"] = recall(row["bm25"][str(b)]["returned"], ev)
        if "newest_match" in row:
            m["newest_match"] = recall(row["newest_match"], ev)
        for part, ids in row.get("evidence_parts", {}).items():
            if not ids:
                continue
            for b in budgets:
                m[f"{part}:lifelong@{b}"] = recall(row["lifelong"][str(b)]["returned"], ids)
                m[f"{part}:bm25@{b}"] = recall(row["bm25"][str(b)]["returned"], ids)
            if "newest_match" in row:
                m[f"{part}:newest_match"] = recall(row["newest_match"], ids)
        out.append({"qid": row["qid"], "ability": row["ability"], "metrics": m})
    return out


def aggregate(scored: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Means per ability and ``overall`` (over questions); each with its ``n``."""
    groups: dict[str, list[Mapping[str, float]]] = {}
    for s in scored:
        groups.setdefault(s["ability"], []).append(s["metrics"])
        groups.setdefault("overall", []).append(s["metrics"])
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(groups, key=lambda g: (g == "overall", g)):
        ms = groups[name]
        keys = sorted({k for m in ms for k in m})
        out[name] = {"n": len(ms)}
        for k in keys:
            vals = [m[k] for m in ms if k in m]
            out[name][k] = round(sum(vals) / len(vals), 4)
            if len(vals) != len(ms):  # a part some questions lack (one updated_info is empty)
                out[name][f"n:{k}"] = len(vals)
    return out


def fill(rows: Sequence[Mapping[str, Any]], budgets: Sequence[int] = BUDGETS) -> dict[str, Any]:
    """How full each budget was: mean returned tokens / budget, and the mean result count."""
    out: dict[str, Any] = {}
    for b in budgets:
        life = [r["lifelong"][str(b)] for r in rows]
        base = [r["bm25"][str(b)] for r in rows]
        if not life:
            continue
        out[str(b)] = {
            "lifelong_fill": round(sum(x["tokens"] for x in life) / len(life) / b, 3),
            "lifelong_results": round(sum(x["results"] for x in life) / len(life), 1),
            "lifelong_unplaced_pieces": sum(x["unplaced"] for x in life),
            "bm25_fill": round(sum(x["tokens"] for x in base) / len(base) / b, 3),
            "bm25_messages": round(sum(len(x["returned"]) for x in base) / len(base), 1),
        }
    return out


def percentile(values: Sequence[float], p: float) -> float:
    from .suite_retrieval import percentile as pct

    return pct(values, p)


# ---------------------------------------------------------------------------------------------
# Report


def _f(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.3f}"


TARGETS = {5000: 0.65, 2000: 0.55}  # issue 42: overall evidence recall at these budgets


def targets_line(agg: Mapping[str, Mapping[str, Any]], budgets: Sequence[int]) -> str:
    """Issue 42's targets: overall recall @5k >= 0.65 and @2k >= 0.55, and above BM25 (at the
    same budget) in every ability where BM25 is above zero."""
    overall = agg.get("overall", {})
    parts = []
    for b, goal in TARGETS.items():
        if f"lifelong@{b}" in overall:
            got = overall[f"lifelong@{b}"]
            parts.append(
                f"@{b} {got:.3f} {'>=' if got >= goal else '<'} {goal} {'met' if got >= goal else 'missed'}"
            )
    behind = [
        f"{name}@{b}"
        for name, a in agg.items()
        if name != "overall"
        for b in budgets
        if a.get(f"bm25@{b}", 0) > 0 and a[f"lifelong@{b}"] <= a[f"bm25@{b}"]
    ]
    parts.append("above BM25 everywhere" if not behind else "not above BM25: " + ", ".join(behind))
    return "targets (issue 42): " + "; ".join(parts)


def report_text(results: Mapping[str, Any]) -> str:
    agg = results["aggregate"]
    budgets = results["config"]["budgets"]
    k = {b: f"{b // 1000}k" if b % 1000 == 0 else str(b) for b in budgets}
    head = (
        f"{'ability':26s} {'n':>4s}  "
        + "  ".join(f"{'lifelong@' + k[b]:>11s}" for b in budgets)
        + "  "
        + "  ".join(f"{'BM25@' + k[b]:>9s}" for b in budgets)
        + "  "
        + "  ".join(f"{'whole@' + k[b]:>9s}" for b in budgets)
    )
    lines = [
        f"BEAM {SIZE}: {results['chats']} chats, {agg.get('overall', {}).get('n', 0)} questions "
        f"({'FTS only' if results['config']['fts_only'] else 'default embedder'}); message-level evidence recall",
        head,
        "-" * len(head),
    ]
    for name, a in agg.items():
        if name == "overall":
            lines.append("-" * len(head))
        lines.append(
            f"{name:26s} {a['n']:4d}  "
            + "  ".join(f"{a[f'lifelong@{b}']:11.3f}" for b in budgets)
            + "  "
            + "  ".join(f"{a[f'bm25@{b}']:9.3f}" for b in budgets)
            + "  "
            + "  ".join(f"{a[f'whole@{b}']:9.3f}" for b in budgets)
        )
    lines.append(targets_line(agg, budgets))
    skipped = results["load"]["skipped_by_ability"]
    if skipped:
        lines.append("skipped (no evidence): " + ", ".join(f"{a} {n}" for a, n in sorted(skipped.items())))
    lines += ["", "Knowledge update and contradiction resolution, with the newest matching line:"]
    sub = (
        f"{'ability: evidence':44s} {'n':>4s}  "
        + "  ".join(f"{'lifelong@' + k[b]:>11s}" for b in budgets)
        + "  "
        + "  ".join(f"{'BM25@' + k[b]:>9s}" for b in budgets)
        + f"  {'newest line':>12s}"
    )
    lines.append(sub)
    for ability in UPDATE_ABILITIES:
        a = agg.get(ability)
        if not a:
            continue
        parts = sorted({key.split(":", 1)[0] for key in a if ":" in key and not key.startswith("n:")})
        for label, prefix in [("all evidence", "")] + [(p, f"{p}:") for p in parts]:
            n = a.get(f"n:{prefix}lifelong@{budgets[0]}", a["n"])
            lines.append(
                f"{ability + ': ' + label:44s} {n:4d}  "
                + "  ".join(f"{a.get(f'{prefix}lifelong@{b}', float('nan')):11.3f}" for b in budgets)
                + "  "
                + "  ".join(f"{a.get(f'{prefix}bm25@{b}', float('nan')):9.3f}" for b in budgets)
                + f"  {a.get(f'{prefix}newest_match', float('nan')):12.3f}"
            )
    lines.append("")
    for b, f in results["fill"].items():
        lines.append(
            f"budget {b}: lifelong returned {f['lifelong_fill']:.0%} of it on average "
            f"({f['lifelong_results']} results; {f['lifelong_unplaced_pieces']} snippet pieces unplaced), "
            f"BM25 {f['bm25_fill']:.0%} ({f['bm25_messages']} whole messages)"
        )
    lat = results["latency_ms"]
    idx = results["index"]
    lines.append(
        f"search latency (memory_search tool call, both budgets, n={lat['n']}): "
        f"p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms"
    )
    if idx["indexed_chats"]:  # a fixture indexes in milliseconds: the count says, not the time
        lines.append(
            f"index: {idx['tokens']:,} tokens of {idx['indexed_chats']} chats in {idx['index_s']:.1f} s = "
            f"{idx['tokens_per_s']:,.0f} tokens/s ({idx['chunks']:,} chunks, {idx['embedded']:,} texts embedded)"
        )
    else:
        lines.append("index: every chat came from the cache (no index time measured this run)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The command


def run(
    data: Path,
    *,
    chats: int | None = None,
    fts_only: bool = False,
    cache: Path = CACHE / "workspaces",
    budgets: Sequence[int] = BUDGETS,
    max_minutes: float | None = None,
    reindex: bool = False,
    log: Callable[[str], None] = print,
    on_chat: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    started = time.monotonic()
    loaded, load_report = load_chats(data, chats)
    rows: list[dict[str, Any]] = []
    times: list[float] = []
    indexed: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    for chat in loaded:
        if max_minutes is not None and time.monotonic() - started > max_minutes * 60:
            log(f"stopping after {len(indexed)} chats: --max-minutes {max_minutes} passed")
            break
        root = cache / f"{SIZE}-{chat.name}{'-fts' if fts_only else ''}"
        files, info = index_chat(chat, root, fts_only, log, reindex)
        chat_rows, chat_times = ask_chat(chat, root, files, budgets)
        rows += chat_rows
        times += chat_times
        indexed.append(info)
        results = summarise(rows, times, indexed, load_report, fts_only, budgets, started)
        if on_chat is not None:
            on_chat(results)
    return results or summarise(rows, times, indexed, load_report, fts_only, budgets, started)


def summarise(
    rows: list[dict[str, Any]],
    times: list[float],
    indexed: list[dict[str, Any]],
    load: LoadReport,
    fts_only: bool,
    budgets: Sequence[int],
    started: float,
) -> dict[str, Any]:
    fresh = [i for i in indexed if i["indexed_now"]]
    index_s = sum(i["index_s"] for i in fresh)
    tokens = sum(i["tokens"] for i in fresh)
    chats = {i["chat"] for i in indexed}
    return {
        "benchmark": f"BEAM {SIZE}",
        "config": {
            "fts_only": fts_only,
            "budgets": list(budgets),
            "present_chars": PRESENT_CHARS,
            "whole_share": WHOLE_SHARE,
            "plugins": list(PLUGINS),
        },
        "chats": len(indexed),
        "chat_names": [i["chat"] for i in indexed],
        "load": {
            "questions": sum(1 for r in rows),
            "skipped_by_ability": {
                a: n
                for a, n in LoadReport(skipped=[s for s in load.skipped if s["chat"] in chats])
                .skipped_by_ability()
                .items()
            },
            "dropped_ids": [d for d in load.dropped_ids if d["chat"] in chats],
            "undated_batches": load.undated_batches,
            "sha256": {k: v for k, v in load.sha256.items() if k.split("/")[0] in chats},
        },
        "aggregate": aggregate(score_rows(rows, budgets)),
        "fill": fill(rows, budgets),
        "latency_ms": {
            "n": len(times),
            "p50": round(percentile(times, 50), 1) if times else float("nan"),
            "p95": round(percentile(times, 95), 1) if times else float("nan"),
        },
        "index": {
            "indexed_chats": len(fresh),
            "index_s": round(index_s, 3),
            "tokens": tokens,
            "tokens_per_s": round(tokens / index_s, 1) if index_s else float("inf"),
            "chunks": sum(i["chunks"] for i in fresh),
            "embedded": sum(i["embedded"] for i in fresh),
            "per_chat": indexed,
        },
        "elapsed_s": round(time.monotonic() - started, 1),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None, help="BEAM checkout, chats folder or bare git dir (see above).")
    ap.add_argument("--chats", type=int, default=None, help="Only the first N chats (1, 2, ...).")
    ap.add_argument("--fts-only", action="store_true", help="Embedding provider none: FTS5 only, fast.")
    ap.add_argument("--json", dest="json_out", default=None, help="Write every figure and row here.")
    ap.add_argument(
        "--max-minutes", type=float, default=None, help="Start no new chat after this many minutes."
    )
    ap.add_argument(
        "--reindex", action="store_true", help="Build each index from nothing (measures index time)."
    )
    ap.add_argument(
        "--show", default=None, metavar="JSON", help="Print the tables of a saved --json run (scored again)."
    )
    ap.add_argument("--cache", default=None, help=f"Workspaces and indexes (default {CACHE / 'workspaces'}).")
    args = ap.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if args.show:
        saved = json.loads(Path(args.show).read_text("utf-8"))
        budgets = saved["config"]["budgets"]
        saved.update(
            aggregate=aggregate(score_rows(saved["rows"], budgets)), fill=fill(saved["rows"], budgets)
        )
        print(report_text(saved))
        return saved

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    data, source = resolve_data(args.data, log)
    log(f"BEAM {SIZE} chats: {data}")
    from .harness import git_info, machine_info

    meta = {"command": ["python", "-m", "evals.beam", *(argv if argv is not None else sys.argv[1:])]}
    meta.update(data=source, git=git_info(), machine=machine_info())

    def save(results: dict[str, Any]) -> None:
        if args.json_out:
            Path(args.json_out).write_text(json.dumps({**meta, **results}, indent=1, default=str) + "\n")

    results = run(
        data,
        chats=args.chats,
        fts_only=args.fts_only,
        cache=Path(args.cache) if args.cache else CACHE / "workspaces",
        max_minutes=args.max_minutes,
        reindex=args.reindex,
        log=log,
        on_chat=save,
    )
    save(results)
    print(report_text(results))
    return results


if __name__ == "__main__":
    main()
