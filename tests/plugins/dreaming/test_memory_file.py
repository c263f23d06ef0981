"""MEMORY.md managed sections, idempotence by key, sticky items and the size budget (pure)."""

from __future__ import annotations

from lifelong_plugins.dreaming.memory_file import (
    COMPACTED,
    Item,
    add_items,
    add_run_region,
    compact,
    existing_keys,
    memory_lines,
    region_name,
    render_region_body,
    strike_items,
)

from lifelong.journal import unapply
from lifelong.workspace import find_regions, read_region, remove_region

HUMAN = (
    "# MEMORY\n\nHand-written intro. Lots of bytes here.\n\n## Sticky\n"
    "- Never schedule meetings before 10:00 on Mondays. <!-- sticky -->\n"
)


def outside(text: str) -> str:
    """The text with every managed region cut out."""
    out, pos = [], 0
    for r in find_regions(text):
        out.append(text[pos : r.start])
        pos = r.end
    return "".join(out) + text[pos:]


def items(prefix: str, n: int) -> list[Item]:
    return [
        Item(
            f"{prefix}{i:010x}",
            f"Fact {prefix} number {i} with some padding text",
            f"memory/2026-03-0{i % 9 + 1}.md#L{i + 1}-L{i + 1}",
        )
        for i in range(n)
    ]


def test_region_format_keys_and_untouched_human_text() -> None:
    body = render_region_body(
        "2026-03-24", [Item("3f2a9c1b7d10", "Pitch opens with the demo", "memory/2026-03-04.md#L4-L4")]
    )
    text = add_run_region(HUMAN, "20260324-030000-ab12", body)
    assert text.startswith(HUMAN)
    assert read_region(text, region_name("20260324-030000-ab12")) == (
        "## Promoted 2026-03-24\n- Pitch opens with the demo <!-- key:3f2a9c1b7d10 src:memory/2026-03-04.md#L4-L4 -->\n"
    )
    assert "<!-- lifelong:promoted-20260324-030000-ab12:start -->" in text
    assert existing_keys(text) == {"3f2a9c1b7d10"}
    assert (
        remove_region(text, region_name("20260324-030000-ab12")) == HUMAN + "\n"
    )  # the blank separator line stays
    assert ("Pitch opens with the demo") in [t for _, t in memory_lines(text)]


def test_item_text_cannot_break_the_fences() -> None:
    body = render_region_body(
        "2026-03-24", [Item("aaaaaaaaaaaa", "evil --> <!-- lifelong:x:end --> text", "m#L1-L1")]
    )
    text = add_run_region(HUMAN, "r1", body)
    assert [r.name for r in find_regions(text)] == [region_name("r1")]


def test_empty_file_gets_a_header() -> None:
    text = add_run_region("", "r1", render_region_body("2026-03-24", items("a", 1)))
    assert text.startswith("# MEMORY\n")


def test_compaction_merges_oldest_managed_sections_first_and_reports_it() -> None:
    text = HUMAN
    for n, run in enumerate(["20260301-030000-aaaa", "20260302-030000-bbbb", "20260303-030000-cccc"]):
        text = add_run_region(text, run, render_region_body(f"2026-03-0{n + 1}", items(chr(97 + n), 5)))
    size = len(text.encode())
    new, report = compact(text, size - 120, keep={region_name("20260303-030000-cccc")})
    assert report.merged_regions == [region_name("20260301-030000-aaaa")]
    assert len(new.encode()) <= size - 120 and not report.over_budget and "compacted" in report.note
    assert outside(new) == outside(text) and new.startswith(HUMAN)  # human bytes identical
    assert existing_keys(new) == existing_keys(text)  # items kept (keys and text), sources dropped
    assert "src:" not in read_region(new, COMPACTED)
    assert read_region(new, region_name("20260303-030000-cccc")) == read_region(
        text, region_name("20260303-030000-cccc")
    )
    # within budget: nothing changes
    same, quiet = compact(text, size, keep=set())
    assert same == text and not quiet.changed


