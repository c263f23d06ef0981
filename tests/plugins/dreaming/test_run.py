"""Whole runs on real workspaces: gates, backfill, attribution, live re-read, idempotence, sticky
items, untouched human text, rollback, dry run, no feedback of the suite's own output, the write
gate, the lock, the diary and history."""

from __future__ import annotations

import datetime as dt
import json
import threading
import types

import pytest
from lifelong_plugins.dreaming.explain import explain
from lifelong_plugins.dreaming.rollback import rollback_run
from lifelong_plugins.dreaming.state import history

from lifelong.contracts import RelatedFact, WriteCandidate
from lifelong.errors import LockedError
from lifelong.hookspecs import WriteDecision, hookimpl
from lifelong.journal import RollbackConflict
from lifelong.workspace import find_regions

from .conftest import at, dream, record_event, search, snapshot

MEMORY = (
    "# MEMORY\n\nDurable facts. Edit freely.\n\n## About me\n- I live in Berlin.\n\n"
    "## Sticky\n- Never schedule meetings before 10:00 on Mondays. <!-- sticky -->\n"
)
D04 = "memory/2026-03-04.md"
D16 = "memory/2026-03-16.md"
FILES = {
    "MEMORY.md": MEMORY,
    D04: "# 2026-03-04\n\n## Investor pitch\n"
    "- Decision: the pitch opens with the live offline sync demo, market size moves to slide 9.\n"
    "- Ask is EUR 1.2M seed at a EUR 8M pre-money valuation.\n",
    D16: "# 2026-03-16\n\n## Team\n- Priya proposed moving the Android release to April 28.\n"
    "- Tried the new espresso machine, too bitter.\n",
}
PITCH = "Decision: the pitch opens with the live offline sync demo, market size moves to slide 9."
ANDROID = "Priya proposed moving the Android release to April 28."
ESPRESSO = "Tried the new espresso machine, too bitter."
# the pitch decision looked up 6 times by 5 different queries over 5 days
PITCH_QUERIES = {
    "2026-03-05": ["how does the pitch open"],
    "2026-03-06": ["pitch opening slide"],
    "2026-03-07": ["what opens the pitch", "pitch opener"],
    "2026-03-09": ["how does the pitch open", "pitch structure"],
}


def recall(host, path, start, end, queries_by_day: dict[str, list[str]], score: float = 0.7) -> None:
    for day, queries in queries_by_day.items():
        for n, q in enumerate(queries):
            record_event(host, path, start, end, q, at(day, 10 + n), score=score)


def promoted_texts(run) -> list[str]:
    return [p["text"] for p in run.promoted]


def test_gates_promote_only_what_recurs_across_queries(dream_host) -> None:
    host = dream_host(FILES)
    # the pitch decision: 6 recalls by 5 queries; the ask: 4 recalls by 1 query; the budget: 3 by 3 on one day
    recall(host, D04, 1, 6, PITCH_QUERIES)
    recall(
        host,
        D04,
        1,
        6,
        {d: ["seed ask valuation"] for d in ("2026-03-05", "2026-03-06", "2026-03-08", "2026-03-09")},
    )
    run = dream(host, at("2026-03-10"))
    assert promoted_texts(run) == [PITCH]
    deep = run.reports["deep"]
    miss = next(m for m in deep["near_misses"] if m["text"].startswith("Investor pitch: Ask is"))
    assert "unique queries 1 < 3" in miss["failed_gates"]
    memory = (host.workspace.root / "MEMORY.md").read_text()
    key = run.promoted[0]["key"]
    assert f"- {PITCH} <!-- key:{key} src:{D04}#L4-L4 on:2026-03-10 -->" in memory
    assert "## Projects and work" in memory and "## Promoted" not in memory


