"""Text measures shared by every plugin: one word tokeniser, one stop-word list, one stemmer, one
Jaccard. Plugins build their own measures on these instead of writing their own.

- :func:`fold` normalises for matching: Unicode NFKC (full-width ``ＫＶ`` is ``KV``, a decomposed
  ``é`` is one character), then case-folded.
- :func:`words` finds word tokens in folded text. Identifiers stay whole (``tw-418``, ``1.2m``,
  ``19:40``, ``week-4``, ``v2.3``), letters glued by a dot, comma or colon without a space are split
  (``end.next``), a possessive ``'s`` is dropped. Runs of Chinese characters and Japanese kana,
  written without spaces (and Thai, Lao, Myanmar, Khmer runs, vowel and tone marks included),
  become overlapping character bigrams (a single character stays as it is), so two texts
  sharing a word share tokens without a segmenter. :func:`fts_text` writes text that way for a
  full-text index (SQLite FTS5), :func:`word_marks` lists the marks its tokenizer must keep.
- :func:`stem` is the Snowball (Porter 2) English stemmer for ASCII words; other words are kept
  as they are. Results are cached.
- :data:`STOPWORDS` are English function words; :data:`CHATTER` the conversational filler
  ("remember", "tell", "thanks", "something") and the day deictics ("today", "yesterday") that
  carry no content of their own in a query or a note (the date they point to is resolved
  separately, from ``now``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here
here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
let's me more most mustn't my myself no nor not of off on once only or other ought our ours ourselves
out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their
theirs them themselves then there there's these they they'd they'll they're they've this those through
to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's
where where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're
you've your yours yourself yourselves us shall will might must
""".split()
)

CHATTER = frozenset(
    """
tell know remember recall remind said say says think thought like just also get got really actually
maybe something anything everything thing things way still even much many please yet ever again
hi hey hello thanks thank ok okay let lets today yesterday tomorrow tonight
""".split()
)

QUESTION_WORDS = frozenset("what when where who whom whose why how which".split())

# Combining marks are part of words: Python's \w excludes them, which cut Devanagari, Thai, Hebrew
# and Arabic words at every vowel sign ("किताब" became "क" + "ताब"). The script blocks whose marks sit
# inside words, and the generic combining-mark blocks, count as word characters.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0963\u0966-\u0dff\u0e00-\u0e5b\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"
    "\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
)
_LETTER = rf"(?:[^\W_]|[{_MARKS}])"
# a word's letters and the marks inside it, digits aside ("किताब", "วันจันทร์" whole)
LETTER_RUN = re.compile(rf"(?:[^\W\d_]|[{_MARKS}])+")
_TOKEN_RE = re.compile(rf"{_LETTER}(?:(?:{_LETTER}|[_'’.,:/-])*{_LETTER})?", re.UNICODE)
_POSSESSIVE = re.compile(r"'s$")
_LETTER_PUNCT = re.compile(r"(?<=[^\W\d_])[.,:/](?=[^\W\d_])")
# Scripts written without spaces between words: Han, Hiragana, Katakana (and their extensions),
# Thai, Lao, Myanmar and Khmer (letters and the vowel and tone marks inside their words).
_UNSPACED = re.compile(
    r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
    r"\u0e01-\u0e3a\u0e40-\u0e4e\u0e81-\u0edf\u1000-\u103f\u1050-\u108f\u1780-\u17d3]+"
)
_ASCII_WORD = re.compile(r"[a-z]+")
# abbreviations common in notes, matched as the words they stand for on both sides: "where does
# the dog see a doctor" finds "vet: Dr. Nunes", "appointment" finds "dentist appt" (only
# unambiguous ones: "St." is a street or a saint)
ABBREVIATIONS = {"dr": "doctor", "appt": "appointment", "appts": "appointments", "bday": "birthday"}
_ABBREVIATION_RE = re.compile(
    r"\b(" + "|".join(sorted(ABBREVIATIONS, key=len, reverse=True)) + r")\b\.?", re.I
)
# titles written before a name ("Dr. Okafor", "Ms Reyes")
TITLES = ("Dr", "Mr", "Mrs", "Ms", "Prof", "St")
_TITLE_RE = re.compile(r"\b(?:" + "|".join(TITLES) + r")\b\.?\s+(?=[A-Z])")


