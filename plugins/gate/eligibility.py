"""Who the gate runs for (pure): eligibility of a session, and adaptive recall (trivial turns).

The gate runs only for interactive chats of an allowed type, never for sub-agent runs,
cron/heartbeat turns, one-shot API calls or its own sub-agent; a session can switch it off; chat
ids can be allow- or deny-listed (deny wins; a non-empty allow list fails closed when the session
has no chat id). Greetings, acknowledgements and meta chatter skip retrieval entirely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lifelong import text

CHAT_TYPES = ("direct", "group", "channel")
SESSION_KINDS = ("interactive", "subagent", "cron", "heartbeat", "oneshot", "gate")


@dataclass(frozen=True)
class Eligibility:
    eligible: bool
    reason: str = ""


def check_eligibility(session: dict[str, Any], config: dict[str, Any]) -> Eligibility:
    """Decide whether the gate may run for ``session`` (see docs/gate.md for the session shape)."""
    if not session.get("gate_enabled", True):
        return Eligibility(False, "switched off for this session")
    kind = str(session.get("kind") or "interactive")
    if kind != "interactive":
        label = kind if kind in SESSION_KINDS else f"unknown kind {kind!r}"
        return Eligibility(False, f"not an interactive chat ({label})")
    chat_type = str(session.get("chat_type") or "direct")
    if chat_type not in config["allowed_chat_types"]:
        return Eligibility(False, f"chat type {chat_type!r} not in allowed_chat_types")
    chat_id = session.get("chat_id")
    chat_key = str(chat_id).casefold() if chat_id not in (None, "") else None
    denied = {str(c).casefold() for c in config["denied_chat_ids"]}
    if chat_key is not None and chat_key in denied:
        return Eligibility(False, f"chat id {chat_id!r} is in denied_chat_ids")
    allowed = {str(c).casefold() for c in config["allowed_chat_ids"]}
    if allowed and chat_key is None:
        return Eligibility(False, "allowed_chat_ids is set and the session has no chat id")
    if allowed and chat_key not in allowed:
        return Eligibility(False, f"chat id {chat_id!r} is not in allowed_chat_ids")
    return Eligibility(True)


# Words that carry no memory need on their own: greetings, acknowledgements, sign-offs, fillers
# and meta chatter about the conversation itself.
TRIVIAL_WORDS = frozenset(
    """
    hi hello hey heya hiya yo hallo moin servus morning evening afternoon night gm gn good day
    thanks thank thx ty tysm cheers danke merci ta you u so much very lot
    ok okay k kk okey alright allright fine sure yes yeah yep yup ya no nope nah
    cool great nice awesome perfect lovely amazing wonderful excellent neat sweet brilliant
    got it understood noted gotcha roger right true exactly indeed agreed makes sense
    bye goodbye cya later see soon ttyl take care
    lol haha hahaha hehe lmao wow oh ah hmm hm mhm uh um oops ooh
    np problem welcome worries anytime
    test testing ping are there can hear me still working
    and too also then well just a the that this is was all done again
    """.split()
)


def is_trivial(message: str, *, max_words: int = 8) -> bool:
    """True for messages that need no memory: empty, only emoji/punctuation, or a few words that
    are all greetings, acknowledgements or meta chatter ("thanks!", "ok cool", "hi there")."""
    words = text.words(message or "")
    if not words:
        return True
    if len(words) > max_words:
        return False
    return all(w in TRIVIAL_WORDS or w in ("there", "it", "thats", "i'm") for w in words)
