"""Fact grouping between nights (issue 13, speed): a night compares only new or changed lines and
reuses the last grouping's pair strengths; the groups are exactly those of comparing every pair."""

from __future__ import annotations

from lifelong_plugins.dreaming.facts import (
    FactPairCache,
    GroupingConfig,
    fact_view,
    group_facts,
    group_facts_known,
    names_seen,
    view_fingerprint,
)

from .conftest import at, dream
from .test_facts import OFFICE, SEED  # one fact in three wordings, another about the same company

OTHER = [
    "Parked the car on level 2 of the Mall of Berlin garage.",
    "Parked the car on level 5 of the Mall of Berlin garage.",
    "Coffee with Priya about the onboarding flow.",
    "Priya starts the onboarding review on Monday.",
    "Water the plants and take out the recycling bins.",
    "Take out the recycling bins, water the plants on the balcony.",
]


def views_of(texts: list[str]):
    names = names_seen(texts)
    return [fact_view(f"k{i:02d}", t, {f"memory/d{i}.md"}, names) for i, t in enumerate(texts)]


def test_reusing_known_pairs_gives_the_same_groups_and_compares_only_new_lines() -> None:
    texts = SEED + OFFICE + OTHER
    cosine = lambda a, b: 0.9 if {a, b} <= {"k00", "k01", "k02"} else 0.5  # noqa: E731
    full = group_facts_known(views_of(texts), cosine, GroupingConfig())
    assert full.ids == group_facts(views_of(texts), cosine, GroupingConfig())
    assert len({full.ids[f"k{i:02d}"] for i in range(3)}) == 1
    # last night: all but the last statement of each fact; tonight the rest arrives
    yesterday = views_of(texts)[:-1]
    old = group_facts_known(yesterday, cosine, GroupingConfig())
    tonight = views_of(texts)
    before = {v.key: view_fingerprint(v) for v in yesterday}
    unchanged = {v.key for v in tonight if before.get(v.key) == view_fingerprint(v)}
    again = group_facts_known(tonight, cosine, GroupingConfig(), old.pairs, unchanged)
    assert again.ids == full.ids and again.pairs == full.pairs
    assert again.compared < full.compared
    # nothing unchanged: everything is compared again, same groups
    assert group_facts_known(tonight, cosine, GroupingConfig(), old.pairs, set()).compared == full.compared


def test_a_changed_fingerprint_is_compared_again() -> None:
    """A name first seen tonight changes what an old line is about: its pairs are not reused."""
    a = fact_view("a", "Lina owns the Juniper release notes.", {"memory/1.md"}, frozenset())
    b = fact_view("b", "The Juniper release notes are written by Lina.", {"memory/2.md"}, frozenset())
    assert view_fingerprint(a) != view_fingerprint(
        fact_view("a", "Lina owns the Juniper release notes.", {"memory/1.md"}, frozenset({"lina"}))
    )
    wrong = {("a", "b"): 9.0}  # a stale strength is only trusted for two unchanged keys
    assert group_facts_known([a, b], None, GroupingConfig(), wrong, {"a"}).pairs.get(("a", "b")) != 9.0


def test_nightly_dreams_keep_the_pair_cache(dream_host) -> None:
    files = {"MEMORY.md": "# MEMORY\n"}
    for i, (day, text) in enumerate(zip(["2026-04-02", "2026-04-05"], SEED, strict=False)):
        files[f"memory/{day}.md"] = f"# {day}\n\n## Work\n- {text}\n- {OTHER[i]}\n"
    host = dream_host(files)
    dream(host, at("2026-04-06"))
    cache = FactPairCache(host.store, "")
    row = host.store.conn.execute(
        "SELECT value FROM dream_meta WHERE key = ?", (FactPairCache.META,)
    ).fetchone()
    assert row is not None
    fps, _pairs = FactPairCache(host.store, row[0]).load()
    live = {r[0] for r in host.store.conn.execute("SELECT key FROM dream_candidates WHERE status = 'staged'")}
    assert live and set(fps) == live  # every live candidate's fingerprint is kept for the next night
    assert cache.load() == ({}, {})  # another setting (config, embedder) reuses nothing