def without_titles(text: str) -> str:
    """``text`` without the titles before names: "Dr." says who someone is, not what a line is
    about ("Dr. Okafor: is my family doctor" names the doctor once, not twice)."""
    return _TITLE_RE.sub("", text)


# a tag written in the text ("#health", "#kids-school"): a letter first, up to 41 characters; not
# a heading's "##", a URL's fragment ("example.org/#faq") nor an HTML entity ("&#x27;")
HASHTAG_RE = re.compile(r"(?<![\w#&/])#([^\W\d_][\w-]{1,40})")


def word_marks() -> str:
    """The combining marks that sit inside words (Devanagari, Thai, Hebrew, Arabic... vowel and
    tone signs; not the Latin accents, which NFKC composes): the characters a full-text tokenizer
    that splits at marks must be told are part of words (SQLite FTS5 ``unicode61 tokenchars``)."""
    out = []
    for lo, hi in re.findall(r"(.)(?:-(.))?", _MARKS):
        for cp in range(ord(lo), ord(hi or lo) + 1):
            if unicodedata.category(chr(cp)).startswith("M") and not 0x300 <= cp <= 0x36F:
                out.append(chr(cp))
    return "".join(out)


def fts_text(text: str) -> str:
    """``text`` as a word-splitting full-text index should see it, on both sides (documents
    and queries): NFKC-normalised (a decomposed ``München`` is the composed one), each run of a
    script written without spaces (Chinese, Japanese kana, Thai...) replaced by its overlapping
    character bigrams, space-separated (what :func:`words` makes of it), so a word inside a
    run matches without a segmenter. An abbreviation of :data:`ABBREVIATIONS` is its word
    ("Dr. Nunes": "doctor Nunes")."""
    text = _ABBREVIATION_RE.sub(
        lambda m: ABBREVIATIONS[m.group(1).lower()], unicodedata.normalize("NFKC", text)
    )
    return _UNSPACED.sub(lambda m: " " + " ".join(_bigrams(m.group(0))) + " ", text)


def fold(text: str) -> str:
    """NFKC-normalised and case-folded: the form every comparison of words is made on."""
    return unicodedata.normalize("NFKC", text).casefold()


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def _split_token(token: str) -> list[str]:
    token = _POSSESSIVE.sub("", token.replace("’", "'").replace("'S", "'s"))
    if _LETTER_PUNCT.search(token):
        return [t for part in re.split(r"[.,:/]", token) for t in _split_token(part) if t]
    if not _UNSPACED.search(token):
        return [token.strip("'-")] if token.strip("'-") else []
    out: list[str] = []
    pos = 0
    for m in _UNSPACED.finditer(token):
        if m.start() > pos:
            out.extend(_split_token(token[pos : m.start()]))
        out.extend(_bigrams(m.group(0)))
        pos = m.end()
    if pos < len(token):
        out.extend(_split_token(token[pos:]))
    return out


def _split_all(found: list[str]) -> list[str]:
    """:func:`_split_token` over every token, with the common case (ASCII letters and digits
    only, which it returns as they are) taken without it: most of a search's tokenising time."""
    out: list[str] = []
    for token in found:
        if token.isascii() and token.isalnum():
            out.append(token)
        else:
            out.extend(_split_token(token))
    return out


def raw_tokens(text: str) -> list[str]:
    """Tokens as written (NFKC, case kept), identifiers and file names whole (``notes.md``,
    ``safe-cron-merge.sh``), nothing split: for rules that must see a token as one unit."""
    return [m.group(0) for m in _TOKEN_RE.finditer(unicodedata.normalize("NFKC", text))]