def test_backfill_lowers_the_bar_once_then_defaults_apply(dream_host) -> None:
    days = ["2026-02-02", "2026-02-09", "2026-02-16", "2026-02-23"]
    files = {"MEMORY.md": MEMORY}
    for d in days:
        files[f"memory/{d}.md"] = (
            f"# {d}\n\n## Weekly\n- Team standup moved to Tuesdays at 09:30 with Jonas.\n- Random {d} chatter.\n"
        )
    host = dream_host(files)
    normal = dream(host, at("2026-02-24"), dry_run=True)
    assert normal.promoted == []
    back = dream(host, at("2026-02-24"), backfill=True)
    assert promoted_texts(back) == ["Team standup moved to Tuesdays at 09:30 with Jonas."]
    assert back.reports["deep"]["thresholds"] == {
        "min_score": 0.5,
        "min_recalls": 0,
        "min_unique_queries": 0,
        "min_recall_days": 0,
    }
    (host.workspace.root / "memory/2026-02-25.md").write_text(
        "# x\n\n- Lunch with Ana at the new place.\n- Lunch with Ana again.\n"
    )
    after = dream(host, at("2026-02-26"))
    assert after.reports["deep"]["thresholds"] == {
        "min_score": 0.8,
        "min_recalls": 3,
        "min_unique_queries": 3,
        "min_recall_days": 2,
    }
    assert after.promoted == []


def test_a_one_off_sharing_a_chunk_with_a_durable_fact_is_never_promoted(dream_host) -> None:
    host = dream_host(FILES, {"embedding": {"provider": "local"}})  # real hybrid scores
    queries = {
        "2026-03-16": ["when is the Android release"],
        "2026-03-17": ["Android release date", "espresso machine"],
        "2026-03-18": ["who moves the Android release", "Android release April"],
        "2026-03-19": ["Android release plan", "when is the Android release"],
    }
    for day, qs in queries.items():
        for n, q in enumerate(qs):
            result = search(host, q, at(day, 10 + n))
            assert any(r["path"] == D16 for r in result["results"])  # the whole daily is one chunk
    run = dream(host, at("2026-03-20"))
    assert promoted_texts(run) == [ANDROID]
    data = explain(host, run.promoted[0]["key"])
    assert data["signals"]["recalls"] == 6 and data["signals"]["unique_queries"] == 5
    espresso = next(c for c in run.pool.candidates.values() if c.text == ESPRESSO)
    assert explain(host, espresso.key)["signals"]["recalls"] == 1
    assert ESPRESSO not in (host.workspace.root / "MEMORY.md").read_text()


class _EditDuringTheRun:
    """Edits the daily after the light phase staged it, before deep writes (a human typing at 03:00)."""

    PLUGIN_MANIFEST = {
        "id": "editor",
        "description": "edits a daily during the rem phase",
        "hooks": ["dreaming_phase"],
        "config_schema": {"type": "object", "properties": {}},
    }

    def __init__(self, path, old: str, new: str) -> None:
        self.path, self.old, self.new = path, old, new

    @hookimpl
    def dreaming_phase(self, ctx, phase, run):
        if phase == "rem":
            self.path.write_text(self.path.read_text().replace(self.old, self.new))


def test_live_reread_drops_a_candidate_the_user_edited(dream_host, make_workspace) -> None:
    host = dream_host(FILES)
    root = host.workspace.root
    # across nights: staged on a weaker night, edited, then eligible (lower bar) without new recalls
    recall(
        host,
        D04,
        1,
        6,
        {
            "2026-03-05": ["how does the pitch open"],
            "2026-03-06": ["pitch opening slide"],
            "2026-03-07": ["what opens the pitch"],
        },
    )
    staged = dream(host, at("2026-03-08"))
    assert staged.promoted == [] and staged.status == "ok"
    (root / D04).write_text((root / D04).read_text().replace("live offline sync demo", "customer story"))
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    (root / "lifelong.yaml").write_text(
        "timezone: Europe/Berlin\nembedding: {provider: none}\nplugins: {dreaming: {min_score: 0.3}}\n"
    )
    lenient = Host(Workspace(root), builtins=("embeddings", "recall", "dreaming"), entry_points=False)
    try:
        run = dream(lenient, at("2026-03-09"))
    finally:
        lenient.close()
    assert run.promoted == []
    dropped = run.reports["deep"]["dropped"]
    assert [d["text"] for d in dropped] == [PITCH] and "edited or deleted" in dropped[0]["reason"]
    assert (root / "MEMORY.md").read_text() == MEMORY

    # within one night: the user edits the line between the light phase and the write
    editor = _EditDuringTheRun(None, "live offline sync demo", "customer story")
    host2 = dream_host(FILES, extra_plugins=[_plugin(editor)])
    editor.path = host2.workspace.root / D04
    recall(host2, D04, 1, 6, PITCH_QUERIES)
    run2 = dream(host2, at("2026-03-10"))
    assert run2.promoted == [] and [d["text"] for d in run2.reports["deep"]["dropped"]] == [PITCH]
    assert (host2.workspace.root / "MEMORY.md").read_text() == MEMORY


