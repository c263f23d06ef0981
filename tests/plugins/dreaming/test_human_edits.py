"""Human edits inside managed fences (issue 14, item 7): detected by a per-item hash, kept by
compaction and eviction, surfaced in the diary and status; a forced rollback keeps a human's edit
to any file it wrote (a wiki page too) and is itself reversible."""

from __future__ import annotations

from lifelong_plugins.dreaming.memory_file import (
    Item,
    add_items,
    add_run_region,
    compact,
    human_edits,
    item_hash,
    region_name,
    render_region_body,
)
from lifelong_plugins.dreaming.rollback import rollback_run
from lifelong_plugins.dreaming.state import history
from lifelong_plugins.dreaming.status import dreaming_status

from lifelong.workspace import read_region

from .conftest import PLUGINS, at, dream
from .test_run import ANDROID, D04, D16, FILES, PITCH, PITCH_QUERIES, recall

HEAD = "# MEMORY\n\nHand-written intro.\n"


def items(n: int) -> list[Item]:
    return [
        Item(
            f"{i:012x}",
            f"Project fact {i}: the launch budget is {i}0k euros",
            "memory/x.md#L1-L1",
            f"2026-02-{i + 1:02d}",
        )
        for i in range(n)
    ]


def test_an_edited_value_and_an_added_heading_are_detected_and_never_compacted_away() -> None:
    facts = items(8)
    text, _ = add_items(HEAD, facts)
    written = {i.key: item_hash(i.text) for i in facts}
    assert human_edits(text, written) == []
    edited = text.replace("the launch budget is 00k euros", "the launch budget is 35k euros (corrected)")
    edited = edited.replace("## Projects and work\n", "## Projects and work\n### My own notes\n")
    found = human_edits(edited, written)
    assert [(e["kind"], e["key"]) for e in found] == [("added heading", ""), ("changed item", "0" * 12)]
    # a budget that needs every item gone: the oldest (the edited one) is kept, the heading too
    new, report = compact(edited, 200, keep=set(), max_evict_fraction=1.0, written=written)
    assert "the launch budget is 35k euros (corrected)" in new and "### My own notes" in new
    assert report.evicted and "0" * 12 not in {e["key"] for e in report.evicted}
    assert "0" * 12 in report.skipped_human
    # without the hashes (the old behaviour) the human-corrected value is the first evicted
    _, blind = compact(edited, 200, keep=set(), max_evict_fraction=1.0)
    assert blind.evicted[0]["key"] == "0" * 12


def test_a_legacy_section_with_a_human_heading_is_not_merged() -> None:
    text = add_run_region(HEAD, "20260201-030000-aaaa", render_region_body("2026-02-01", items(6)))
    text = text.replace("## Promoted 2026-02-01\n", "## Promoted 2026-02-01\n## Keep: my travel notes\n")
    new, report = compact(text, 300, keep=set(), written={})
    assert "## Keep: my travel notes" in new
    assert read_region(new, region_name("20260201-030000-aaaa")) is not None
    assert region_name("20260201-030000-aaaa") not in report.merged_regions


def test_a_run_keeps_and_reports_a_human_correction_inside_its_section(dream_host) -> None:  # noqa: ANN001
    padded = (
        FILES["MEMORY.md"]
        + "\n## Long notes\n"
        + "".join(f"- A hand-written line number {i:02d}.\n" for i in range(24))
    )
    host = dream_host(
        {**FILES, "MEMORY.md": padded},
        {"plugins": {"dreaming": {"memory_max_bytes": 1024, "max_evict_fraction": 1.0}}},
    )
    root = host.workspace.root
    recall(host, D04, 1, 6, PITCH_QUERIES)
    first = dream(host, at("2026-03-10"))
    assert [p["text"] for p in first.promoted] == [PITCH]
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text().replace("slide 9", "slide 7"))
    recall(
        host,
        D16,
        1,
        6,
        {
            d: ["android release date", "when is the android release", "android april"]
            for d in ("2026-03-17", "2026-03-18")
        },
    )
    second = dream(host, at("2026-03-19"))
    assert [p["text"] for p in second.promoted] == [ANDROID]
    text = memory.read_text()
    assert "market size moves to slide 7." in text and ANDROID in text  # over budget, yet kept
    assert len(text.encode()) > 1024
    edits = second.reports["deep"]["human_edits"]
    assert [(e["kind"], e["key"]) for e in edits] == [("changed item", first.promoted[0]["key"])]
    assert second.reports["deep"]["compaction"]["evicted"] == []
    diary = (root / "DREAMS.md").read_text()
    assert "I found 1 edit(s) of yours inside my sections" in diary and "slide 7" in diary
    status = dreaming_status(host.ctx)
    assert len(status.data["human_edits"]) == 1 and any("human edit" in s for s in status.summary)