def tokens(text: str) -> list[str]:
    """Word tokens of ``text`` as written (NFKC-normalised, case kept): for rules that look at
    capitals (names) or digits. :func:`words` is the same list folded."""
    return _split_all(_TOKEN_RE.findall(unicodedata.normalize("NFKC", text)))


def words(text: str) -> list[str]:
    """Word tokens of ``text``, folded (see the module docstring)."""
    return _split_all(_TOKEN_RE.findall(fold(text)))


@lru_cache(maxsize=1)
def _english() -> Any:
    """The Snowball English stemmer, made on the first stem (snowballstemmer imports every
    language's stemmer: a CLI call that stems nothing never pays for it)."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball English stem of an ASCII word of four letters or more; other words as they
    are (names and identifiers with digits are not stemmed). An abbreviation of
    :data:`ABBREVIATIONS` stems as its word ("dr": "doctor")."""
    word = ABBREVIATIONS.get(word, word)
    if len(word) < 4 or not _ASCII_WORD.fullmatch(word):
        return word
    stemmed: str = _english().stemWord(word)
    return stemmed


def is_stopword(word: str) -> bool:
    return word in STOPWORDS or word in CHATTER


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content: no stop words, chatter or single letters."""
    return [
        w for w in words(text) if not is_stopword(w) and (len(w) > 1 or w.isdigit() or ord(w[0]) > 0x2FFF)
    ]


def content_tokens(text: str) -> frozenset[str]:
    """Stems of the content words: what overlap and similarity are measured on."""
    return frozenset(stem(w) for w in content_words(text))


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 when either side is empty (nothing in common is not a match)."""
    sa, sb = a if isinstance(a, frozenset | set) else set(a), b if isinstance(b, frozenset | set) else set(b)
    if not sa or not sb:
        return 0.0
    inter = len(sa & sb)
    return inter / (len(sa) + len(sb) - inter)


# Words that carry no content on their own: greetings, acknowledgements, sign-offs, fillers and
# meta chatter about the conversation itself.
SMALL_TALK = frozenset(
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
    and too also then well just a the that this is was all done again there it thats i'm
    """.split()
)


def is_small_talk(text: str, *, max_words: int = 8) -> bool:
    """True for text that says nothing to remember: empty, only emoji or punctuation, or a few
    words that are all greetings, acknowledgements or chatter ("thanks!", "ok cool", "hi there")."""
    found = words(text or "")
    if not found:
        return True
    return len(found) <= max_words and all(w in SMALL_TALK for w in found)


_UNITS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen".split()
    )
}
_TENS = {
    w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORD = "|".join([*_TENS, *_UNITS, *_SCALES])
_SPELLED = re.compile(rf"\b(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*\b", re.I)


def spelled_numbers(text: str) -> list[int]:
    """The numbers ``text`` writes out in English words from thirteen up ("sixty-eight" 68, "one
    hundred and twenty" 120, "two thousand five hundred" 2500), pure. One to twelve are left out:
    alone they are as often words ("one of them", "the two of us") as amounts, and times of day
    have their own reading."""
    out = []
    for m in _SPELLED.finditer(text):
        parts = [p for p in re.split(r"[\s-]+", m.group(0).lower()) if p != "and"]
        total = current = 0
        valid = True
        for p in parts:
            if p in _SCALES:
                current = max(current, 1) * _SCALES[p]
                if _SCALES[p] >= 1000:
                    total, current = total + current, 0
            elif p in _TENS:
                valid = valid and current % 100 == 0  # "twenty sixty" is two numbers, not one
                current += _TENS[p]
            else:
                valid = valid and current % 10 == 0 and (current % 100 == 0 or _UNITS[p] < 10)
                current += _UNITS[p]
        value = total + current
        if valid and (value >= 13 or len(parts) > 1 and any(p in _TENS or p in _SCALES for p in parts)):
            out.append(value)
    return out


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to at most ``limit`` characters at a word boundary ("…" marks a cut)."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    if limit <= 1:
        return text[:limit]
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"
