"""LoCoMo-10 as lifelong workspaces.

``load_locomo`` reads ``locomo10.json`` (never copied into the repository; default
``../shared/benchmarks/locomo`` beside the repository root) and applies the answer-key
corrections of ``audit-errors.json`` (``question_id`` is ``locomo_<conversation>_qa<index>``,
both 0-based; ``correct_evidence`` replaces ``evidence``). Category 5 (adversarial) is excluded
as every published system does. Evidence ids are checked against the conversation's turns:

- a list written as one string (``"D8:6; D9:17"``) is split, and a malformed id whose turn is
  unambiguous (``"D:11:26"``, ``"D30:05"``) is rewritten; both are reported as *repaired*;
- an id naming no turn of the conversation is dropped and reported;
- a question left without evidence is skipped and reported.

``write_workspace`` lays one conversation out as a workspace: each session becomes a daily file
``memory/YYYY-MM-DD.md`` named by its ``session_N_date_time`` (a second session on the same day
gets ``memory/YYYY-MM-DD-sN.md``), each turn one list line carrying its ``dia_id``::

    - [D1:3] Caroline: I went to a LGBTQ support group yesterday. (image: a photo of ...)

so a search hit (path, start_line, end_line) maps back to turns through :class:`SessionFile`.
Files whose content did not change are not rewritten, so a cached index stays in sync.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
EXCLUDED_CATEGORY = 5
DIA_RE = re.compile(r"^D(\d+):(\d+)$")
LOOSE_DIA_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
SESSION_KEY_RE = re.compile(r"^session_(\d+)$")
SESSION_TIME_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str = ""

    def line(self) -> str:
        """The turn as one markdown list line (newlines inside a turn become spaces)."""
        text = " ".join(self.text.split())
        caption = " ".join(self.caption.split())
        return f"- [{self.dia_id}] {self.speaker}: {text}" + (f" (image: {caption})" if caption else "")


@dataclass(frozen=True)
class Session:
    number: int
    when: dt.datetime  # naive; the workspaces use UTC
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    qid: str  # locomo_<conversation>_qa<index>
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # dia_ids, checked and corrected
    corrected: bool = False  # evidence replaced from audit-errors.json

    @property
    def evidence_sessions(self) -> frozenset[int]:
        return frozenset(session_of(d) for d in self.evidence)


@dataclass(frozen=True)
class Conversation:
    index: int
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def last_session_time(self) -> dt.datetime:
        return self.sessions[-1].when

    @property
    def turn_ids(self) -> frozenset[str]:
        return frozenset(t.dia_id for s in self.sessions for t in s.turns)


@dataclass
class LoadReport:
    """What loading did to the answer key: every change is listed, nothing silently fixed."""

    corrections_applied: int = 0
    excluded_category_5: int = 0
    repaired: list[dict[str, Any]] = field(default_factory=list)
    dropped_ids: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    source_sha256: str = ""
    audit_sha256: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "source_sha256": self.source_sha256,
            "audit_sha256": self.audit_sha256,
            "corrections_applied": self.corrections_applied,
            "excluded_category_5": self.excluded_category_5,
            "repaired_evidence": self.repaired,
            "dropped_evidence_ids": self.dropped_ids,
            "skipped_questions": self.skipped,
        }


def session_of(dia_id: str) -> int:
    m = DIA_RE.match(dia_id)
    if not m:
        raise ValueError(f"not a dia_id: {dia_id!r}")
    return int(m.group(1))


def parse_session_time(text: str) -> dt.datetime:
    """``"1:56 pm on 8 May, 2023"`` -> datetime(2023, 5, 8, 13, 56) (naive)."""
    return dt.datetime.strptime(" ".join(text.split()), SESSION_TIME_FORMAT)


def normalise_evidence(raw: list[Any], known: frozenset[str]) -> tuple[list[str], list[str], list[str]]:
    """(valid ids in order, repaired ``"raw -> fixed"`` notes, dropped raw ids)."""
    ids: list[str] = []
    repaired: list[str] = []
    dropped: list[str] = []
    for item in raw:
        item = str(item)
        if item in known:
            ids.append(item)
            continue
        found = [f"D{int(a)}:{int(b)}" for a, b in LOOSE_DIA_RE.findall(item)]
        good = [f for f in found if f in known]
        if good:
            ids.extend(good)
            repaired.append(f"{item} -> {', '.join(good)}")
        dropped.extend([f for f in found if f not in known] if found else [item])
    return list(dict.fromkeys(ids)), repaired, dropped


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_locomo(path: Path, audit_path: Path | None = None) -> tuple[list[Conversation], LoadReport]:
    """The conversations and their category 1-4 questions, audit-corrected and checked."""
    data = json.loads(Path(path).read_text("utf-8"))
    report = LoadReport(source_sha256=sha256_of(Path(path)))
    corrections: dict[str, dict[str, Any]] = {}
    if audit_path is not None and Path(audit_path).exists():
        report.audit_sha256 = sha256_of(Path(audit_path))
        for entry in json.loads(Path(audit_path).read_text("utf-8")):
            corrections[entry["question_id"]] = entry
    conversations = []
    for ci, record in enumerate(data):
        conv = record["conversation"]
        sessions = []
        numbers = sorted(int(m.group(1)) for k in conv for m in [SESSION_KEY_RE.match(k)] if m)
        for n in numbers:
            turns = tuple(
                Turn(t["dia_id"], t["speaker"], t.get("text", ""), t.get("blip_caption") or "")
                for t in conv[f"session_{n}"]
            )
            if turns:
                sessions.append(Session(n, parse_session_time(conv[f"session_{n}_date_time"]), turns))
        known = frozenset(t.dia_id for s in sessions for t in s.turns)
        questions = []
        for qi, qa in enumerate(record.get("qa", [])):
            qid = f"locomo_{ci}_qa{qi}"
            category = int(qa["category"])
            if category == EXCLUDED_CATEGORY:
                report.excluded_category_5 += 1
                continue
            raw = list(qa.get("evidence") or [])
            corrected = False
            answer = str(qa.get("answer", ""))
            if qid in corrections:
                entry = corrections[qid]
                if entry.get("question", qa["question"]).strip() != qa["question"].strip():
                    raise ValueError(f"{qid}: audit entry is for another question: {entry.get('question')!r}")
                raw = list(entry.get("correct_evidence") or [])
                answer = str(entry.get("correct_answer", answer))
                corrected = True
                report.corrections_applied += 1
            ids, repaired, dropped = normalise_evidence(raw, known)
            if repaired:
                report.repaired.append({"question_id": qid, "changes": repaired})
            if dropped:
                report.dropped_ids.append({"question_id": qid, "ids": dropped})
            if not ids:
                reason = "no evidence" if not raw else "no valid evidence id"
                report.skipped.append({"question_id": qid, "category": category, "reason": reason})
                continue
            questions.append(Question(qid, qa["question"], answer, category, tuple(ids), corrected))
        conversations.append(
            Conversation(
                ci,
                record.get("sample_id", f"conv-{ci}"),
                conv.get("speaker_a", ""),
                conv.get("speaker_b", ""),
                tuple(sessions),
                tuple(questions),
            )
        )
    return conversations, report


# ---------------------------------------------------------------------------------------------
# Workspaces


@dataclass(frozen=True)
class SessionFile:
    relpath: str
    session: int
    text: str
    dia_by_line: dict[int, str]  # 1-based line -> dia_id

    def lines(self) -> list[str]:
        return self.text.split("\n")

    def dia_ids(self, start_line: int, end_line: int) -> list[str]:
        return [self.dia_by_line[n] for n in range(start_line, end_line + 1) if n in self.dia_by_line]

    def span_text(self, start_line: int, end_line: int) -> str:
        return "\n".join(self.lines()[start_line - 1 : end_line])


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(]?[A-Z0-9])")


def turn_block(turn: Turn) -> list[str]:
    """A turn as a chat app's export writes a message: ``**Speaker:** first sentence``, then each
    further sentence as a paragraph of its own (a message written in paragraphs), blank lines
    between."""
    first, *rest = _SENTENCE_END.split(" ".join(turn.text.split())) or [""]
    caption = " ".join(turn.caption.split())
    lines = [f"**{turn.speaker}:** {first}"]
    for sentence in rest:
        lines += ["", sentence]
    if caption:
        lines += ["", f"(image: {caption})"]
    return lines


def session_files(conv: Conversation, layout: str = "lines") -> dict[str, SessionFile]:
    """relpath -> the daily file of each session (pure). ``layout`` "lines": a turn per list line
    tagged with its dia_id; "paragraphs": each turn a message in paragraphs (:func:`turn_block`),
    no dia_id in the text (every line of a turn maps to it)."""
    files: dict[str, SessionFile] = {}
    seen_days: set[dt.date] = set()
    for s in conv.sessions:
        day = s.when.date()
        name = (
            f"memory/{day.isoformat()}.md"
            if day not in seen_days
            else f"memory/{day.isoformat()}-s{s.number}.md"
        )
        seen_days.add(day)
        when = s.when.strftime("%I:%M %p").lstrip("0").lower()
        lines = [
            f"# {day.isoformat()}: {conv.speaker_a} and {conv.speaker_b}, session {s.number} ({when})",
            "",
        ]
        dia_by_line = {}
        for t in s.turns:
            if layout == "paragraphs":
                if len(lines) > 2:
                    lines.append("")
                for text in turn_block(t):
                    lines.append(text)
                    if text:
                        dia_by_line[len(lines)] = t.dia_id
                continue
            lines.append(t.line())
            dia_by_line[len(lines)] = t.dia_id
        files[name] = SessionFile(name, s.number, "\n".join(lines) + "\n", dia_by_line)
    return files


WORKSPACE_CONFIG: dict[str, Any] = {
    "timezone": "UTC",
    "embedding": {"provider": "local"},
    # recall events do not change ranking; not recording them keeps the cached index unchanged
    "plugins": {"recall": {"record_events": False}},
}


def write_workspace(
    conv: Conversation, root: Path, layout: str = "lines", recall: dict[str, Any] | None = None
) -> dict[str, SessionFile]:
    """Lay the conversation out under ``root`` (created if needed). Unchanged files are left
    alone (mtime kept), daily files that no longer belong are removed. ``recall``: index-time
    recall options written into the workspace's config beside the defaults. Returns the file map."""
    root.mkdir(parents=True, exist_ok=True)
    files = session_files(conv, layout)
    memory = root / "memory"
    memory.mkdir(exist_ok=True)
    for old in memory.glob("*.md"):
        if f"memory/{old.name}" not in files:
            old.unlink()
    config = copy.deepcopy(WORKSPACE_CONFIG)
    config["plugins"]["recall"].update(recall or {})
    _write_if_changed(root / "lifelong.yaml", yaml.safe_dump(config, sort_keys=True))
    for rel, f in files.items():
        _write_if_changed(root / rel, f.text)
    return files


def _write_if_changed(path: Path, text: str) -> None:
    if path.exists() and path.read_text("utf-8") == text:
        return
    path.write_text(text, encoding="utf-8")