def test_idempotent_across_runs_and_human_text_byte_identical(dream_host) -> None:
    host = dream_host(FILES)
    recall(host, D04, 1, 6, PITCH_QUERIES)
    first = dream(host, at("2026-03-10"))
    key = first.promoted[0]["key"]
    recall(
        host,
        D04,
        1,
        6,
        {"2026-03-10": ["pitch opening again", "the pitch opener"], "2026-03-11": ["pitch start"]},
    )
    second = dream(host, at("2026-03-12"))
    assert second.promoted == []
    text = (host.workspace.root / "MEMORY.md").read_text()
    assert text.count(f"key:{key}") == 1
    # the same key promoted again by a fresh candidate pool is still refused (the file is the truth)
    host.store.conn.execute("UPDATE dream_candidates SET status = 'staged'")
    host.store.conn.commit()
    third = dream(host, at("2026-03-12", 4))
    assert (
        third.promoted == []
        and third.reports["deep"]["already_present"][0]["reason"] == "key already in MEMORY.md"
    )
    regions = find_regions(text)
    assert len(regions) == 1 and text[: regions[0].start] == MEMORY + "\n" and text[regions[0].end :] == ""


def test_sticky_items_and_human_text_survive_compaction(dream_host) -> None:
    sticky_region = (
        "<!-- lifelong:promoted-20260201-030000-0000:start -->\n## Promoted 2026-02-01\n"
        "- Old but precious <!-- key:0123456789ab src:memory/2026-02-01.md#L3-L3 --> <!-- sticky -->\n"
        "<!-- lifelong:promoted-20260201-030000-0000:end -->\n"
    )
    old_region = (
        "<!-- lifelong:promoted-20260202-030000-1111:start -->\n## Promoted 2026-02-02\n"
        + "".join(
            f"- Old fact {i} with a long tail of words <!-- key:{i:012x} src:memory/2026-02-02.md#L{i}-L{i} -->\n"
            for i in range(1, 30)
        )
        + "<!-- lifelong:promoted-20260202-030000-1111:end -->\n"
    )
    memory = MEMORY + "\n" + sticky_region + "\nHuman note between regions.\n\n" + old_region
    host = dream_host(
        {**FILES, "MEMORY.md": memory},
        {"plugins": {"dreaming": {"memory_max_bytes": 1400, "max_evict_fraction": 1.0}}},
    )
    recall(host, D04, 1, 6, PITCH_QUERIES)
    run = dream(host, at("2026-03-10"))
    assert promoted_texts(run) == [PITCH]
    text = (host.workspace.root / "MEMORY.md").read_text()
    comp = run.reports["deep"]["compaction"]
    assert comp["merged_regions"] == ["promoted-20260202-030000-1111"] and comp["evicted"]
    assert comp["skipped_sticky"] == ["promoted-20260201-030000-0000"]
    assert text.startswith(MEMORY + "\n" + sticky_region + "\nHuman note between regions.\n\n")
    assert "Never schedule meetings before 10:00 on Mondays. <!-- sticky -->" in text
    assert len(text.encode()) <= 1400
    report = (host.workspace.root / run.report_dir / "report.md").read_text()
    assert "compacted MEMORY.md" in report and "evicted" in report
    diary = (host.workspace.root / "DREAMS.md").read_text()
    assert "set aside" in diary and all(e["text"] in diary for e in comp["evicted"])


