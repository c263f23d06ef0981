"""What to capture from the messages a compaction is about to evict (pure).

Each evicted message is one of:

- **captured**: a note of its own, ``memory/captured/YYYY-MM-DD/<HHMMSS>-<id>.md``, with YAML
  frontmatter (session, message id, role, time, why it was kept) and the message text with secrets
  redacted: searchable like any note, so the "by the way, the SSL cert expires next month" detail
  survives the summary;
- **cached**: trivial messages (small talk such as "ok, thanks!", or fewer than ``min_tokens``
  tokens with nothing specific in them: no number, date, name or address) go, byte for byte, to
  the reversible compressed tier (``tier.py``), never indexed. A short message that does carry
  a specific ("locker code is now 4417", "Mara's flight lands 18:40") is captured: short is not
  the same as trivial;
- **known**: a message whose text is already kept (captured or cached before: same content hash;
  or already written in a recent daily) is neither captured nor cached again.

The plan also builds the pointer line the runtime puts into its summary ("14:00–15:30: cron
debugging, 12 messages captured → memory/captured/2026-05-01/").
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field

import yaml

from lifelong.contracts import Message
from lifelong.markdown import estimate_tokens
from lifelong.safety import redact_secrets, strip_invisible
from lifelong.text import content_words, is_small_talk

CAPTURE_DIR = "memory/captured"
_SPACES = re.compile(r"\s+")
_SPECIFIC = re.compile(r"\d|@|https?://|\b[A-Z][a-z]+[A-Z]|(?<=\s)[A-Z][\w'’-]+")


def is_trivial(content: str, min_tokens: int) -> bool:
    """Small talk, or a short message with nothing specific in it."""
    if is_small_talk(content):
        return True
    return estimate_tokens(content) < min_tokens and not _SPECIFIC.search(content.strip())


def content_hash(text: str) -> str:
    """The hash a message is known by: its text with whitespace collapsed and case folded."""
    return hashlib.sha256(_SPACES.sub(" ", text.strip()).casefold().encode("utf-8")).hexdigest()


def message_id(message: Message, index: int) -> str:
    """The runtime's id, or one derived from the content (stable across replays)."""
    given = str(message.get("id") or "").strip()
    if given:
        return re.sub(r"[^\w.-]+", "-", given)[:40]
    return f"m{index:04d}-{content_hash(str(message.get('content') or ''))[:8]}"


def message_time(message: Message, default: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    raw = str(message.get("ts") or "").strip()
    if raw:
        try:
            value = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
            return (value if value.tzinfo else value.replace(tzinfo=tz)).astimezone(tz)
        except ValueError:
            pass
    return default


@dataclass(frozen=True)
class CapturedNote:
    relpath: str
    text: str  # the whole file: frontmatter and body
    body: str  # the message text as captured (secrets redacted)
    message_id: str
    hash: str
    when: dt.datetime
    secrets_redacted: int


@dataclass(frozen=True)
class CachedMessage:
    message_id: str
    role: str
    content: str  # exactly as received
    when: dt.datetime
    hash: str


@dataclass
class CapturePlan:
    notes: list[CapturedNote] = field(default_factory=list)
    cached: list[CachedMessage] = field(default_factory=list)
    known: int = 0
    secrets_redacted: int = 0
    pointer: str = ""


def topic_of(texts: list[str], limit: int = 3) -> str:
    """A few words naming what the captured messages were about (their most frequent content words)."""
    counts = Counter(w for t in texts for w in content_words(t) if len(w) > 2 and not w.isdigit())
    return ", ".join(w for w, _ in counts.most_common(limit))


def render_note(
    *,
    session_id: str,
    message: Message,
    mid: str,
    when: dt.datetime,
    body: str,
    reason: str,
    private: bool = False,
) -> str:
    front: dict[str, object] = {"privacy": "private"} if private else {}
    front |= {
        "captured_from": "compaction",
        "session": session_id,
        "message_ids": [mid],
        "roles": [str(message.get("role") or "user")],
        "time_range": [when.isoformat(timespec="seconds")] * 2,
        "capture_reason": reason,
    }
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True).strip()
    role = str(message.get("role") or "user")
    title = f"# {when.strftime('%Y-%m-%d %H:%M')} · {role} · session {session_id}"
    return f"---\n{header}\n---\n{title}\n\n{body.strip()}\n"


def plan_capture(
    messages: list[Message],
    *,
    session_id: str,
    now: dt.datetime,
    tz: dt.tzinfo,
    known_hashes: set[str],
    corpus_text: str,
    min_tokens: int = 20,
    private: bool = False,
) -> CapturePlan:
    """Sort ``messages`` into captured notes, the cached tier and already-known ones.
    ``corpus_text`` is what recent dailies already say (folded), so text the user or a flush turn
    already wrote down is not captured twice. ``private``: a session in the private scope; its
    notes are marked ``privacy: private`` (``lifelong.privacy``)."""
    plan = CapturePlan()
    seen: set[str] = set(known_hashes)
    folded_corpus = _SPACES.sub(" ", corpus_text).casefold()
    times: list[dt.datetime] = []
    for index, message in enumerate(messages):
        content = str(message.get("content") or "")
        if not content.strip():
            continue
        mid = message_id(message, index)
        when = message_time(message, now, tz)
        digest = content_hash(content)
        if digest in seen or (
            len(content) > 30 and _SPACES.sub(" ", content.strip()).casefold() in folded_corpus
        ):
            plan.known += 1
            continue
        seen.add(digest)
        if is_trivial(content, min_tokens):
            plan.cached.append(CachedMessage(mid, str(message.get("role") or "user"), content, when, digest))
            continue
        body, redacted = redact_secrets(strip_invisible(content))
        plan.secrets_redacted += redacted
        relpath = f"{CAPTURE_DIR}/{when.date().isoformat()}/{when.strftime('%H%M%S')}-{mid}.md"
        reason = "evicted by compaction, not yet in any note"
        text = render_note(
            session_id=session_id,
            message=message,
            mid=mid,
            when=when,
            body=body,
            reason=reason,
            private=private,
        )
        plan.notes.append(CapturedNote(relpath, text, body, mid, digest, when, redacted))
        times.append(when)
    plan.pointer = pointer_line(plan, times)
    return plan


def pointer_line(plan: CapturePlan, times: list[dt.datetime]) -> str:
    if not plan.notes and not plan.cached:
        return ""
    parts = []
    if plan.notes:
        first, last = min(times), max(times)
        topic = topic_of([n.body for n in plan.notes])
        folders = sorted({n.relpath.rsplit("/", 1)[0] + "/" for n in plan.notes})
        span = f"{first.strftime('%H:%M')}–{last.strftime('%H:%M')}"
        about = f"{topic}, " if topic else ""
        parts.append(f"{span}: {about}{len(plan.notes)} message(s) captured → {', '.join(folders)}")
    if plan.cached:
        parts.append(f"{len(plan.cached)} short message(s) kept in the compaction cache")
    return "; ".join(parts)