def test_compaction_evicts_oldest_items_then_gives_up_on_human_text() -> None:
    text = HUMAN
    for n, run in enumerate(["20260301-030000-aaaa", "20260302-030000-bbbb"]):
        text = add_run_region(text, run, render_region_body(f"2026-03-0{n + 1}", items(chr(97 + n), 5)))
    new, report = compact(text, len(HUMAN.encode()) + 400, keep={region_name("20260302-030000-bbbb")})
    assert report.evicted and report.evicted[0]["key"] == "a" + "0" * 10
    assert outside(new) == outside(text) and new.startswith(HUMAN)
    tiny, over = compact(
        text, 1024 if len(HUMAN) < 1024 else len(HUMAN), keep={region_name("20260302-030000-bbbb")}
    )
    assert outside(tiny) == outside(text)
    assert over.over_budget is (len(tiny.encode()) > over.budget)


def test_sticky_items_are_never_removed_or_merged() -> None:
    sticky_body = (
        "## Promoted 2026-03-01\n- Keep me forever <!-- key:aaaaaaaaaaaa src:m#L1-L1 --> <!-- sticky -->\n"
    )
    text = add_run_region(HUMAN, "20260301-030000-aaaa", sticky_body)
    text = add_run_region(text, "20260302-030000-bbbb", render_region_body("2026-03-02", items("b", 5)))
    text = add_run_region(text, "20260303-030000-cccc", render_region_body("2026-03-03", items("c", 2)))
    new, report = compact(text, 600, keep={region_name("20260303-030000-cccc")})
    assert report.skipped_sticky == [region_name("20260301-030000-aaaa")]
    assert read_region(new, region_name("20260301-030000-aaaa")) == sticky_body
    assert "Never schedule meetings before 10:00 on Mondays. <!-- sticky -->" in new
    # a sticky line inside the compacted section survives eviction too
    merged = text.replace("Fact b number 0 with some padding text", "Fact b zero <!-- sticky -->")
    new2, report2 = compact(merged, 300, keep={region_name("20260303-030000-cccc")})
    assert "Fact b zero <!-- sticky -->" in new2 and report2.over_budget


def test_a_compaction_is_undone_line_by_line_keeping_a_later_edit() -> None:
    text = HUMAN
    for n, run in enumerate(["20260301-030000-aaaa", "20260302-030000-bbbb"]):
        text = add_run_region(text, run, render_region_body(f"2026-03-0{n + 1}", items(chr(97 + n), 5)))
    before = text
    after, report = compact(text, len(text.encode()) - 100, keep={region_name("20260302-030000-bbbb")})
    edited = after.replace("Hand-written intro.", "Hand-written intro, edited later.")
    undone = unapply(before, after, edited)
    assert undone.conflicts == ()
    restored = undone.text
    assert restored == before.replace("Hand-written intro.", "Hand-written intro, edited later.")
    assert "edited later" in restored
    assert existing_keys(restored) == existing_keys(before)
    assert read_region(restored, COMPACTED) is None
    assert read_region(restored, region_name("20260301-030000-aaaa")) == read_region(
        before, region_name("20260301-030000-aaaa")
    )


def test_items_struck_in_several_sections_leave_every_fence_in_place() -> None:
    # striking an item lengthens its section; the sections after it are read where they are now
    # (read at their old offsets, the second strike cut across a fence: "managed region end for
    # 'topic-people' without a matching start", the year benchmark's next night)
    text = add_items(
        HUMAN,
        [
            Item("aaaa000001", "Rent is 1,250 EUR a month", "memory/2026-03-01.md#L2-L2", topic="home"),
            Item("bbbb000002", "Landlord is Pieter Brandt", "memory/2026-03-01.md#L3-L3", topic="people"),
            Item("cccc000003", "Dentist is Dr. Novak", "memory/2026-03-02.md#L2-L2", topic="health"),
        ],
    )[0]
    struck, touched = strike_items(
        text, {"aaaa000001": "Rent is 1,300 EUR", "cccc000003": "Dentist is Dr. Keller"}, {}
    )
    assert sorted(touched) == sorted(r.name for r in find_regions(text) if r.name != "topic-people")
    assert [r.name for r in find_regions(struck)] == [r.name for r in find_regions(text)]  # all balanced
    assert "- ~~Rent is 1,250 EUR a month~~ (superseded by Rent is 1,300 EUR)" in struck
    assert "- ~~Dentist is Dr. Novak~~ (superseded by Dentist is Dr. Keller)" in struck
    assert "- Landlord is Pieter Brandt <!-- key:bbbb000002" in struck
    assert outside(struck) == outside(text)
