"""The offline extractor (pure): recurring capitalised names become entities, recurring section
headings and ``#tags`` become concepts, and each claim gets a home page.

A name is a run of capitalised words. The first word of a sentence is a name only when the same
word is capitalised somewhere else in the middle of a sentence ("Priya joined" counts because
"owned by Priya" exists; "Booked the offsite" does not). Month and weekday names in any form
("Oct", "Sept", "Tues", "Fridays"), all-capital
codes (EUR, TW-418) and stop words are never names. A single word that starts exactly one longer
name ("Northwind" and "Northwind Ventures") is an alias of it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from lifelong.facts import MONTH_NUMBERS, WEEKDAY_WORDS
from lifelong.text import HASHTAG_RE, content_tokens, fold, is_stopword

from .vault import slug

_WORD = re.compile(r"[^\W\d_][\w'’&-]*")
_SENTENCE_BREAK = re.compile(r"[.!?:;]\s*$")
# month and weekday names in every form the fact model reads ("Oct", "Sept", "Tues", "Fridays"),
# the day deictics and "I"; "Jan" and "Jun" are given names too: months only beside a day number
_NAME_OR_MONTH = frozenset({"jan", "jun"})
_BESIDE_A_NUMBER = re.compile(r"^\s*\d|\d\s*$")
_NOT_NAMES = frozenset(
    [
        *(m for m in MONTH_NUMBERS if m not in _NAME_OR_MONTH),
        *WEEKDAY_WORDS,
        *"today tomorrow yesterday tonight i".split(),
    ]
)


@dataclass(frozen=True)
class Subject:
    """An entity or concept page the extractor found."""

    id: str
    page_type: str  # entity | concept
    title: str
    aliases: tuple[str, ...] = ()
    terms: frozenset[str] = frozenset()  # concept: content stems that must all appear


def _bare(word: str) -> str:
    return re.sub(r"['’]s$", "", word)


def _is_capitalised(word: str) -> bool:
    """A capitalised word of two letters or more, not all capitals (EUR, TW) and without digits."""
    return len(word) > 1 and word[:1].isupper() and not word.isupper() and not any(c.isdigit() for c in word)


def name_runs(text: str) -> list[tuple[str, bool]]:
    """(name, at sentence start) for each run of capitalised words in ``text``."""
    runs: list[tuple[str, bool]] = []
    current: list[str] = []
    start_flag = False
    last_end = 0
    for m in _WORD.finditer(text):
        word = m.group(0)
        gap = text[last_end : m.start()]
        at_start = not text[: m.start()].strip() or bool(_SENTENCE_BREAK.search(text[: m.start()]))
        folded = fold(_bare(word))
        ok = _is_capitalised(word) and folded not in _NOT_NAMES and not is_stopword(fold(word))
        if ok and folded in _NAME_OR_MONTH:  # "Jan 12", "3 Jun": a date; "Jan Novak": a name
            ok = not (_BESIDE_A_NUMBER.search(text[m.end() : m.end() + 3]) or _BESIDE_A_NUMBER.search(gap))
        if current and (not ok or gap.strip() not in ("",) or at_start):
            runs.append((" ".join(current), start_flag))
            current = []
        if ok:
            if not current:
                start_flag = at_start
            current.append(_bare(word))
            if word != _bare(word):  # a possessive ends the name
                runs.append((" ".join(current), start_flag))
                current = []
        last_end = m.end()
    if current:
        runs.append((" ".join(current), start_flag))
    return runs


def find_entities(texts: Iterable[str], min_mentions: int) -> list[Subject]:
    """Entities: names seen in at least ``min_mentions`` lines. A run of capitalised words that
    starts a sentence keeps its first word ("Acme Robotics raised…") unless the rest is a name
    seen mid-sentence elsewhere ("Met Dana Reyes" when "with Dana Reyes" exists) or the first word
    starts runs before three or more different words (a verb or label: "Met", "Pitched")."""
    all_runs = [name_runs(text) for text in texts]
    mid_words: set[str] = set()
    mid_names: set[str] = set()
    next_words: dict[str, set[str]] = {}
    for runs in all_runs:
        for name, at_start in runs:
            words = name.split()
            if not at_start:
                mid_words.update(words)
                mid_names.add(name)
            elif len(words) > 1:
                next_words.setdefault(words[0], set()).add(words[1])
    counts: Counter[str] = Counter()
    for runs in all_runs:
        chosen: set[str] = set()
        for name, at_start in runs:
            words = name.split()
            if at_start and words[0] not in mid_words:
                if len(words) == 1:
                    continue  # a lone capitalised first word: "Booked", "Decision"
                tail = " ".join(words[1:])
                if tail in mid_names or len(next_words.get(words[0], ())) >= 3:
                    name = tail
            chosen.add(name)
        counts.update(chosen)
    names = sorted(n for n, c in counts.items() if c >= min_mentions)
    by_first: dict[str, list[str]] = {}
    for n in names:
        if " " in n:
            by_first.setdefault(n.split()[0], []).append(n)
    aliases: dict[str, list[str]] = {}
    keep = []
    for name in names:
        longer = by_first.get(name, [])
        if " " not in name and len(longer) == 1:
            aliases.setdefault(longer[0], []).append(name)
        else:
            keep.append(name)
    return [
        Subject(f"entity.{slug(n)}", "entity", n, tuple(sorted(aliases.get(n, []))))
        for n in sorted(keep, key=lambda n: (slug(n), n))
    ]


def find_concepts(
    headings: Iterable[tuple[str, str]], texts: Iterable[str], min_mentions: int
) -> list[Subject]:
    """Concepts: a section heading used in at least ``min_mentions`` files, or a ``#tag`` seen in
    at least ``min_mentions`` lines. ``headings`` are (file, heading) pairs."""
    per_heading: dict[str, set[str]] = {}
    titles: dict[str, str] = {}
    for path, heading in headings:
        key = slug(heading)
        if not heading.strip() or not content_tokens(heading):
            continue
        per_heading.setdefault(key, set()).add(path)
        titles.setdefault(key, heading.strip())
    tags: Counter[str] = Counter()
    for text in texts:
        tags.update({t.lower() for t in HASHTAG_RE.findall(text)})
    found: dict[str, Subject] = {}
    for key, files in per_heading.items():
        if len(files) >= min_mentions:
            found[key] = Subject(f"concept.{key}", "concept", titles[key], (), content_tokens(titles[key]))
    for tag, n in tags.items():
        key = slug(tag)
        if n >= min_mentions and key not in found:
            found[key] = Subject(f"concept.{key}", "concept", tag, (), frozenset())
    return [found[k] for k in sorted(found)]


class SubjectIndex:
    """Finds the subjects a text mentions without scanning every subject: entity names by their
    first word (case-insensitive: "acme robotics" names Acme Robotics), concepts by their terms
    and tags."""

    def __init__(self, subjects: Iterable[Subject]):
        self.subjects = list(subjects)
        self.by_first: dict[str, list[tuple[str, Subject]]] = {}
        self.by_term: dict[str, list[Subject]] = {}
        self.by_tag: dict[str, Subject] = {}
        for s in self.subjects:
            if s.page_type == "entity":
                for name in (s.title, *s.aliases):
                    self.by_first.setdefault(name.split()[0].casefold(), []).append((name.casefold(), s))
            else:
                self.by_tag[s.title.lower()] = s
                for term in s.terms:
                    self.by_term.setdefault(term, []).append(s)

    def mentions(self, text: str) -> list[tuple[int, Subject]]:
        """(offset, subject) of every subject ``text`` mentions, first mention each, in order
        (a concept named by its terms ranks after every entity)."""
        found: dict[str, tuple[int, int, Subject]] = {}
        folded = text.casefold() if len(text.casefold()) == len(text) else None
        for m in _WORD.finditer(text):
            for name, s in self.by_first.get(_bare(m.group(0)).casefold(), ()):
                if folded is not None and folded.startswith(name, m.start()):
                    after = text[m.start() + len(name) : m.start() + len(name) + 1]
                    if (not after or not after.isalnum()) and s.id not in found:
                        found[s.id] = (m.start(), 0, s)
        for tag in HASHTAG_RE.finditer(text):
            s = self.by_tag.get(tag.group(1).lower())
            if s is not None and s.id not in found:
                found[s.id] = (tag.start(), 1, s)
        if self.by_term:
            stems = content_tokens(text)
            for term in stems:
                for s in self.by_term.get(term, ()):
                    if s.id not in found and s.terms <= stems:
                        found[s.id] = (len(text), 1, s)
        return [(at, s) for at, _, s in sorted(found.values(), key=lambda x: (x[0], x[1], x[2].id))]

    def home_of(self, text: str) -> Subject | None:
        """The page a claim lives on: the entity mentioned first, else a concept it names."""
        found = self.mentions(text)
        return found[0][1] if found else None
