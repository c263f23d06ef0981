"""REM's pure parts: concept tags, themes across days, corrections."""

from __future__ import annotations

import datetime as dt

from lifelong_plugins.dreaming.themes import (
    Entry,
    concept_tags,
    find_corrections,
    find_themes,
    is_correction,
    richness,
    topic_terms,
)


def test_concept_tags_find_names_identifiers_dates_and_amounts() -> None:
    tags = concept_tags(
        "Pitched Northwind Ventures today; Elena Brandt asked about TW-418, EUR 6,400 and April 14-16 (41%)."
    )
    assert {"northwind ventures", "elena brandt", "tw-418", "eur6,400", "14-16 april", "41%"} <= tags
    # a date is one tag however it is written
    for written in ("14 March", "March 14", "the 14th of March", "Mar. 14th", "14th March"):
        assert "14 march" in concept_tags(f"Chidi's birthday: {written}."), written
    assert concept_tags("Tried the new espresso machine, too bitter.") == frozenset()
    assert richness("Android release date fixed: April 28, owned by Priya.") == 1.0
    assert richness("Tried the new espresso machine, too bitter.") == 0.0


def _entries(rows: list[tuple[str, str, str]]) -> list[Entry]:
    return [Entry(k, dt.date.fromisoformat(d), t, topic_terms(t)) for k, d, t in rows]


def test_a_theme_needs_several_days_and_entries() -> None:
    entries = _entries(
        [
            ("a", "2026-03-02", "Pitch deck started for Northwind"),
            ("b", "2026-03-04", "Pitch opens with the sync demo"),
            ("c", "2026-03-09", "Rehearsed the pitch with Jonas"),
            ("d", "2026-03-09", "Espresso machine too bitter"),
            ("e", "2026-03-09", "Espresso again, still bitter"),
        ]
    )
    themes = find_themes(entries, min_days=2, min_entries=3, limit=10)
    assert [t.tag for t in themes] == ["pitch"]
    assert themes[0].days == 3 and themes[0].keys == ["a", "b", "c"]
    assert find_themes(entries, min_days=1, min_entries=2, limit=10)[0].tag == "pitch"


def test_corrections_supersede_the_earlier_note_only() -> None:
    earlier = _entries([("old", "2026-03-04", "Ask is EUR 1.2M seed at a EUR 8M pre-money valuation.")])
    unrelated = _entries([("other", "2026-03-04", "Budget for the offsite is EUR 6,400.")])
    later = _entries([("new", "2026-03-10", "Correction: the seed ask is now EUR 1.5M at EUR 8M pre-money.")])
    known = {e.key: e for e in earlier + unrelated}
    found = find_corrections(later, known)
    assert [(c.earlier, c.later) for c in found] == [("old", "new")]
    assert is_correction("Dentist appointment moved to March 24.")
    assert not is_correction("Priya proposed moving the Android release to April 28.")
    # a correction never supersedes a later note
    assert find_corrections(earlier, {e.key: e for e in later}) == []
    # a value a later note negates is not a new value: it restates the earlier note
    standup = _entries([("s1", "2026-04-12", "Standup moved to 9:15, every weekday.")])
    again = _entries([("s2", "2026-04-17", "Daily standup is now at 9:15, not 9:30 any more.")])
    assert find_corrections(again, {e.key: e for e in standup}) == []
    moved = _entries([("s3", "2026-04-20", "Daily standup is now at 10:00, not 9:15 any more.")])
    assert [c.earlier for c in find_corrections(moved, {e.key: e for e in standup})] == ["s1"]
