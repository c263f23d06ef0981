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

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

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

# Tokens with a vendor's prefix that detect-secrets does not know (or knows only in part); each match
# is extended to the end of the token (see _TOKEN_TAIL), so a longer key than the rule expects is
# redacted whole.
_PREFIXED_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("api key", re.compile(r"\bsk-(?:ant-|proj-|live-|test-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("stripe key", re.compile(r"\b(?:[sr]k|whsec)_(?:live_|test_)?[0-9A-Za-z]{16,}")),
    ("github token", re.compile(r"\b(?:github_pat_[0-9A-Za-z_]{22,}|gh[pousr]_[0-9A-Za-z]{30,})")),
    ("slack token", re.compile(r"\bx(?:ox[abposre]|app)-[0-9A-Za-z-]{10,}")),
    ("slack webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("google oauth secret", re.compile(r"\bGOCSPX-[0-9A-Za-z_-]{20,}")),
    ("gitlab token", re.compile(r"\bgl(?:pat|dt|rt|ptt)-[0-9A-Za-z_-]{20,}")),
    ("npm token", re.compile(r"\bnpm_[0-9A-Za-z]{30,}")),
    ("pypi token", re.compile(r"\bpypi-[0-9A-Za-z_-]{40,}")),
    ("vault token", re.compile(r"\bhv[sbr]\.[0-9A-Za-z_-]{20,}")),
    ("shopify token", re.compile(r"\bshp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}")),
    ("sentry token", re.compile(r"\bsntr[ysu]_[0-9A-Za-z_=+/]{30,}")),
    ("sendgrid key", re.compile(r"\bSG\.[0-9A-Za-z_-]{16,}\.[0-9A-Za-z_-]{16,}")),
    ("mailgun key", re.compile(r"\bkey-[0-9a-f]{32}\b")),
    ("digitalocean token", re.compile(r"\bdo[opr]_v1_[0-9a-f]{64}")),
    ("linear key", re.compile(r"\blin_(?:api|oauth)_[0-9A-Za-z]{30,}")),
    ("notion token", re.compile(r"\b(?:secret|ntn)_[0-9A-Za-z]{40,}")),
    ("model api key", re.compile(r"\b(?:hf|gsk|r8)_[0-9A-Za-z]{30,}|\bxai-[0-9A-Za-z]{30,}")),
    ("age secret key", re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}")),
    ("docker token", re.compile(r"\bdckr_pat_[0-9A-Za-z_-]{20,}")),
    ("tailscale key", re.compile(r"\btskey-[a-z]+-[0-9A-Za-z]{8,}-[0-9A-Za-z]{16,}")),
    ("doppler token", re.compile(r"\bdp\.(?:st|pt|ct|sa|scim)\.[0-9A-Za-z_.-]{30,}")),
    ("figma token", re.compile(r"\bfig[dhu]_[0-9A-Za-z_-]{30,}")),
    ("dropbox token", re.compile(r"\bsl\.[0-9A-Za-z_-]{100,}")),
    ("terraform token", re.compile(r"\b[0-9A-Za-z]{14}\.atlasv1\.[0-9A-Za-z_-]{60,}")),
    (
        "discord webhook",
        re.compile(r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{30,}"),
    ),
    ("twitter bearer token", re.compile(r"\bA{20,}[0-9A-Za-z%]{30,}")),
    (
        "launchdarkly key",
        re.compile(r"\b(?:sdk|api|mob)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
    ),
    ("azure client secret", re.compile(r"(?<![\w~.-])[0-9A-Za-z_.-]{3}\dQ~[0-9A-Za-z_~.-]{30,}")),
    ("bitcoin private key", re.compile(r"\b[5KL][1-9A-HJ-NP-Za-km-z]{50,51}\b")),
    ("bitlocker recovery key", re.compile(r"\b\d{6}(?:-\d{6}){7}\b")),
    (
        "authorization header",
        re.compile(
            r"(?<=Authorization:)\s*(?:Basic|Bearer|SSWS|Token|Digest)\s+[A-Za-z0-9._~+/=-]{12,}", re.I
        ),
    ),
    ("json web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*", re.I)),
)
# a token goes on through these characters (a rule that matched its first 24 stops early)
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_+/=~.-]*")
_PRIVATE_KEY = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
)
# the password in a URL ("postgres://app:S3cret@db", "redis://:pw@cache"), a query string or a
# connection string ("…?user=etl&password=…", "Password=…;")
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]*:(?P<value>[^\s@/]{1,200})@", re.I)
_QUERY_SECRET = re.compile(
    r"[?&;](?:password|passwd|pwd|pass|access_token|refresh_token|token|sig|signature|api_?key|"
    r"apikey|secret|client_secret|accountkey|sharedaccesskey)=(?P<value>[^&;\s#\"']{3,})",
    re.I,
)
# labels that introduce a secret, in the languages of the notes this suite has met
_LABEL = (
    r"(?:passwords?|passwort|kennwort|contrase(?:ñ|n)a|mot\s+de\s+passe|senha|wachtwoord|"
    r"passwd|pwd|pw|pass|passcode|passphrase|pin|puk|"
    r"(?:client|signing|webhook|shared|jwt|app|hmac|api|aws)?[ _-]?secret(?:[ _-]?(?:access[ _-]?)?key)?|"
    r"(?:api|app|access|master|encryption|license|licence|admin|secret|private|deploy|signing)[ _-]?keys?|"
    r"(?:auth|access|refresh|session|bearer|api|bot|personal[ _-]access|publish|deploy|root|service)?[ _-]?tokens?|"
    r"recovery[ _-]codes?|backup[ _-]codes?|(?:totp|otp|2fa|mfa)[ _-](?:seed|secret|key)|"
    r"seed[ _-]phrase|recovery[ _-]phrase|mnemonic|clave(?:\s+api)?|cl[ée](?:\s+api)?|schl(?:ü|ue)ssel|chave|"
    r"has(?:ł|l)o|pasuw(?:ā|a)do|netzwerkschl(?:ü|ue)ssel|wlan-schl(?:ü|ue)ssel|memorable\s+word|authtok)"
)
# a short phrase between a label and its value: "password for the shared Figma account -> X",
# "PIN der Firmenkarte: 1660", "Cloudflare API token (DNS edit): X"
_FILLER = (
    r"(?:\s*\([^()\n]{0,40}\))?"
    r"(?:\s+(?:for|f(?:ü|ue)r|of|to|on|at|until|till|bis|del|de|du|do|der|des|van|voor|pour|para|per|di|da|dla|"
    r"wa|no)\b"
    r"(?:[^:=\n.;]|\.(?=\S)){1,40}?)?"
    r"(?:\s*\([^()\n]{0,40}\))?"
)
_PUNCTUATION_SEPARATOR = r"(?P<sep>[ \t]*(?:[:=]|->|→|=>)[ \t]*)"
_SEPARATOR = (
    r"(?P<sep>[ \t]*(?:[:=]|->|→|=>)[ \t]*|[ \t]+(?:is|was|ist|lautet|es|est|è|é|wa|is[ \t]+now|=)[ \t]*:?[ \t]+"
    r"|[ \t]+(?:\S+[ \t]+){0,3}?(?:changed|set|reset|updated)[ \t]+(?:it[ \t]+)?to[ \t]+)"
)
# a value: whole between quotes ('…', "…", `…`, […]), else up to the next space or comma
_VALUE = r"(?P<value>'[^'\n█]{3,}'|\"[^\"\n█]{3,}\"|`[^`\n█]{3,}`|\[[^\]\n█]{3,}\]|[^\s\"'`,;█(\[][^\s\"'`,;█]{2,})"
_LABELLED_SECRET = re.compile(rf"(?<![\w:/.])(?P<label>{_LABEL})(?![\w-]){_FILLER}{_SEPARATOR}{_VALUE}", re.I)
# the same with a colon or "=" only, tried apart: "pw until Vault is back up: X" (the first
# pattern stops at "is back")
_LABEL_COLON_VALUE = re.compile(
    rf"(?<![\w:/.])(?P<label>{_LABEL})(?![\w-]){_FILLER}{_PUNCTUATION_SEPARATOR}{_VALUE}", re.I
)
# a label right before its value, no separator: "pw Lantern77?Quiet", "PIN 4613"
_LABEL_THEN_VALUE = re.compile(rf"(?<!\w)(?P<label>{_LABEL})(?![\w-])(?P<sep>[ \t]+){_VALUE}", re.I)
# an identifier naming a secret, with its value: "STRIPE_SECRET_KEY=…", "POSTGRES_PASSWORD: …",
# "apiKey: …", "client_secret = …", "-pS3cret" (mysql), "--password X"
_NAMED_SECRET = re.compile(
    r"(?<![\w:-])(?P<label>(?:[A-Za-z][\w.-]*?)?(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|"
    r"private_?key|account_?key|auth_?key|app_?key|sdk_?key|encryption_?key|routing_?key|authtok|credentials?|"
    r"signing_?key|master_?key|preshared_?key|psk|dsn|passphrase|pass(?![a-z]))[\w.-]*)"
    rf"(?:[ \t]*(?:[:=]|=>)|(?<=['\"])['\"]?[ \t]*,)[ \t]*{_VALUE}",
    re.I,
)
# <password>…</password>, <Pass encoding="base64">…</Pass>
_XML_SECRET = re.compile(
    r"<(?P<tag>pass(?:word)?|secret|token|api_?key|apikey|private_?key)\b[^>]*>(?P<value>[^<\n]{3,})</(?P=tag)>",
    re.I,
)
# WIFI:S:Home;T:WPA;P:the-password;;  (the payload of a Wi-Fi QR code)
_WIFI_QR = re.compile(r"WIFI:[^\n]*?\bP:(?P<value>(?:\\.|[^;\\\n])+)", re.I)
# a line of ~/.pgpass: host:port:database:user:password
_PGPASS = re.compile(r"(?m)^[\w.*-]+:(?:\d+|\*):[\w.*-]+:[\w.*@-]+:(?P<value>\S{3,})$")
_CLI_PASSWORD = re.compile(
    r"(?:\s-p(?P<value>[^\s\-][^\s]{3,})"  # mysql -pS3cret
    r"|\s(?:-[paPk]|--(?:password|pass|passwd|passphrase|token|authkey|auth-key|api-key|ftp-password|"
    r"http-password|secret))[ =](?P<value2>'[^'\n]{3,}'|\"[^\"\n]{3,}\"|[^\s'\"]{3,})"
    r"|\b(?:curl|wget)\b[^\n]*?\s(?:-u|--user)[ =]['\"]?[^\s:'\"]*:(?P<value3>[^\s'\"]{3,})"
    r"|\blftp\b[^\n]*?\s-u\s+[^\s,]+,(?P<value4>'[^'\n]{3,}'|\S{3,})"
    r"|\bhtpasswd\s+-\w*b\w*\s+(?:-\w+\s+)*\S+\s+\S+\s+(?P<value5>'[^'\n]{3,}'|\"[^\"\n]{3,}\"|\S{3,})"
    r"|\badd-authtoken\s+(?P<value6>\S{10,}))"
)
_CLI_GROUPS = ("value", "value2", "value3", "value4", "value5", "value6")
_LOGIN_PAIR = re.compile(
    r"\b(?:login|logins|creds|credentials|zugangsdaten|user(?:name)?|benutzer)\b[^/\n]{0,40}?"
    r"\b[\w.@-]{2,}\s*/\s*(?P<value>[^\s/,;]{6,})"
)
# values after a label that are words of a sentence, not secrets ("the password is expired")
_PLAIN_VALUES = frozenset(
    """expired reset changed wrong correct fine ok okay stored saved set required needed missing
    invalid valid here there same different new old long short strong weak easy hard used sent
    revoked rotated shared leaked compromised printed written taped renewed updated forgotten lost
    working broken rejected accepted locked unlocked blocked disabled enabled generated created
    deleted removed known unknown secret private public optional mandatory also still only just
    please needs should must will would could might manager managers bucket field fields rotation
    expiry expires expiring policy policies reuse length hash hashed encrypted plaintext based
    the for and with from that this then when into onto your yours mine ours theirs what which""".split()
)
# values that stand for a secret in a template, never one ("<your-token>", "${API_KEY}", "XXXX")
_PLACEHOLDER = re.compile(
    r"^(?:<[^>]*>|\$\{?[\w.]+\}?|\{\{[^}]*\}\}|%\(?\w+\)?s?|x{3,}|\*{3,}|\.{3,}|…|"
    r"(?:replace[_-]?me|changeme|your[_-]?\w*|example\w*|dummy|sample|placeholder|redacted|todo|tbd|"
    r"null|none|true|false|password|secret|token|pass|pwd|xxx+)|.*(?:\.\.\.|…|\*\*\*\*)|.*EXAMPLE.*|"
    r"(?:op|vault|sm|ssm|awssm|gcpsm|azkv|secretref|ref)://.*|ENC\[.*|arn:.*|[{$%].*|[A-Za-z_][\w.]*[(\[].*)$",
    re.I,
)
# a path ("/etc/gcp/key.json", "~/.ssh/id_ed25519") names where a secret lives; it is none
_PATH_VALUE = re.compile(r"^(?:~|\.{1,2})?/[\w./-]+$")
# a dotted name ("color.primary.500") is an identifier, not a secret
_IDENTIFIER = re.compile(r"[a-z][a-z0-9]*(?:\.[a-z0-9]+)+")
_PASSWORD_LABELS = frozenset(
    "password passwords passwort kennwort contraseña contrasena senha wachtwoord passwd pwd pw pass "
    "passphrase passcode".split()
) | {"mot de passe"}
# labels after which only digits are a secret (a PIN, a PUK, a passcode)
_DIGIT_LABELS = frozenset({"pin", "puk"})
# an earlier redaction: the rules must not read "[redacted password]" as a value (idempotence)
_REDACTION_MARK = re.compile(r"\[redacted[^\]\n]{0,40}\]|\*{2,}\s*redacted\s*\*{2,}|<redacted>", re.I)
_CARD = re.compile(r"(?<![\w.=/:-])(?:\d[ -]?){12,22}\d(?![\d-])")
# issuer prefixes of payment cards (Visa 4, Mastercard 51-55 and 22-27, Amex 34/37, Diners 30/36/38/39,
# JCB 35, Discover/UnionPay/Maestro 6, Maestro 50): a run id or timestamp (20261124030000, 1732...) is
# none of them, whatever its Luhn digit
_CARD_ISSUER = re.compile(r"^(?:4|5[0-5]|2[2-7]|3[04-9]|6)")
# on a line holding a card number, its expiry and its security code are secrets too
_CARD_EXPIRY = re.compile(r"(?<![\d/])(?:0[1-9]|1[0-2])\s?/\s?(?:20)?\d\d(?![\d/])")
_CARD_CODE = re.compile(
    r"\b(?:cvv2?|cvc2?|cid|csc|cvn|security\s+code|sicherheitscode|pr(?:ü|ue)f(?:nummer|ziffer|code)|"
    r"kartenpr(?:ü|ue)fnummer|cryptogramme|c(?:ó|o)digo(?:\s+de\s+seguridad)?)\b\W{0,3}(?P<value>\d{3,4})\b",
    re.I,
)
# a lone 3-4 digit group right after a card's expiry ("06/28 956", "05/2027 / 747")
_CODE_AFTER_EXPIRY = re.compile(r"\s*[/,;|-]?\s*(?P<value>\d{3,4})\b")
# an AWS secret access key: 40 base64 characters, counted only where the text is about AWS
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_CONTEXT = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b|\baws\b|\bs3\b|\biam\b", re.I)
# a long random token shortly after a word that says it is a key, token, secret or password
_NEAR_LABEL = re.compile(
    r"\b(?:key|token|secret|password|passwort|passphrase|pw|credential|creds|auth|seed|"
    r"cl[ée]|clave|schl(?:ü|ue)ssel|chave|sleutel)s?\b[^.!?\n]{0,60}$",
    re.I,
)
_RANDOM_TOKEN = re.compile(r"(?<![\w/+=.-])[A-Za-z0-9/+][A-Za-z0-9_+/=-]{15,}(?![\w/+=-])")
# what names a key that is no secret: a public key, its fingerprint or id, a publishable key
_PUBLIC_KEY_CONTEXT = re.compile(
    r"public|pub\s?key|publishable|fingerprint|signature|using\s+\w+\s+key|ssh-(?:rsa|ed25519|dss)|ecdsa-sha2|"
    r"\bkey\s+(?:id|alias)\b|"
    r"\bclient\s+id\b|\balias\b",
    re.I,
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
# a list of one-time codes under its heading ("recovery codes", "BACKUP VERIFICATION CODES")
_CODES_HEADING = re.compile(
    r"(?:recovery|backup|verification|2fa|mfa|one[ -]time)[ _-]?(?:verification[ _-])?codes?\b", re.I
)
_CODE_ITEM = re.compile(
    r"(?<![\w-])(?:\d{1,2}[.)]\s*)?(?P<value>[0-9a-z]{4,6}[- ][0-9a-z]{4,6}|\d{8,10})(?![\w-])"
)
# "password: [redacted] then changed it to X": the new value
_CHANGED_TO = re.compile(
    r"\b(?:changed|set|reset|updated)\s+(?:it|(?:the|my)\s+(?:password|pw|pass|passwort))\s+to\s+"
    r"(?P<value>[^\s\"'`,;█(]{4,})",
    re.I,
)
# a markdown table with a column named for a secret ("| service | user | password |")
_SECRET_COLUMN = re.compile(r"password|passwort|secret|token|api[ _-]?key|\bpin\b|\bpw\b", re.I)


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
    detectors: dict[str, Any] = get_mapping_from_secret_type_to_class()  # detector classes by type
    for secret_type, cls in sorted(detectors.items()):
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


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _random_looking(value: str) -> bool:
    """A token that reads as generated, not as a word, a version or a hash in a sentence: letters
    and digits mixed (or a long hex string), high character entropy."""
    parts = [p for p in re.split(r"[/_.+=:-]", value) if p]
    if all(p.isdigit() or (p.isalpha() and (p.islower() or p.isupper() or p.istitle())) for p in parts):
        return False  # "memory/2026-03-04", "release_notes-v2": words and numbers, not generated
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if not (has_digit and has_alpha) and not (len(value) >= 32 and has_alpha and value.isalnum()):
        return False
    return _entropy(value) >= (3.0 if len(value) < 24 else 3.5)


def _secret_value(value: str, label: str, separator: str, *, named: bool = False) -> bool:
    """Whether what follows a label is a secret, not prose, a path, code or a template's
    placeholder. ``named``: the label is an identifier ("DB_PASSWORD=", "existingSecret:")."""
    quoted = value[:1] in "\"'`[" and len(value) > 2
    bare = value[1:-1] if quoted else value.rstrip(".!?)]")
    if len(bare) < 3 or _PLACEHOLDER.match(bare) or bare.casefold() in _PLAIN_VALUES:
        return False
    if _PATH_VALUE.match(bare) and not _random_looking(bare):
        return False
    label = label.casefold().strip()
    if re.match(r"https?://", bare) or _IDENTIFIER.fullmatch(bare):
        return False  # a link (its token, if any, is the query rule's) or a dotted name
    if named and not any(w in label for w in ("pass", "pwd")):
        # "existingSecret: notes-api-env", "tokenizer: words": a secret named "secret" or "token"
        # reads as generated (digits or symbols in it)
        return bool(re.search(r"\d|[!@#$%^&*?+=~/]", bare)) and len(bare) >= 6
    if label in _DIGIT_LABELS:
        return bool(re.fullmatch(r"\d{4,8}#?", bare))
    made_up = bool(re.search(r"\d|[!@#$%^&*?+=~]", bare))
    if not separator.strip() and quoted and len(bare) >= 4:
        return True  # "memorable word 'tangerine'": quotes mark the literal
    if not separator.strip():  # "pw Lantern77?Quiet", "PIN 4613": only a value that looks made up
        if label == "passcode" and re.fullmatch(r"\d{4,8}#?", bare):
            return True
        if label in ("passphrase", "seed phrase", "recovery phrase") and bare.count("-") >= 2:
            return True
        return len(bare) >= 6 and made_up and bool(re.search(r"[A-Za-z]", bare))
    if len(bare) < 4 or _IDENTIFIER.fullmatch(bare):
        return False
    if separator.strip() not in (":", "=", "->", "→", "=>") and not made_up:
        # "the token is expired", "refresh tokens expire": a word after "is" is prose, unless the
        # label says password ("the wifi password is sunshine")
        return (
            label in _PASSWORD_LABELS
            and bare.isalpha()
            and not bare.islower()
            or (label in _PASSWORD_LABELS and len(bare) >= 6 and bare.casefold() not in _PLAIN_VALUES)
        )
    return True


def _card_numbers(text: str) -> list[tuple[int, int]]:
    """Spans of payment-card numbers (issuer prefix, Luhn check); a run of digit groups longer than
    a card ("3566 0020 2036 0505 06/28") is tried group by group from its start."""
    out = []
    for m in _CARD.finditer(text):
        before = text[max(0, m.start() - 20) : m.start()]
        if re.search(r"\b(?:imei|iban)\b", before, re.I) or re.search(r"[A-Z]{2}$", before):
            continue  # a phone's IMEI passes the Luhn check too; an IBAN's digits are no card
        groups = list(re.finditer(r"\d+", m.group(0)))
        for last in range(len(groups), 0, -1):
            digits = "".join(g.group(0) for g in groups[:last])
            if (
                13 <= len(digits) <= 19
                and _CARD_ISSUER.match(digits)
                and luhn_valid(digits)
                and len(set(digits)) >= 2
            ):
                out.append((m.start(), m.start() + groups[last - 1].end()))
                break
    return out


@lru_cache(maxsize=1)
def _bip39_words() -> frozenset[str]:
    from mnemonic import Mnemonic

    return frozenset(Mnemonic("english").wordlist)


_SEED_CONTEXT = re.compile(
    r"seed|phrase|mnemonic|recovery|wallet|words|bip39|ledger|trezor|metamask|electrum|fraza|frase|phrase|"
    r"wiederherstellung|herstel",
    re.I,
)


def _seed_phrase_words(text: str) -> list[tuple[int, int]]:
    """The words of a wallet seed phrase: twelve or more BIP39 words in a row (numbering and line
    breaks between them allowed), each word's span; written with commas between them (a shopping
    list is twelve such words too) only beside a word about seeds or wallets."""
    words = _bip39_words()
    out: list[tuple[int, int]] = []
    run: list[tuple[int, int]] = []
    commas = False

    def close() -> None:
        if len(run) >= 12 and (not commas or _SEED_CONTEXT.search(text[max(0, run[0][0] - 150) : run[0][0]])):
            out.extend(run)

    for m in re.finditer(r"[A-Za-z]+|[^\sA-Za-z]+", text):
        token = m.group(0)
        if token.isalpha():
            if token.lower() in words:
                run.append((m.start(), m.end()))
                continue
        elif re.fullmatch(r"[\d.,:;)(\-|]+", token):
            commas = commas or "," in token
            continue  # "1.", "12)", ",", "-" between the words
        close()
        run, commas = [], False
    close()
    return out


def _listed(text: str, end: int) -> list[tuple[int, int]]:
    """The further values of a list after a label's first one ("codes: a1b2, c3d4, e5f6")."""
    out: list[tuple[int, int]] = []
    for m in re.finditer(r"\s*,\s*(?P<value>[\w-]{4,})", text[end:]):
        if m.start() != (out[-1][1] - end if out else 0) or not re.search(r"\d", m.group("value")):
            break
        out.append((end + m.start("value"), end + m.end("value")))
    return out


def _secret_table_cells(text: str) -> list[tuple[int, int]]:
    """Cells of a markdown table's column whose header names a secret ("| user | password |")."""
    out: list[tuple[int, int]] = []
    columns: set[int] = set()
    offset = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped.startswith("|"):
            columns = set()
        else:
            cells = stripped.strip("|").split("|")
            if not columns and not re.fullmatch(r"[\s|:-]+", stripped):
                columns = {i for i, c in enumerate(cells) if _SECRET_COLUMN.search(c)}
                header = True
            else:
                header = False
            if columns and not header and not re.fullmatch(r"[\s|:-]+", stripped):
                pos = offset + line.index("|") + 1
                for i, cell in enumerate(cells):
                    value = cell.strip()
                    if i in columns and value and not _PLACEHOLDER.match(value):
                        start = pos + cell.index(value)
                        out.append((start, start + len(value)))
                    pos += len(cell) + 1
        offset += len(line) + 1
    return out


# markdown bold around a label ("- **Password Expiry**: every 90 days", "**Password**: …"): read
# as spaces, so the label is the words and the value what follows the colon
_EMPHASIS = re.compile(r"(?<![^\s(\[-])(?:\*\*|__)(?=\w)|(?<=\w)(?:\*\*|__)(?=[\s:=]|$)")


def _masked(text: str) -> str:
    """``text`` with earlier redactions blanked to a character no rule takes, and markdown bold
    around words read as spaces (same length: offsets stay those of ``text``)."""
    text = _EMPHASIS.sub(lambda m: " " * len(m.group(0)), text)
    return _REDACTION_MARK.sub(lambda m: "█" * len(m.group(0)), text)


def _token_end(text: str, end: int) -> int:
    """Where the token a rule matched really ends (trailing sentence punctuation left out)."""
    tail = _TOKEN_TAIL.match(text, end)
    stop = tail.end() if tail else end
    while stop > end and text[stop - 1] in ".-~":
        stop -= 1
    return stop


# what every rule below needs to see at least once in a text: a long token with a digit, a word
# that labels a secret, credentials in a URL, a key block, a long run of digits, a command-line
# flag, a Wi-Fi payload, a list of codes. A text without any (most notes) skips the rules: the
# screening runs on every search result a tool returns.
_SECRET_WORDS_IN = (
    "password",
    "passwd",
    "passcode",
    "passphrase",
    "secret",
    "token",
    "cred",
    "login",
    "auth",
    "hasło",
    "haslo",
    "senha",
    "contrase",
    "mot de passe",
    "wachtwoord",
    "clave",
    "clé",
    "schlüssel",
    "schluessel",
    "chave",
    "seed",
    "recovery",
    "mnemonic",
    "bearer",
    "psk",
    "dsn",
    "benutzer",
    "://",
    "begin",
    "wifi:",
    "=",
    "<pass",
    "user",
    "passwort",
    "kennwort",
    "pasuw",
    "memorable",
    "otp",
)
_SECRET_SHAPES = re.compile(
    r"\S{16,}|(?:\d[ -]?){12}|\s-{1,2}[A-Za-z]|\b(?:pin|puk|pw|pwd|pass|key|keys|code|codes|sig)\b", re.I
)


def _may_hold_a_secret(text: str) -> bool:
    """What every rule below needs to see at least once: a word that labels a secret, credentials
    in a URL, a key block, an "=", a long token, a long run of digits or a command-line flag. A
    text with none (most notes) skips the rules: the screening runs on every search result a tool
    returns. Substring tests first (C speed), one small pattern after."""
    lower = text.lower()
    return any(w in lower for w in _SECRET_WORDS_IN) or bool(_SECRET_SHAPES.search(text))


# twelve short lower-case words in a row (numbers, commas and line breaks between them): the
# shape of a seed phrase, checked before the word list is
_TWELVE_SHORT_WORDS = re.compile(r"(?:\b[a-z]{3,8}\b[\s,.;:()|\d-]+){11}\b[a-z]{3,8}\b")


def find_secrets(text: str) -> list[Finding]:
    """Every secret-looking span of ``text``, merged where they overlap, in order. Earlier
    redactions (``[redacted …]``) are never read as a secret, so redacting is idempotent."""
    masked = _masked(text)
    if not _may_hold_a_secret(masked):
        seeds = _seed_phrase_words(masked) if _TWELVE_SHORT_WORDS.search(masked) else []
        return _merge([Finding("secret", "seed phrase", a, b) for a, b in seeds])
    found: list[Finding] = []
    for rule, pattern in (*_vendor_rules(), *_PREFIXED_TOKENS):
        for m in pattern.finditer(masked):
            if m.end() <= m.start():
                continue
            if rule == "basic auth credentials":
                password = re.search(r":([^:@]*)@", m.group(0))
                if password and _PLACEHOLDER.match(password.group(1)):
                    continue  # "postgres://user:password@localhost" in a template
                found.append(Finding("secret", rule, m.start(), m.end()))
                continue
            end = _token_end(masked, m.end())
            body = re.sub(r"^[A-Za-z]+[_.-]", "", masked[m.start() : end])
            if len(set(body)) < 6 or "EXAMPLE" in body:
                continue  # "ghp_XXXXXXXX…", "AKIAIOSFODNN7EXAMPLE": a placeholder in the shape of a token
            found.append(Finding("secret", rule, m.start(), end))
    for m in _PRIVATE_KEY.finditer(masked):
        found.append(Finding("secret", "private key", m.start(), m.end()))
    for rule, pattern in (("password", _URL_PASSWORD), ("password", _QUERY_SECRET)):
        for m in pattern.finditer(masked):
            if not _PLACEHOLDER.match(m.group("value")):
                found.append(Finding("secret", rule, m.start("value"), m.end("value")))
    for pattern in (_LABELLED_SECRET, _LABEL_COLON_VALUE, _LABEL_THEN_VALUE, _NAMED_SECRET):
        for m in pattern.finditer(masked):
            sep = m.groupdict().get("sep") or "="
            named = pattern is _NAMED_SECRET
            if not _secret_value(m.group("value"), m.group("label"), sep, named=named):
                continue
            start, end = m.start("value"), m.end("value")
            if masked[start] in "\"'`[" and end > start + 2:
                start, end = start + 1, end - 1
            else:
                while end > start and masked[end - 1] in ".)]":
                    end -= 1
            label = m.group("label").lower().replace("_", " ").strip()
            found.append(Finding("secret", "password" if named else label, start, end))
            if label.endswith("codes"):  # "recovery codes: bae34-bfc1f, 6217e-1124f"
                for more in _listed(masked, end):
                    found.append(Finding("secret", label, more[0], more[1]))
    for m in _CODES_HEADING.finditer(masked):  # a list of recovery codes under its heading
        for code in _CODE_ITEM.finditer(masked, m.end(), min(len(masked), m.end() + 600)):
            found.append(Finding("secret", "recovery code", code.start("value"), code.end("value")))
    for pattern, rule in ((_XML_SECRET, "password"), (_WIFI_QR, "wifi password"), (_PGPASS, "password")):
        for m in pattern.finditer(masked):
            if not _PLACEHOLDER.match(m.group("value").strip()):
                found.append(Finding("secret", rule, m.start("value"), m.end("value")))
    found.extend(Finding("secret", "seed phrase", a, b) for a, b in _seed_phrase_words(masked))
    for m in _CHANGED_TO.finditer(masked):
        if re.search(_LABEL, masked[: m.start()], re.I) and _secret_value(m.group("value"), "password", "is"):
            found.append(Finding("secret", "password", m.start("value"), m.end("value")))
    found.extend(Finding("secret", "password", a, b) for a, b in _secret_table_cells(masked))
    for pattern in (_CLI_PASSWORD, _LOGIN_PAIR):
        for m in pattern.finditer(masked):
            group = next(g for g in _CLI_GROUPS if m.groupdict().get(g))
            value = m.group(group)
            start, end = m.start(group), m.end(group)
            if value[:1] in "'\"" and len(value) > 2:
                value, start, end = value[1:-1], start + 1, end - 1
            if _PLACEHOLDER.match(value) or value.isdigit():  # "-p 6380" is a port
                continue
            if pattern is _CLI_PASSWORD or _random_looking(value) or any(not c.isalnum() for c in value):
                found.append(Finding("secret", "password", start, end))
    if _AWS_CONTEXT.search(masked):
        for m in _AWS_SECRET.finditer(masked):
            if _random_looking(m.group(0)) and "EXAMPLE" not in m.group(0):
                found.append(Finding("secret", "aws secret key", m.start(), m.end()))
    for m in _RANDOM_TOKEN.finditer(masked):
        value = m.group(0).strip("=/+")
        if len(value) < 16 or not _random_looking(value) or _UUID.fullmatch(value) or "EXAMPLE" in value:
            continue
        window = masked[max(0, m.start() - 80) : m.start()]
        label = _NEAR_LABEL.search(window)
        if re.search(r"\barn:\S*$", window):
            continue  # an AWS resource name ("arn:aws:secretsmanager:…:secret:prod/db-AbC123")
        if label and not _PUBLIC_KEY_CONTEXT.search(window[max(0, label.start() - 16) :]):
            found.append(Finding("secret", "token", m.start(), m.end()))
    for start, end in _card_numbers(masked):
        found.append(Finding("secret", "card number", start, end))
        line_start = masked.rfind("\n", 0, start) + 1
        line_end = masked.find("\n", end)
        line_end = len(masked) if line_end < 0 else line_end
        for m in _CARD_EXPIRY.finditer(masked, line_start, line_end):
            found.append(Finding("secret", "card expiry", m.start(), m.end()))
            after = _CODE_AFTER_EXPIRY.match(masked, m.end(), line_end)
            if after:
                found.append(Finding("secret", "card code", after.start("value"), after.end("value")))
        for m in _CARD_CODE.finditer(masked, line_start, line_end):
            found.append(Finding("secret", "card code", m.start("value"), m.end("value")))
    found = [f for f in found if "█" not in masked[f.start : f.end]]
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
    """``text`` with every secret replaced by ``[redacted <rule>]``, and how many were replaced.
    Idempotent: redacting the result again changes nothing."""
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


WITHHELD = "[withheld: reads as instructions to an agent ({rules})]"


def neutralise(text: str, redact: Callable[[str], tuple[str, int]] = redact_secrets) -> tuple[str, int, int]:
    """``text`` as it may be shown to a model or printed: invisible characters stripped, secrets
    redacted (by ``redact``) and every line that reads as instructions to an agent withheld whole
    (its indent and list marker kept). Returns (text, secrets redacted, lines withheld)."""
    if not text:
        return text, 0, 0
    redacted, secrets = redact(strip_invisible(text))  # one pass: a key may span lines
    out, withheld = [], 0
    for line in redacted.split("\n"):
        rules = sorted({f.rule for f in find_instructions(line)})
        if rules:
            indent = line[: len(line) - len(line.lstrip(" -*>"))]
            line = indent + WITHHELD.format(rules=", ".join(rules))
        withheld += bool(rules)
        out.append(line)
    return "\n".join(out), secrets, withheld


@lru_cache(maxsize=8192)
def _neutralised(text: str) -> str:
    return neutralise(text)[0]


def neutralise_json(value: Any) -> Any:
    """``value`` (a string, or lists and dicts of them) with every string neutralised (cached by
    text: the same chunks come back search after search)."""
    if isinstance(value, str):
        return _neutralised(value)
    if isinstance(value, (list, tuple)):
        return [neutralise_json(v) for v in value]
    if isinstance(value, dict):
        return {k: neutralise_json(v) for k, v in value.items()}
    return value


_SECRET_WORDS = frozenset(
    "api key keys token tokens secret secrets password passwords pw pwd pin puk passcode passphrase "
    "aws ssh gpg pgp jwt env ssl tls otp totp 2fa mfa sso url uri db".split()
)


def only_about_a_secret(text: str) -> bool:
    """Whether ``text`` holds a secret (or the mark of one redacted) and, its secrets redacted,
    says nothing but that there is one: no number, no identifier, no name left once the redaction
    marks and the words that label a secret are set aside ("re-pasted the API key [redacted] into
    the .env"; but not "wifi network is Raman-5G, password [redacted]", which still names the
    network). One redaction pass: promotion and the wiki call it on every statement."""
    redacted, count = redact_secrets(text)
    if not count and not _REDACTION_MARK.search(text):
        return False
    rest = _REDACTION_MARK.sub(" ", redacted)
    words = re.findall(r"[\w'’.-]+", rest)
    for n, word in enumerate(words):
        bare = word.strip(".-'’")
        if not bare or bare.casefold() in _SECRET_WORDS:
            continue
        if any(c.isdigit() for c in bare):
            return False
        if n and bare[:1].isupper() and not rest[: rest.find(word)].rstrip().endswith((".", "!", "?", ":")):
            return False  # a name ("Raman", "Hetzner"), not a sentence's first word
    return True


def holds_secret(text: str) -> bool:
    """Whether ``text`` holds a secret or the mark of one redacted (a line about a key, whose
    substance is the key, is no durable fact to keep)."""
    return bool(_REDACTION_MARK.search(text) or find_secrets(text))


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