def test_rollback_restores_exactly_and_refuses_after_a_human_edit(dream_host) -> None:
    host = dream_host(FILES)
    root = host.workspace.root
    recall(host, D04, 1, 6, PITCH_QUERIES)
    before = snapshot(root)
    run = dream(host, at("2026-03-10"))
    assert run.promoted and (root / "DREAMS.md").exists() and (root / run.report_dir / "deep.json").exists()
    rollback_run(host, run.run_id)
    after = snapshot(root)
    assert {k: v for k, v in after.items() if not k.startswith(".lifelong/")} == {
        k: v for k, v in before.items() if not k.startswith(".lifelong/")
    }
    assert not (root / ".lifelong/reports" / run.run_id).exists()
    assert history(host.store)[0]["status"] == "rolled_back"
    # the candidate is staged again (the run's status changes were reverted)
    key = run.promoted[0]["key"]
    assert explain(host, key)["status"] == "staged"

    again = dream(host, at("2026-03-10", 4))
    assert [p["key"] for p in again.promoted] == [key]
    memory = root / "MEMORY.md"
    memory.write_text(memory.read_text().replace("- I live in Berlin.", "- I live in Berlin (Kreuzberg)."))
    with pytest.raises(RollbackConflict, match="MEMORY.md was edited after run"):
        rollback_run(host, again.run_id)
    assert f"key:{key}" in memory.read_text()  # refused: nothing changed
    rollback_run(host, again.run_id, force=True)
    text = memory.read_text()
    assert "Kreuzberg" in text and f"key:{key}" not in text and "lifelong:promoted-" not in text
    dreams = root / "DREAMS.md"  # created by that run: the forced rollback removes its entry
    assert not dreams.exists() or "lifelong:dream-" not in dreams.read_text()


