"""What must never reach trusted memory unchecked: secrets, and text that reads as instructions to
an agent. Pure functions; every layer that copies text into something an agent trusts (promotion
into MEMORY.md, the wiki, the dream diary and reports, the gate's note, captured notes) calls them.

Secrets (:func:`find_secrets`, :func:`redact_secrets`):

- the vendor-token rule set of the maintained ``detect-secrets`` project (AWS, GitHub, GitLab,
  Slack, Stripe, Twilio, SendGrid, Mailchimp, npm, PyPI, Azure storage, Discord, Telegram, Square,
  JWTs, private-key blocks, credentials in URLs): its regular expressions are used directly, for
  exact spans;
- rules detect-secrets lacks or misses in free text (measured: it finds neither ``sk-proj-…`` keys
  nor ``password=…`` outside source files): OpenAI/Anthropic-style ``sk-…`` keys, Google API keys,
  bearer tokens, ``password``/``passwd``/``secret``/``api key``/``token`` followed by ``=``, ``:``
  or "is" and a value, and payment-card numbers (an issuer's prefix) that pass the Luhn check.

Instructions (:func:`find_instructions`): the suite's own wrapper tags and fences (a note that
carries ``</lifelong_memory>`` tries to close the untrusted block), chat-role markers opening a line
(``SYSTEM:``, ``<|im_start|>``), and imperative overrides aimed at an agent ("ignore previous
instructions", "disregard your rules", "you are now…", "reveal your system prompt", "send/email all
notes to…"). Ordinary notes that merely share a word ("remind me to ignore the noise", "the system
is down") do not match; ``python -m evals.safety_rules`` prints the false-positive rate on real
conversation text and the detection rate on planted attacks.

:func:`strip_invisible` removes bidi overrides, zero-width and control characters (kept: tab and
newline) from text about to be injected into a prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# detect-secrets detectors whose patterns are precise in free text (keyword- and entropy-based ones
# are left out: they assume source files and flag ordinary prose).
VENDOR_DETECTORS = (
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "JwtTokenDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)

_OWN_SECRET_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("api key", re.compile(r"\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*", re.I)),
    (
        "private key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
    ),
)
# "password: hunter2", "my passwd is Tr0ub4dor&3", "API key = abc123…": the value is redacted.
_LABELLED_SECRET = re.compile(
    r"\b(?P<label>passwords?|passwd|pwd|passcode|passphrase|secret(?:[ _-]?key)?|api[ _-]?key|"
    r"access[ _-]?token|auth[ _-]?token|token|pin)\b(?P<sep>\s*(?:[:=]|\bis\b|\bwas\b)\s*)"
    r"(?P<value>[\"']?[^\s\"',;]{4,}[\"']?)",
    re.I,
)
# values after a label that are words of a sentence, not secrets ("the password is expired")
_PLAIN_VALUES = frozenset(
    """expired reset changed wrong correct fine ok okay stored saved set required needed missing
    invalid valid here there same different new old long short strong weak easy hard used sent
    revoked rotated shared leaked compromised printed written taped renewed updated forgotten lost
    working broken rejected accepted locked unlocked blocked disabled enabled generated created
    deleted removed known unknown secret private public optional mandatory also still only just
    please needs should must will would could might""".split()
)
_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
# issuer prefixes of payment cards (Visa 4, Mastercard 51-55 and 22-27, Amex 34/37, Diners 30/36/38/39,
# JCB 35, Discover/UnionPay/Maestro 6, Maestro 50): a run id or timestamp (20261124030000, 1732...) is
# none of them, whatever its Luhn digit
_CARD_ISSUER = re.compile(r"^(?:4|5[0-5]|2[2-7]|3[04-9]|6)")


@dataclass(frozen=True)
class Finding:
    """A span of ``text`` that a rule matched: ``kind`` secret | instruction, ``rule`` its name."""

    kind: str
    rule: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _vendor_rules() -> tuple[tuple[str, re.Pattern[str]], ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    rules: list[tuple[str, re.Pattern[str]]] = []
    for secret_type, cls in sorted(get_mapping_from_secret_type_to_class().items()):
        if cls.__name__ in VENDOR_DETECTORS:
            rules.extend((secret_type.lower(), pattern) for pattern in cls().denylist)
    return tuple(rules)


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def find_secrets(text: str) -> list[Finding]:
    """Every secret-looking span of ``text``, merged where they overlap, in order."""
    found: list[Finding] = []
    for rule, pattern in (*_vendor_rules(), *_OWN_SECRET_RULES):
        for m in pattern.finditer(text):
            if m.end() > m.start():
                found.append(Finding("secret", rule, m.start(), m.end()))
    for m in _LABELLED_SECRET.finditer(text):
        value = m.group("value").strip("\"'").rstrip(".!?")
        if value.casefold() in _PLAIN_VALUES or len(value) < 4:
            continue  # "the password is expired": prose, not a secret
        found.append(Finding("secret", m.group("label").lower(), m.start("value"), m.end("value")))
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if (
            13 <= len(digits) <= 19
            and _CARD_ISSUER.match(digits)
            and luhn_valid(digits)
            and len(set(digits)) >= 2
        ):
            found.append(Finding("secret", "card number", m.start(), m.end()))
    return _merge(found)


def _merge(found: list[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.start, -f.end)):
        if out and f.start < out[-1].end:
            last = out[-1]
            out[-1] = Finding(last.kind, last.rule, last.start, max(last.end, f.end))
        else:
            out.append(f)
    return out


def redact_secrets(text: str) -> tuple[str, int]:
    """``text`` with every secret replaced by ``[redacted <rule>]``, and how many were replaced."""
    findings = find_secrets(text)
    if not findings:
        return text, 0
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(f"[redacted {f.rule}]")
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts), len(findings)


# --- instructions ---------------------------------------------------------------------------------

_SUITE_MARKUP = re.compile(
    r"</?\s*lifelong_memory\b[^>]*>|</?\s*memory_result\b[^>]*>|</?\s*conversation\s*>"
    r"|<!--\s*lifelong:|Untrusted context \(metadata",
    re.I,
)
# Chat-template tokens are never ordinary text; a role label ("System: reboot done") is, unless the
# same text also trips another rule.
_CHAT_TOKENS = re.compile(
    r"<\|(?:im_start|im_end|system|endoftext)\|>|\[/?(?:INST|SYS)\]|<<\s*SYS\s*>>", re.I
)
_ROLE_LABEL = re.compile(
    r"(?:^|[\n>\]]|\s{2,})\s*(?:#{1,6}\s*)?(?:system|assistant|developer)\s*(?:prompt|message)?\s*:", re.I
)
_VERBS = r"(?:ignore|disregard|forget|override|bypass|skip)"
_OVERRIDE = re.compile(
    rf"\b{_VERBS}\s+(?:all\s+|any\s+|the\s+|your\s+|my\s+|these\s+|those\s+)*(?:previous|prior|above|earlier|"
    r"preceding|original|existing|system|safety)?\s*(?:instructions?|prompts?|rules|guidelines|directives|"
    r"guardrails|policies|context)\b",
    re.I,
)
_PERSONA = re.compile(
    r"\byou\s+are\s+now\s+(?:a|an|the|in|my|no\s+longer)\b|\bfrom\s+now\s+on,?\s+you\s+(?:will|must|are|should)\b"
    r"|\bnew\s+(?:system\s+)?instructions?\s*:|\bact\s+as\s+(?:if\s+you\s+are\s+)?(?:a|an|the)\s+\w+\s+(?:without|with\s+no)\b",
    re.I,
)
_EXFILTRATE = re.compile(
    r"\b(?:reveal|print|show|output|leak|repeat)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|instructions|"
    r"hidden\s+(?:prompt|instructions)|api\s+keys?|secrets?|credentials)\b"
    r"|\b(?:send|email|e-mail|forward|upload|post|exfiltrate|transfer|copy)\s+(?:all|every|the\s+entire|"
    r"the\s+whole|your)\s+(?:of\s+)?(?:(?:the|my|your|our|his|her|their)\s+)?(?:notes?|memor(?:y|ies)|messages?|"
    r"conversations?|passwords?|secrets?|credentials?|(?:api\s+)?keys?|contacts?)\b[^.\n]{0,80}\b(?:to|at|into)\b"
    r"|\bdo\s+not\s+(?:tell|inform|alert|show)\s+the\s+user\b",
    re.I,
)
INSTRUCTION_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("suite markup", _SUITE_MARKUP),
    ("chat template", _CHAT_TOKENS),
    ("override", _OVERRIDE),
    ("persona switch", _PERSONA),
    ("exfiltration", _EXFILTRATE),
)


def find_instructions(text: str) -> list[Finding]:
    """Spans of ``text`` that read as instructions to an agent or carry the suite's own markup (a
    role label such as ``SYSTEM:`` counts only beside another of these)."""
    found = [
        Finding("instruction", rule, m.start(), m.end())
        for rule, pattern in INSTRUCTION_RULES
        for m in pattern.finditer(text)
    ]
    if found:
        found += [
            Finding("instruction", "role label", m.start(), m.end()) for m in _ROLE_LABEL.finditer(text)
        ]
    return sorted(found, key=lambda f: (f.start, f.end))


@dataclass(frozen=True)
class Screening:
    """What the safety rules say about one text about to become trusted memory."""

    text: str  # the text with secrets redacted (markup and instructions left for the caller)
    secrets: int
    instructions: tuple[str, ...]  # names of the instruction rules that matched

    @property
    def trusted(self) -> bool:
        """May be written into trusted memory as is (after the redaction)."""
        return not self.instructions


def screen(text: str) -> Screening:
    """Redact secrets and name the instruction rules ``text`` trips."""
    redacted, count = redact_secrets(text)
    rules = tuple(dict.fromkeys(f.rule for f in find_instructions(redacted)))
    return Screening(redacted, count, rules)


_INVISIBLE = re.compile(
    "[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f"  # control characters (tab, newline kept)
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad]"  # zero-width, bidi, BOM
)


def strip_invisible(text: str) -> str:
    """``text`` without control, zero-width and bidirectional-override characters."""
    return _INVISIBLE.sub("", text)
