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


def _promoted(dream_host, line: str, queries: dict[str, list[str]]):  # noqa: ANN001, ANN202
    """A workspace whose one durable line (recalled on three days) the first night promoted."""
    host = dream_host({"MEMORY.md": MEMORY, "memory/2026-03-02.md": _day("2026-03-02", line, "bought milk")})
    _recall(host, "memory/2026-03-02.md", 3, queries)
    first = dream(host, at("2026-03-05"))
    assert {p["text"] for p in first.promoted} == {line}
    return host


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


SWIM_CLASS = "Lotte Seepferdchen-Kurs samstags 10:15 im Südbad"
DOCTOR = "Lotte Fieber → Dr. Aydin, Kinderarztpraxis Plinganserstraße, neuer Termin Montag 9:00"


def test_a_correction_read_with_less_than_certainty_marks_the_item_contested(dream_host) -> None:  # noqa: ANN001
    # the later line reads as an update of the promoted item (Lotte, a new time, "neuer") but not
    # surely (lifelong.facts.surely_updates: it speaks of a doctor the item does not): the item is
    # marked "(contested by …)" and stays current, never struck through on that reading
    queries = {
        "2026-03-02": ["when is Lotte's swimming", "Seepferdchen time"],
        "2026-03-03": ["Lotte swim class", "what time is the Südbad"],
        "2026-03-04": ["swimming Saturday", "Lotte Kurs", "Seepferdchen-Kurs"],
    }
    host = _promoted(dream_host, SWIM_CLASS, queries)
    root = host.workspace.root
    memory = root / "MEMORY.md"

    (root / "memory/2026-03-10.md").write_text(_day("2026-03-10", DOCTOR, "rainy"), "utf-8")
    before = memory.read_bytes()
    second = dream(host, at("2026-03-11"))
    text = memory.read_text("utf-8")
    outdated = second.reports["rem"]["possibly_outdated_in_memory"]
    assert [(r["earlier_text"], r["sure"]) for r in outdated] == [(SWIM_CLASS, False)]
    assert f"- {SWIM_CLASS} (contested by " in text and "~~" not in text
    assert not second.reports["deep"]["struck"] and len(second.reports["deep"]["contested"]) == 1
    report = (root / ".lifelong/reports" / second.run_id / "report.md").read_text("utf-8")
    assert "## Marked in MEMORY.md" in report and "marked contested, by" in report

    # a third night changes nothing more (the mark is not re-applied)
    third = dream(host, at("2026-03-12"))
    assert memory.read_text("utf-8") == text and not third.reports["deep"]["contested"]

    rollback_run(host, second.run_id, force=True)
    assert memory.read_bytes() == before


def test_a_contested_item_is_automatic_text_and_a_sure_correction_strikes_it() -> None:
    """The contested mark is the suite's edit (not a human's: a later strike or rollback may
    touch the line), and a sure correction reaching a contested item strikes its own text."""
    from lifelong_plugins.dreaming.memory_file import (
        contested_keys,
        edited_by_human,
        item_hash,
        item_text,
        strike_items,
        struck_keys,
    )

    rent = "- Rent is $245 a week each <!-- key:bbbbbbbbbbbb src:memory/2027-08-03.md#L2 on:2027-08-04 -->"
    text = (
        f"# MEMORY\n\n<!-- lifelong:topic-home:start -->\n## Home\n{rent}\n<!-- lifelong:topic-home:end -->\n"
    )
    written = {"bbbbbbbbbbbb": item_hash(item_text(rent))}
    out, _ = strike_items(text, {}, written, {"bbbbbbbbbbbb": '"agent rang about the bins", 2027-08-10'})
    line = next(x for x in out.splitlines() if "key:" in x)
    assert line.startswith(
        '- Rent is $245 a week each (contested by "agent rang about the bins", 2027-08-10)'
    )
    assert contested_keys(out) == {"bbbbbbbbbbbb"} and not struck_keys(out)
    assert not edited_by_human(line, written)
    assert edited_by_human(line.replace("$245", "$250"), written)  # a human's change still shows
    # contested again: the first mark stays; then a sure correction strikes the item's own text
    assert strike_items(out, {}, written, {"bbbbbbbbbbbb": '"x", 2027-08-11'})[0] == out
    struck, _ = strike_items(out, {"bbbbbbbbbbbb": '"rent now $265 a week each", 2027-08-17'}, written)
    assert '- ~~Rent is $245 a week each~~ (superseded by "rent now $265 a week each", 2027-08-17)' in struck
    assert struck_keys(struck) == {"bbbbbbbbbbbb"} and not contested_keys(struck)


BRIDGE = "Bridge is at the Methodist hall on Mondays, two o'clock start, Joyce and I are partners."
BRIDGE_NEW = (
    "Bridge was not at the hall at all today. The Methodists have sold it after all, so we met in the upstairs"
    " room at the Sailing Club instead. Mrs Pardoe says that is where we shall be from now on, Mondays at two."
)


def test_a_correction_grouped_with_the_item_it_changes_is_still_promoted(dream_host) -> None:  # noqa: ANN001
    # fact grouping reads both lines as one fact (bridge at the hall); REM reads the later as a
    # correction of the promoted item: it is promoted on its own the night it appears and the item
    # is marked, rather than the new place joining the old item unseen
    queries = {
        "2026-03-02": ["where is bridge", "bridge club venue"],
        "2026-03-03": ["Methodist hall", "what time is bridge"],
        "2026-03-04": ["cards afternoon", "bridge with Joyce", "where do we play bridge"],
    }
    host = _promoted(dream_host, BRIDGE, queries)
    root = host.workspace.root
    (root / "memory/2026-03-10.md").write_text(_day("2026-03-10", BRIDGE_NEW, "rainy"), "utf-8")
    second = dream(host, at("2026-03-11"))
    text = (root / "MEMORY.md").read_text("utf-8")
    assert [p["text"] for p in second.promoted] == [BRIDGE_NEW]
    assert f"{BRIDGE}~~ (superseded by " in text or f"{BRIDGE} (contested by " in text


def test_the_pointer_to_a_correction_never_quotes_a_secret() -> None:
    """A correction promoted on an earlier night is in MEMORY.md redacted; the strike's pointer
    quotes it from the candidate (the daily's text) and is screened the same way."""
    import datetime as dt
    from types import SimpleNamespace

    from lifelong_plugins.dreaming.promotion import struck_pointers

    later = SimpleNamespace(text="new wifi for guests: Kiez-5G, password: hunter2hunter2")
    run = SimpleNamespace(
        pool=SimpleNamespace(candidates={"bbbbbbbbbbbb": later}), now=dt.datetime(2026, 3, 11, 3, 0)
    )
    plan = SimpleNamespace(promote=(), struck=(("aaaaaaaaaaaa", "bbbbbbbbbbbb"),), contested=())
    (pointer,) = struck_pointers(run, plan).values()
    assert "hunter2hunter2" not in pointer and "Kiez-5G" in pointer and pointer.endswith(", 2026-03-11")