def test_dry_run_writes_nothing(dream_host) -> None:
    host = dream_host(FILES)
    recall(host, D04, 1, 6, PITCH_QUERIES)
    host.store  # noqa: B018 - open the index before the snapshot
    before = snapshot(host.workspace.root)
    tables = {
        t: host.store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("dream_candidates", "dream_signals", "dream_runs", "dream_occurrences", "dream_meta")
    }
    run = dream(host, at("2026-03-10"), dry_run=True)
    assert promoted_texts(run) == [PITCH] and run.status == "dry-run"
    assert set(run.promoted[0]["score"]["components"]) == {
        "relevance",
        "frequency",
        "diversity",
        "recency",
        "consolidation",
        "richness",
    }
    assert snapshot(host.workspace.root) == before
    assert tables == {t: host.store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_the_suites_own_output_is_never_promoted(dream_host) -> None:
    """openclaw/openclaw#67580: dreaming wrote 'Candidate: ... confidence ... evidence' junk into
    MEMORY.md in a loop. Here the suite's reports, markers, diary and promoted items are recalled
    night after night and must never be promoted."""
    junk_daily = (
        "# 2026-03-05\n\n## Notes\n"
        "- Candidate: pitch opens with the demo (confidence 0.91, evidence: memory/2026-03-04.md#L4)\n"
        f"- {PITCH} <!-- key:1e9e2e84a099 src:memory/2026-03-04.md#L4-L4 -->\n"
        "- Source: memory/2026-03-04.md#L4-L4\n"
        "- S=0.912 relevance 0.70 frequency 0.61 recalls 5 gates pass\n"
        "<!-- lifelong:promoted-20260301-030000-abcd:start -->\n## Promoted 2026-03-01\n"
        "- pitch opens with the live demo, copied into a daily\n"
        "<!-- lifelong:promoted-20260301-030000-abcd:end -->\n"
    )
    host = dream_host({**FILES, "memory/2026-03-05.md": junk_daily}, {"embedding": {"provider": "local"}})
    root = host.workspace.root
    queries = [
        "pitch opens demo",
        "pitch confidence evidence",
        "how does the pitch open",
        "what opens the pitch",
        "pitch opening decision",
        "promoted pitch",
    ]
    for n, day in enumerate(
        ["2026-03-05", "2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10"]
    ):
        for q in queries[n:] + queries[:n]:
            search(host, q, at(day, 12))
        dream(host, at(day, 23))
    for day in ["2026-03-11", "2026-03-12", "2026-03-13"]:
        for q in queries:
            search(host, q, at(day, 12), corpus="all")
        dream(host, at(day, 23))
    memory = (root / "MEMORY.md").read_text()
    items = [ln for ln in memory.splitlines() if "<!-- key:" in ln]
    assert items, "the real decision should have been promoted"
    for line in items:
        text = line.split(" <!-- key:")[0]
        assert "Candidate" not in text and "confidence" not in text and "Source:" not in text
        assert "S=0." not in text and "copied into a daily" not in text and "<!--" not in text
        assert line.count("<!-- key:") == 1
    # what was promoted came from the daily note, never from MEMORY.md, DREAMS.md or a report
    for row in host.store.query("SELECT path FROM dream_occurrences"):
        assert row["path"].startswith("memory/2026-")
    assert (
        host.store.query(
            "SELECT count(*) AS n FROM dream_candidates WHERE text LIKE '%Candidate:%' OR text LIKE '%<!--%'"
            " OR text LIKE '%Dream diary%' OR text LIKE '%Promoted%'"
        )[0]["n"]
        == 0
    )
    assert (root / "DREAMS.md").exists() and any((root / ".lifelong/reports").iterdir())


class _WriteGate:
    """A stand-in contradiction plugin (the real before_message_write contract)."""

    PLUGIN_MANIFEST = {
        "id": "testgate",
        "description": "blocks 'valuation', warns on 'Android'",
        "hooks": ["before_message_write"],
        "config_schema": {"type": "object", "properties": {}},
    }

    def __init__(self) -> None:
        self.seen: list[tuple[dict, list]] = []

    @hookimpl
    def before_message_write(self, ctx, candidate, existing):
        self.seen.append((candidate, existing))
        if "valuation" in candidate.text:
            return WriteDecision("block", "contradicts EUR 1.5M in MEMORY.md", source="testgate")
        if "Android" in candidate.text:
            return WriteDecision("supersede", "replaces the March 2 plan", ("abc",), source="testgate")
        return WriteDecision("allow", source="testgate")


def _plugin(obj) -> types.ModuleType:
    mod = types.ModuleType(obj.PLUGIN_MANIFEST["id"])
    mod.PLUGIN_MANIFEST = obj.PLUGIN_MANIFEST
    for name in obj.PLUGIN_MANIFEST["hooks"]:
        setattr(mod, name, getattr(obj, name))
    return mod


def test_every_candidate_passes_before_message_write(dream_host) -> None:
    gate = _WriteGate()
    memory = MEMORY + "- Android release was planned for April 10 with Priya.\n"
    host = dream_host({**FILES, "MEMORY.md": memory}, extra_plugins=[_plugin(gate)])
    qs = {
        "2026-03-16": ["Android release"],
        "2026-03-17": ["Android release date", "when is the Android release"],
        "2026-03-18": ["Android plan Priya", "Android release"],
    }
    recall(host, D16, 1, 5, qs)
    recall(
        host,
        D04,
        1,
        6,
        {
            "2026-03-16": ["seed valuation"],
            "2026-03-17": ["pre-money valuation", "seed ask"],
            "2026-03-18": ["how much is the seed ask", "valuation"],
        },
    )
    run = dream(host, at("2026-03-19"))
    assert promoted_texts(run) == [ANDROID]
    assert run.promoted[0]["decision"] == {
        "action": "supersede",
        "reason": "replaces the March 2 plan",
        "supersedes": ["abc"],
        "source": "testgate",
    }
    blocked = run.reports["deep"]["blocked"]
    assert [b["text"] for b in blocked] == [
        "Investor pitch: Ask is EUR 1.2M seed at a EUR 8M pre-money valuation."
    ]
    assert "valuation" not in (host.workspace.root / "MEMORY.md").read_text()
    candidate, existing = next((c, e) for c, e in gate.seen if "Android" in c.text)
    assert isinstance(candidate, WriteCandidate) and all(isinstance(e, RelatedFact) for e in existing)
    assert candidate.citation == f"{D16}#L4-L4" and candidate.source == "dreaming"
    assert candidate.written_on == dt.date(2026, 3, 16) and candidate.target == "MEMORY.md"
    assert existing and "April 10" in existing[0].text and existing[0].path == "MEMORY.md"
    assert run.reports["deep"]["warnings"][0]["key"] == run.promoted[0]["key"]


class _SlowPhase:
    PLUGIN_MANIFEST = {
        "id": "slowphase",
        "description": "holds the light phase until released; records after_consolidation",
        "hooks": ["dreaming_phase", "after_consolidation"],
        "config_schema": {"type": "object", "properties": {}},
    }

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.after: list[str] = []
        self.hold = True

    @hookimpl
    def dreaming_phase(self, ctx, phase, run):
        if phase == "light" and self.hold:
            self.entered.set()
            self.release.wait(10)
        return {"plugin": "slowphase", "phase": phase}

    @hookimpl
    def after_consolidation(self, ctx, run):
        self.after.append(run.run_id)


def test_a_lock_prevents_two_concurrent_runs_and_plugins_join_the_phases(dream_host) -> None:
    slow = _SlowPhase()
    host = dream_host(FILES, extra_plugins=[_plugin(slow)])
    other = dream_host(FILES)  # a second process-like host on another workspace is not blocked
    host.store  # noqa: B018
    errors: list[BaseException] = []
    runs: list = []

    def first() -> None:
        try:
            runs.append(dream(host, at("2026-03-10")))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    recall(host, D04, 1, 6, PITCH_QUERIES)
    thread = threading.Thread(target=first)
    thread.start()
    assert slow.entered.wait(10)
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    second_host = Host(
        Workspace(host.workspace.root), builtins=("embeddings", "recall", "dreaming"), entry_points=False
    )
    try:
        with pytest.raises(LockedError, match="'dream' lock"):
            dream(second_host, at("2026-03-10"))
    finally:
        second_host.close()
    assert dream(other, at("2026-03-10")).status in ("ok", "nothing")
    slow.release.set()
    thread.join(10)
    assert not errors and runs[0].status == "ok"
    assert runs[0].extra_reports["light"] == [{"plugin": "slowphase", "phase": "light"}]
    assert slow.after == [runs[0].run_id]


def test_a_night_without_new_material_writes_only_its_history_row(dream_host) -> None:
    host = dream_host(FILES)
    root = host.workspace.root
    first = dream(host, at("2026-03-17"))
    assert first.status == "ok" and first.reports["light"]["new_candidates"] == 2
    before = snapshot(root)
    quiet = dream(host, at("2026-03-17", 4))
    assert quiet.status == "nothing" and quiet.report_dir is None
    assert snapshot(root) == before
    rows = history(host.store)
    assert [r["status"] for r in rows] == ["nothing", "ok"]


def test_diary_offline_and_with_a_model(dream_host) -> None:
    host = dream_host(FILES)
    recall(host, D04, 1, 6, PITCH_QUERIES)
    run = dream(host, at("2026-03-10"))
    diary = (host.workspace.root / "DREAMS.md").read_text()
    assert run.diary_source == "offline"
    assert f"<!-- lifelong:dream-{run.run_id}:start -->" in diary
    assert "I decided to keep 1 thing for the long run" in diary and PITCH in diary

    model_host = dream_host(FILES, {"llm": {"model": "openai/gpt-4o-mini"}})
    recall(model_host, D04, 1, 6, PITCH_QUERIES)
    reply = "## Tonight\nI kept the pitch decision close. <!-- lifelong:dream-x:end --> It kept coming back."
    run2 = dream(model_host, at("2026-03-10"), llm_kwargs={"mock_response": reply})
    text = (model_host.workspace.root / "DREAMS.md").read_text()
    assert run2.diary_source == "model"
    assert "I kept the pitch decision close." in text and "lifelong:dream-x" not in text
    assert len(find_regions(text)) == 1
    assert run2.reports["rem"]["summary_source"] in ("model", "offline")


def test_history_json_and_explain_are_complete(dream_host) -> None:
    host = dream_host(FILES)
    recall(host, D04, 1, 6, PITCH_QUERIES)
    run = dream(host, at("2026-03-10"))
    rows = history(host.store)
    assert rows[0]["run_id"] == run.run_id and rows[0]["promoted"] == 1
    assert rows[0]["summary"]["memory_regions"] == ["topic-projects"]
    data = explain(host, run.promoted[0]["key"][:6])
    assert data["status"] == "promoted" and len(data["recalls"]) == 6
    assert {r["query"] for r in data["recalls"]} == {q for qs in PITCH_QUERIES.values() for q in qs}
    assert data["occurrences"][0]["path"] == D04
    light = json.loads((host.workspace.root / run.report_dir / "light.json").read_text())
    assert light["events_attributed"] == 6
