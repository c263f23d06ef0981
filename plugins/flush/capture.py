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
- **known**: a message whose text is already kept (captured as a note before: same content hash;
  or already written in a recent daily) is not captured again; it is cached for its session, so
  ``lifelong capture restore`` gives back every message a compaction evicted that is not a note.

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
from lifelong.text import clip, content_words, is_small_talk

CAPTURE_DIR = "memory/captured"
_SPACES = re.compile(r"\s+")
_SPECIFIC = re.compile(r"\d|@|https?://|\b[A-Z][a-z]+[A-Z]|(?<=\s)[A-Z][\w'’-]+")


def is_trivial(content: str, min_tokens: int) -> bool:
    """Small talk, or a short message with nothing specific in it and at most two words that are
    not chatter ("ok trying now", "hmm interesting"). Capitals are no test of a specific: people
    type "theo's allergic to latex" in lower case."""
    if is_small_talk(content):
        return True
    return (
        estimate_tokens(content) < min_tokens
        and not _SPECIFIC.search(content.strip())
        and len(set(content_words(content))) <= 2
    )


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


_QUESTION = re.compile(r"[^.!?\n]{3,200}\?")


def role_of(message: Message) -> str:
    return str(message.get("role") or "user")


def last_question(text: str) -> str:
    """The last question ``text`` asks (a sentence ending in "?"), or ""."""
    found = _QUESTION.findall(text)
    return _SPACES.sub(" ", found[-1]).strip() if found else ""


def topic_of(texts: list[str], limit: int = 3) -> str:
    """A few words naming what the captured messages were about (their most frequent content words)."""
    counts = Counter(w for t in texts for w in content_words(t) if len(w) > 2 and not w.isdigit())
    return ", ".join(w for w, _ in counts.most_common(limit))


# A captured message is titled with what it is about, in the words of the replies around it
# (the messages of roles not captured, CONTEXT_REACH either side; their CONTEXT_WORDS most frequent
# content words, secrets redacted: a title is indexed). The assistant restates "rent is 895" or
# "Daktari Kiprono Langat, 0722 418 693" as rent, landlord, tenancy or vet: words the terse message
# never says and a question a month later does.
CONTEXT_REACH = 4
CONTEXT_WORDS = 8


def render_note(
    *,
    session_id: str,
    message: Message,
    mid: str,
    when: dt.datetime,
    body: str,
    reason: str,
    private: bool = False,
    context: str = "",
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
    title = f"# {when.strftime('%Y-%m-%d %H:%M')} · {role}"
    if context:
        # every unit of the note is embedded and searched under its title (the heading path)
        title += f" · {context}"
    lines = [ln.strip() for ln in body.strip().splitlines() if ln.strip()]
    if len(lines) > 1:
        # every part of a long message (a pasted status page, an email) is searched under its
        # title: the message's own first line says what the rest is ("here's the router page")
        title += f": {clip(lines[0], 100)}"
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
    cached_ids: frozenset[str] = frozenset(),
    capture_roles: frozenset[str] = frozenset({"user"}),
    noted_here: frozenset[str] = frozenset(),
) -> CapturePlan:
    """Sort ``messages`` into captured notes, the cached tier and already-known ones.
    ``known_hashes`` are the content hashes of messages captured as notes before (any session);
    ``corpus_text`` is what recent dailies already say (folded), so text the user or a flush turn
    already wrote down is not captured twice. Every message that is not captured goes to this
    session's cache tier, byte for byte, unless its id is already there (``cached_ids``: the same
    compaction replayed): "ok" said in two sessions, or twice in one, is restorable in each.
    Only messages of ``capture_roles`` become notes (by default the user's: what a person said is
    what their memory is for; the assistant's generic advice, indexed, buried the one line that
    held a person's detail); the others are cached, restorable like the rest. ``noted_here``: the
    hashes of this session's own notes (a re-sent message they hold is not cached again).
    ``private``: a session in the private scope; its notes are marked ``privacy: private``
    (``lifelong.privacy``)."""
    plan = CapturePlan()
    seen = known_hashes  # notes of earlier compactions (any session); this run's are seen_here
    folded_corpus = _SPACES.sub(" ", corpus_text).casefold()
    times: list[dt.datetime] = []
    cached_now: set[str] = set(cached_ids)
    asked = ""  # the question the message before asked ("Which router do you have?")
    seen_here: set[str] = set()
    redacted_replies: dict[int, str] = {}  # index -> a reply's text, secrets redacted
    for index, message in enumerate(messages):
        content = str(message.get("content") or "")
        if not content.strip():
            continue
        role = role_of(message)
        question = asked if index and role_of(messages[index - 1]) != role else ""
        asked = last_question(content)
        mid = message_id(message, index)
        when = message_time(message, now, tz)
        digest = content_hash(content)
        # an answer to a question the assistant asked is a detail, however short ("window",
        # "penicillin", "she's vegan"), unless it is only an acknowledgement ("ok", "sure")
        answer = bool(question) and role == "user" and not is_small_talk(content)
        trivial = role not in capture_roles or (not answer and is_trivial(content, min_tokens))
        # a short message means what its conversation makes it mean: "8.30" or "Bronagh" noted in
        # another session is another detail, so only this session's notes make it known
        short = estimate_tokens(content) < min_tokens
        known = (
            digest in seen_here
            or digest in noted_here
            or (digest in seen and not short)
            or (len(content) > 30 and _SPACES.sub(" ", content.strip()).casefold() in folded_corpus)
        )
        if known and digest in noted_here:
            plan.known += 1  # this session's own note already holds it (the compaction re-sent it)
            continue
        if trivial or known:
            if known or mid in cached_now:
                plan.known += 1  # already kept: as a note, in a daily, or in this session's tier
            if mid not in cached_now:
                cached_now.add(mid)
                plan.cached.append(CachedMessage(mid, role, content, when, digest))
            continue
        seen_here.add(digest)
        body, redacted = redact_secrets(strip_invisible(content))
        if question and role == "user":
            # a reply is searchable by what it answers: "asus rt-ax86u" alone says nothing of routers
            quoted, more = redact_secrets(strip_invisible(question))
            body, redacted = f"(re: {quoted}) {body}", redacted + more  # one line: one retrieval unit
        plan.secrets_redacted += redacted
        near = range(max(0, index - CONTEXT_REACH), min(len(messages), index + CONTEXT_REACH + 1))
        for i in near:
            if i not in redacted_replies and role_of(messages[i]) not in capture_roles:
                reply, _ = redact_secrets(strip_invisible(str(messages[i].get("content") or "")))
                redacted_replies[i] = reply
        replies = [redacted_replies[i] for i in near if i in redacted_replies]
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
            context=topic_of(replies, CONTEXT_WORDS),
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
