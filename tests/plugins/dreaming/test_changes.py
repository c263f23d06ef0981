"""A fact that changes in the notes (issue 41): REM reads the later line as an update of a
promoted item through the core's one comparison (``lifelong.facts.relate``), the new value is
promoted at once, and the older item is struck through in MEMORY.md, naming what replaced it,
never deleted; a rollback restores the exact bytes."""

from __future__ import annotations

from lifelong_plugins.dreaming.rollback import rollback_run

from .conftest import at, dream, record_event

MEMORY = "# MEMORY\n\nDurable facts. Edit freely.\n"
OLD = "my number is 0176 4411 2290"
NEW = "my number is now 0152 2290 4471 — the old 0176 one is dead"
SWIM_OLD = "Mila Schwimmkurs tuesdays 16:30 at the Stadtbad"
SWIM_NEW = "Schwimmkurs moved!! from now on thursdays 15:45 at the Stadtbad"


def _day(day: str, *lines: str) -> str:
    return f"# {day}\n\n" + "".join(f"- {line}\n" for line in lines)


def _recall(host, path: str, line: int, queries: dict[str, list[str]]) -> None:  # noqa: ANN001
    for day, qs in queries.items():
        for n, q in enumerate(qs):
            record_event(host, path, line, line, q, at(day, 10 + n), score=0.9)


def test_a_changed_number_and_slot_strike_the_older_items(dream_host) -> None:  # noqa: ANN001
    files = {
        "MEMORY.md": MEMORY,
        "memory/2026-03-02.md": _day("2026-03-02", OLD, SWIM_OLD, "bought milk"),
    }
    host = dream_host(files)
    root = host.workspace.root
    queries = {
        "2026-03-02": ["what's my number", "my phone"],
        "2026-03-03": ["mobile number", "how to call me"],
        "2026-03-04": ["my cell", "phone number please", "what is my mobile"],
    }
    swim = {
        "2026-03-02": ["when is swimming", "mila swim day"],
        "2026-03-03": ["schwimmkurs time", "what day is the pool"],
        "2026-03-04": ["swim lesson", "pool time for mila"],
    }
    _recall(host, "memory/2026-03-02.md", 3, queries)
    _recall(host, "memory/2026-03-02.md", 3, {"2026-03-04": ["number to reach me", "my contact number"]})
    _recall(host, "memory/2026-03-02.md", 4, swim)
    first = dream(host, at("2026-03-05"))
    assert {p["text"] for p in first.promoted} == {OLD, SWIM_OLD}, [
        m["failed_gates"] for m in first.reports["deep"]["near_misses"]
    ]
    memory = root / "MEMORY.md"

    (root / "memory/2026-03-10.md").write_text(_day("2026-03-10", NEW, SWIM_NEW, "rainy"), "utf-8")
    before = memory.read_bytes()
    second = dream(host, at("2026-03-11"))
    text = memory.read_text("utf-8")
    # the new values are in MEMORY.md, promoted on the night they appeared (a correction of a
    # fact already judged durable), and the old items are struck through, not deleted
    assert {p["text"] for p in second.promoted} == {NEW, SWIM_NEW}
    assert f"~~{OLD}~~ (superseded by " in text and f"~~{SWIM_OLD}~~ (superseded by " in text
    live = [line for line in text.splitlines() if "key:" in line and "~~" not in line]
    assert not any("0176 4411" in line or "tuesdays" in line for line in live)
    assert len(second.reports["deep"]["struck"]) == 2

    # a third night changes nothing more (the strike is not re-applied)
    third = dream(host, at("2026-03-12"))
    assert memory.read_text("utf-8") == text and not third.reports["deep"]["struck"]

    rollback_run(host, second.run_id, force=True)
    assert memory.read_bytes() == before


def test_a_second_persons_number_is_no_change(dream_host) -> None:  # noqa: ANN001
    files = {
        "MEMORY.md": MEMORY,
        "memory/2026-03-02.md": _day("2026-03-02", "Anna's number is 0171 555 2030"),
    }
    host = dream_host(files)
    _recall(
        host,
        "memory/2026-03-02.md",
        3,
        {
            "2026-03-02": ["anna phone", "call anna"],
            "2026-03-03": ["anna's number", "anna mobile"],
            "2026-03-04": ["ring anna", "anna cell"],
        },
    )
    dream(host, at("2026-03-05"))
    root = host.workspace.root
    (root / "memory/2026-03-10.md").write_text(_day("2026-03-10", "Ben's number is 0171 555 3020"), "utf-8")
    second = dream(host, at("2026-03-11"))
    assert "~~" not in (root / "MEMORY.md").read_text("utf-8")
    assert not second.reports["deep"]["struck"]


def test_striking_items_in_two_sections_keeps_every_fence() -> None:
    """A held-out month (a chat export) crashed the nightly run: striking an item in one section
    moved the offsets of the sections after it, and the next section was rewritten from stale
    offsets, leaving an end fence without its start ("managed region end for 'topic-people'
    without a matching start"). Every section struck stays whole, and nothing else moves."""
    from lifelong_plugins.dreaming.memory_file import item_hash, item_text, strike_items

    from lifelong.workspace import find_regions

    people = "- Mum's landline is (07) 3852 4417 <!-- key:aaaaaaaaaaaa src:memory/2027-08-02.md#L2 on:2027-08-03 -->"
    rent = "- Rent is $245 a week each <!-- key:bbbbbbbbbbbb src:memory/2027-08-03.md#L2 on:2027-08-04 -->"
    text = (
        "# MEMORY\n\nMy own line.\n\n"
        f"<!-- lifelong:topic-people:start -->\n## People\n{people}\n<!-- lifelong:topic-people:end -->\n\n"
        f"<!-- lifelong:topic-home:start -->\n## Home and money\n{rent}\n<!-- lifelong:topic-home:end -->\n"
    )
    written = {"aaaaaaaaaaaa": item_hash(item_text(people)), "bbbbbbbbbbbb": item_hash(item_text(rent))}
    struck = {
        "aaaaaaaaaaaa": '"Mum: new landline (07) 3391 0628", 2027-08-07',
        "bbbbbbbbbbbb": '"rent $265 each", 2027-08-17',
    }
    out, touched = strike_items(text, struck, written)
    assert touched == ["topic-people", "topic-home"]
    assert [r.name for r in find_regions(out)] == ["topic-people", "topic-home"]
    assert "- ~~Mum's landline is (07) 3852 4417~~ (superseded by" in out
    assert "- ~~Rent is $245 a week each~~ (superseded by" in out
    assert out.startswith("# MEMORY\n\nMy own line.\n\n") and out.count("\n") == text.count("\n")
