"""Claims that disagree (pure): pairs of claims about one subject and attribute with different
values (:func:`lifelong.facts.compare`). Lint reports them; compile marks a claim below the
confidence threshold that disagrees with another ``contested``."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from lifelong import facts

from .confidence import parse_day
from .vault import Claim

CONTESTED_REASON = "contested (below the confidence threshold: one source each, or old)"


@dataclass(frozen=True)
class Contradiction:
    page: str
    left: Claim
    right: Claim
    reason: str
    other_page: str = ""  # the right claim's page when it is on another page

    @property
    def pages(self) -> str:
        return f"{self.page} / {self.other_page}" if self.other_page else self.page


def _statement(c: Claim) -> facts.Statement:
    return _read(c.text, c.updated_at)


@lru_cache(maxsize=16384)
def _read(text: str, updated_at: str | None) -> facts.Statement:
    """A claim's statement, read once per process: compile (:func:`contested_ids`) and the lint
    after it compare the same claims."""
    day = parse_day(updated_at)
    return facts.extract(text, now=dt.datetime(day.year, day.month, day.day) if day else None)


def find_contradictions(
    active: list[tuple[str, Claim]], *, bucket_cap: int = 50, weak: set[str] | frozenset[str] = frozenset()
) -> list[Contradiction]:
    """Pairs of claims (active ones, and those of ``weak``: below the threshold, often one source
    each; such a pair is **contested**, neither side settled) about the same subject and attribute
    with different values
    (:func:`lifelong.facts.compare`): every pair on one page, and pairs across pages that share a
    subject stem (a stem shared by more than ``bucket_cap`` claims is too common to name a
    subject, and is not used to pair them)."""
    items = [(page, c, _statement(c)) for page, c in active]
    items = [x for x in items if x[2].values]
    pairs: set[tuple[int, int]] = set()
    by_page: dict[str, list[int]] = {}
    for i, (page, _, _) in enumerate(items):
        by_page.setdefault(page, []).append(i)
    df: Counter[str] = Counter(t for _, _, st in items for t in st.subject)
    buckets: dict[str, list[int]] = {}
    for i, (_, _, st) in enumerate(items):
        for t in st.subject:
            if df[t] <= bucket_cap:
                buckets.setdefault(t, []).append(i)
    groups = [*by_page.values(), *buckets.values()]
    for members in groups:
        pairs.update((a, b) for k, a in enumerate(members) for b in members[k + 1 :])
    out = []
    for a, b in sorted(pairs):
        (pa, ca, sa), (pb, cb, sb) = items[a], items[b]
        if not (sa.kinds & sb.kinds or {"date", "weekday"} <= (sa.kinds | sb.kinds)):
            continue
        comparison = facts.compare(sa, sb)
        if comparison.conflicting:
            reason = comparison.reason
            if ca.id in weak or cb.id in weak:
                reason = f"{CONTESTED_REASON}: {reason}"
            out.append(Contradiction(pa, ca, cb, reason, pb if pb != pa else ""))
    return out


def contested_ids(claims: list[tuple[str, Claim]], threshold: float) -> set[str]:
    """The active claims below ``threshold`` (one source, or old) that disagree with another
    claim: neither side is settled, so such a claim is not stated as current. A claim at or above
    the threshold stays active; lint still reports the conflict."""
    active = [(page, c) for page, c in claims if c.status == "active"]
    weak = {c.id for _, c in active if c.confidence < threshold}
    if not weak:
        return set()
    found = find_contradictions(active, weak=weak)
    return {c.id for k in found for c in (k.left, k.right) if c.id in weak}
