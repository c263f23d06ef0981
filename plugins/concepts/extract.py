"""Concept terms in text, and how important a concept is (pure).

A *concept term* is a word or name that can identify what a note is about: a project or product
name, a person, a tool, an identifier, an error code. :func:`concept_terms` finds them:

- words are NFKC-folded (full-width ``ＫＶ`` is ``kv``) and case-folded, a simple plural is
  singularised (``backups`` is ``backup``), possessive ``'s`` dropped;
- never concepts: stop words and chatter (``lifelong.text``), the most common English words
  (``move``, ``notes``…), words shorter than three letters, numbers, dates, times, versions
  (``v2``), file names (``notes.md``) and paths, URLs;
- identifiers with hyphens or underscores stay whole (``safe-cron-merge``, ``tw-418``);
- runs of one script stay whole: a katakana word is one term (``ルーター``, never ``ルー`` or
  ``ター``), a run of Han characters is one term; hiragana (grammar) is skipped;
- every term records its script (latin, cyrillic, greek, han, katakana, hangul, devanagari,
  arabic, hebrew, thai, other), so a mixed-script vocabulary never merges look-alikes.

Multi-word names are found by :func:`name_phrases` (capitalised runs: "Gut Boltenhagen",
"Elena Brandt") and headings; a phrase's key is its terms joined by a space.

Importance (the issue's formula): ``0.3·frequency + 0.4·recency + 0.3·distinctiveness`` with
frequency = log(1+f)/log(1+f_max), recency = 2^(-days since last seen / 14), distinctiveness =
log(N/df)/log(N) for N chunks; a concept unseen for 90 days *and* below 0.05 is pruned.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from lifelong.decay import decay_factor
from lifelong.text import CHATTER, STOPWORDS, fold, raw_tokens

# The most frequent English words that name nothing in particular (after the stop words): a
# concept vocabulary of a personal corpus is made of the rarer ones.
COMMON_WORDS = frozenset(
    """
    about above across act add added after again age ago ahead all almost alone along already also
    always amount and another answer any anyone anything anyway area around ask asked away back bad
    based because become been before began begin being best better between big bit both bring brought
    build built but buy call called came can care case change changed check city clear close come
    coming could couple course cut date day days deal did different do does doing done down during
    each early easy either else end enough even evening ever every everyone everything example face
    fact far feel felt few find fine first follow found free friend friends from front full fun gave
    get getting give given glad go goes going gone good got great group grow had half hand happen
    happened hard has have having head hear heard help here high hold home hope hour hours house how
    however idea important include including inside instead into issue item items job just keep kept
    kind knew know known large last late later lead least leave left less let life like likely line
    list little live long look looked looking lot lots love made main make makes making man many may
    maybe mean means meet meeting met might mind minute minutes miss moment month months more morning
    most move moved much must name near need needed needs never new next nice night none note noted
    notes nothing now number off often old once one ones only open order other others out over own
    page part past pay people per person pick place plan play point possible post pretty probably
    problem pull put question quick quite rather read ready real really reason recent remember rest
    result right room run said same saw say says second see seem seen send sent set several she short
    should show side since small some someone something sometimes soon sort start started state still
    stop stuff sure take taken talk talked tell than thank thanks that the then there these thing
    things think thought through time times today together told tomorrow too took top toward tried
    true try trying turn two under until update updated use used using very wait want wanted was way
    week weekend weeks well went were what when where which while whole why will with without word
    words work worked working world would write wrong year years yes yesterday yet
    """.split()
)

_FILE = re.compile(
    r"\.(?:md|txt|py|js|ts|json|ya?ml|toml|csv|pdf|png|jpe?g|gif|docx?|xlsx?|pptx?|sh|log|html?|zip)$", re.I
)
_DATEISH = re.compile(
    r"^\d{4}-\d{2}(?:-\d{2})?$|^\d{1,2}[./:]\d{1,2}(?:[./:]\d{2,4})?$|^\d+(?:[.,]\d+)*$|^v\d+(?:\.\d+)*$"
    r"|^\d+(?:am|pm|h|min|s|k|m|kg|km|%)?$|^q[1-4]$",
    re.I,
)
_CAPITAL_RUN = re.compile(r"\b([A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|von|van|de|der|da|del|la))*)")

_SCRIPTS = (
    ("katakana", re.compile(r"[\u30a0-\u30ff\u31f0-\u31ff]")),
    ("hiragana", re.compile(r"[\u3040-\u309f]")),
    ("han", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")),
    ("hangul", re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")),
    ("devanagari", re.compile(r"[\u0900-\u097f]")),
    ("arabic", re.compile(r"[\u0600-\u06ff]")),
    ("hebrew", re.compile(r"[\u0590-\u05ff]")),
    ("thai", re.compile(r"[\u0e00-\u0e7f]")),
    ("cyrillic", re.compile(r"[\u0400-\u04ff]")),
    ("greek", re.compile(r"[\u0370-\u03ff]")),
    ("latin", re.compile(r"[a-zA-Z\u00c0-\u024f]")),
)
_UNSPACED_RUNS = re.compile(
    r"[\u30a0-\u30ff\u31f0-\u31ff]+|[\u3040-\u309f]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
)


def script_of(term: str) -> str:
    for name, pattern in _SCRIPTS:
        if pattern.search(term):
            return name
    return "other"


def normalise_concept(text: str) -> str:
    """The key a concept is filed under: NFKC, case-folded, possessive and simple plural removed,
    inner spaces collapsed (``ＫＶ`` → ``kv``, ``Backups`` → ``backup``, ``Elena's`` → ``elena``)."""
    words = [_singular(w) for w in fold(text).replace("’", "'").split()]
    return " ".join(re.sub(r"'s$", "", w).strip(".,:;!?()[]\"'") for w in words if w)


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies") and script_of(word) == "latin":
        return word[:-3] + "y"
    if (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is", "os"))
        and script_of(word) == "latin"
    ):
        return word[:-1]
    return word


def compact_key(text: str) -> str:
    """``text`` folded, with every space and separator removed: one identifier or name however
    its case and separators are typed (``ERR_LOCK_77``, ``err-lock-77`` and ``ERR LOCK 77`` are
    all ``errlock77``)."""
    return re.sub(r"[\W_]+", "", fold(text))


def exact_forms(query: str) -> set[str]:
    """The compact keys ``query`` has if the whole of it is one concept: its words normalised
    one by one (``Backups`` as ``backup``), and as one token (``sales tax`` as ``sales_tax``,
    whose key is singular at its end only). Empty for a long query (no key is eight words)."""
    parts = [p for p in re.split(r"[\W_]+", fold(query)) if p]
    if not parts or len(parts) > 8:
        return set()
    forms = {compact_key(normalise_concept(query)), compact_key(normalise_concept("_".join(parts)))}
    return {f for f in forms if len(f) >= 3}


_IDENTIFIER_SHAPE = re.compile(r"\d|\w[_.-]\w|[A-Z].*[A-Z]")


def identifies(key: str, display: str, kind: str) -> bool:
    """Whether a concept is an identifier or a name, which a query may be exactly: a name phrase
    or a wiki page, a heading of two words or more, or a term written as an identifier (a
    digit, a separator inside, two capitals: ``ERR_LOCK_77``, ``TW-418``, ``QMD``,
    ``NullPointerException``). A plain word ("router", "Glacier") is none."""
    if kind in ("name", "wiki") or (kind == "heading" and " " in key):
        return True
    return bool(_IDENTIFIER_SHAPE.search(display))


@dataclass(frozen=True)
class Term:
    key: str  # normalised
    display: str  # as first written
    script: str


def _keep(word: str) -> bool:
    if len(word) < 3 or word in STOPWORDS or word in CHATTER or word in COMMON_WORDS:
        return False
    if _DATEISH.match(word) or _FILE.search(word) or "/" in word or "://" in word or "@" in word:
        return False
    return any(ch.isalpha() for ch in word)


@functools.lru_cache(maxsize=262_144)
def _token_terms(token: str) -> tuple[Term, ...]:
    """The concept terms of one raw token (memoised: a corpus repeats its words, and extracting a
    million chunks spent most of its time re-normalising the same ones)."""
    raw = token.strip(".,:/-'’")
    pieces = _UNSPACED_RUNS.findall(raw) if _UNSPACED_RUNS.search(raw) else [raw]
    out = []
    for piece in pieces:
        script = script_of(piece)
        if script == "hiragana":
            continue
        key = normalise_concept(piece)
        if script in ("han", "katakana", "hangul"):
            if len(piece) < 2:
                continue
        elif not _keep(key) or not _keep(fold(piece)):  # "does" is no "doe"
            continue
        out.append(Term(key, piece, script))
    return tuple(out)


def concept_terms(text: str) -> list[Term]:
    """The single-word concept terms of ``text``, in order of first appearance, each once."""
    found: dict[str, Term] = {}
    for token in raw_tokens(text):
        for term in _token_terms(token):
            found.setdefault(term.key, term)
    return list(found.values())


_UNSPACED_SCRIPTS = frozenset({"han", "katakana", "hiragana", "hangul", "thai"})


@functools.lru_cache(maxsize=4096)
def _key_pattern(key: str) -> re.Pattern[str]:
    """A key as written in folded text: whole words, each in its singular or simple plural form,
    with an optional possessive ("party" matches "parties", "backup" "backups", "elena" "elena's")."""
    forms = []
    for word in key.split():
        if script_of(word) != "latin":
            forms.append(re.escape(word))
        elif len(word) > 3 and word.endswith("y"):
            forms.append(re.escape(word[:-1]) + "(?:y|ies)")
        else:
            forms.append(re.escape(word) + "(?:e?s)?")
    return re.compile(r"(?<!\w)" + r"\s+".join(forms) + r"(?:['’]s)?(?!\w)")


def keys_named(text: str, keys: Iterable[str]) -> set[str]:
    """Which of the concept ``keys`` ``text`` names, without extracting its terms: a word key
    matches a whole word of the case-folded text in its singular or simple plural form, a phrase
    key consecutive words; a key in an unspaced script matches its run of characters. One
    compiled pattern per key, so a lookup tests every line of the chunks it returns in
    microseconds."""
    folded = fold(text)
    out: set[str] = set()
    for key in keys:
        if script_of(key) in _UNSPACED_SCRIPTS:
            if key in folded:
                out.add(key)
        elif key[:3] in folded and _key_pattern(key).search(folded):
            out.add(key)
    return out


def _sentence_word(word: str) -> bool:
    """A word that is capitalised at a sentence start only: a common or function word, or a verb
    form ("Booked", "Pitched", "Moving")."""
    w = fold(word)
    return w in COMMON_WORDS or w in STOPWORDS or w in CHATTER or w.endswith(("ed", "ing"))


def name_phrases(text: str) -> list[Term]:
    """Multi-word capitalised names ("Gut Boltenhagen", "Northwind Ventures") as phrase terms; at a
    sentence start, a first word that is only capitalised because of its position is left out
    ("Booked Gut Boltenhagen" names "Gut Boltenhagen")."""
    out: dict[str, Term] = {}
    for m in _CAPITAL_RUN.finditer(unicodedata.normalize("NFKC", text)):
        words = m.group(1).split()
        before = text[: m.start()].rstrip()
        if (not before or before[-1] in ".!?:\n-*#>") and _sentence_word(words[0]):
            words = words[1:]  # a common word capitalised only because it starts the sentence
        words = [w for w in words if normalise_concept(w) not in STOPWORDS]
        if len(words) >= 2:
            phrase = " ".join(words)
            key = normalise_concept(phrase)
            if all(_keep(k) or k[:1].isalpha() for k in key.split()):
                out.setdefault(key, Term(key, phrase, script_of(phrase)))
    return list(out.values())


def normalised_idf(doc_freq: int, total_docs: int) -> float:
    """ln(N / df) / ln(N), df at least 1: 1 for a term in one document, 0 for one in all of them
    (``total_docs`` above 1)."""
    return math.log(total_docs / max(1, doc_freq)) / math.log(total_docs)


def importance(
    *, frequency: int, max_frequency: int, days_since_seen: float, doc_freq: int, total_docs: int
) -> float:
    """0.3·frequency (log-normalised) + 0.4·recency (half-life 14 days) + 0.3·distinctiveness (IDF)."""
    freq = math.log1p(frequency) / math.log1p(max(max_frequency, 1)) if frequency > 0 else 0.0
    recency = decay_factor(days_since_seen, 14.0)
    if total_docs > 1 and doc_freq > 0:
        distinct = max(0.0, normalised_idf(doc_freq, total_docs))
    else:
        distinct = 0.0
    return 0.3 * min(1.0, freq) + 0.4 * recency + 0.3 * min(1.0, distinct)


def should_prune(days_since_seen: float, importance_value: float) -> bool:
    """Pruned only when unseen for 90 days AND nearly unimportant (both conditions)."""
    return days_since_seen > 90 and importance_value < 0.05