def test_a_forced_rollback_keeps_a_human_edit_to_a_wiki_page(dream_host) -> None:  # noqa: ANN001
    host = dream_host(FILES, builtins=(*PLUGINS, "wiki"))
    root = host.workspace.root
    recall(host, D04, 1, 6, PITCH_QUERIES)
    run = dream(host, at("2026-03-10"))
    pages = sorted((root / "wiki").rglob("*.md"))
    assert pages, "the wiki compiled nothing"
    page = pages[-1]
    page.write_text(page.read_text() + "\nMy own note on this page.\n")
    edited = page.read_bytes()
    result = rollback_run(host, run.run_id, force=True)
    assert page.read_bytes() == edited  # the human's edit survives whole
    rel = page.relative_to(root).as_posix()
    assert rel in result["conflicts"] and f"kept in {rel}" in result["message"]
    assert PITCH not in (root / "MEMORY.md").read_text()
    # the forced rollback is a run of its own, and undoing it restores the bytes before it
    assert {r["run_id"]: r["mode"] for r in history(host.store)}[result["undo_run"]] == "rollback"
    rollback_run(host, result["undo_run"])
    assert PITCH in (root / "MEMORY.md").read_text() and page.read_bytes() == edited
    assert {r["run_id"]: r["status"] for r in history(host.store)}[run.run_id] == "ok"


def test_a_plain_rollback_does_not_claim_kept_edits(dream_host) -> None:  # noqa: ANN001
    host = dream_host(FILES)
    recall(host, D04, 1, 6, PITCH_QUERIES)
    run = dream(host, at("2026-03-10"))
    result = rollback_run(host, run.run_id, force=True)  # forced, but nobody edited anything
    assert result["conflicts"] == [] and result["message"].startswith("rolled back;")
    assert "kept" not in result["message"]


def test_a_forced_rollback_removes_the_section_the_run_created(dream_host) -> None:  # noqa: ANN001
    """Issue 40 item 6: `rollback --force` left an empty fenced section ("## Other") behind."""
    host = dream_host(FILES)
    root = host.workspace.root
    recall(host, D04, 1, 6, PITCH_QUERIES)
    run = dream(host, at("2026-03-10"))
    memory = root / "MEMORY.md"
    assert "## Projects and work" in memory.read_text() and run.promoted
    memory.write_text(memory.read_text().replace("# MEMORY", "# MEMORY (mine)", 1))
    rollback_run(host, run.run_id, force=True)
    text = memory.read_text()
    assert "## Projects and work" not in text and "lifelong:topic-" not in text and "# MEMORY (mine)" in text
    assert text == FILES["MEMORY.md"].replace("# MEMORY", "# MEMORY (mine)", 1)


def test_a_users_own_lowercase_dreams_file_is_never_written_into(dream_host) -> None:  # noqa: ANN001
    """Issue 40 item 6: a workspace with the user's own dreams.md (their dream journal) got the
    dream diary appended into it. The diary goes to DREAMS.md beside it."""
    mine = "# My dreams\n\n- Flying over Lisbon again.\n"
    host = dream_host({**FILES, "dreams.md": mine})
    root = host.workspace.root
    recall(host, D04, 1, 6, PITCH_QUERIES)
    run = dream(host, at("2026-03-10"))
    assert run.diary_source and (root / "dreams.md").read_text() == mine
    names = {p.name for p in root.iterdir()}
    diary = root / ("DREAMS.md" if "DREAMS.md" in names else "DREAMS.lifelong.md")
    assert f"dream-{run.run_id}" in diary.read_text()
    rollback_run(host, run.run_id)
    assert (root / "dreams.md").read_text() == mine
