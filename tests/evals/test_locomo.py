from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from lifelong_evals.locomo import (
    load_locomo,
    normalise_evidence,
    parse_session_time,
    session_files,
    write_workspace,
)


def load(folder: Path):  # noqa: ANN201
    return load_locomo(folder / "locomo10.json", folder / "audit-errors.json")


def test_session_time_parses_locomo_format() -> None:
    assert parse_session_time("1:56 pm on 8 May, 2023") == dt.datetime(2023, 5, 8, 13, 56)
    assert parse_session_time("12:19 am on 4 January, 2024") == dt.datetime(2024, 1, 4, 0, 19)


def test_evidence_is_repaired_dropped_or_kept() -> None:
    known = frozenset({"D1:1", "D1:3", "D11:26", "D30:5"})
    assert normalise_evidence(["D1:1"], known) == (["D1:1"], [], [])
    ids, repaired, dropped = normalise_evidence(["D1:1; D1:3", "D:11:26", "D30:05", "D9:9", "D"], known)
    assert ids == ["D1:1", "D1:3", "D11:26", "D30:5"]
    assert repaired == ["D1:1; D1:3 -> D1:1, D1:3", "D:11:26 -> D11:26", "D30:05 -> D30:5"]
    assert dropped == ["D9:9", "D"]


def test_loader_excludes_category_5_applies_audit_and_reports(tiny_locomo: Path) -> None:
    convs, report = load(tiny_locomo)
    assert [c.sample_id for c in convs] == ["conv-a", "conv-b"]
    a = convs[0]
    assert [s.number for s in a.sessions] == [1, 2, 3]  # the empty session 4 is not a session
    assert a.last_session_time == dt.datetime(2023, 6, 2, 19, 10)
    qids = [q.qid for q in a.questions]
    assert "locomo_0_qa5" not in qids  # category 5
    assert "locomo_0_qa4" not in qids  # no evidence
    assert report.excluded_category_5 == 1
    assert report.skipped == [{"question_id": "locomo_0_qa4", "category": 3, "reason": "no evidence"}]
    by = {q.qid: q for c in convs for q in c.questions}
    assert by["locomo_0_qa2"].evidence == ("D1:3", "D3:1")
    assert by["locomo_0_qa2"].evidence_sessions == {1, 3}
    assert by["locomo_0_qa6"].evidence == ("D3:2",)
    assert {"question_id": "locomo_0_qa6", "ids": ["D9:9"]} in report.dropped_ids
    assert by["locomo_1_qa1"].evidence == ("D1:3",)  # D:1:3 repaired
    corrected = by["locomo_0_qa7"]
    assert (
        corrected.corrected and corrected.evidence == ("D1:3",) and corrected.answer == "the beach at Ostend"
    )
    assert report.corrections_applied == 1
    assert len(report.source_sha256) == 64 and report.audit_sha256


def test_loader_without_audit_file_keeps_raw_evidence(tiny_locomo: Path) -> None:
    convs, report = load_locomo(tiny_locomo / "locomo10.json", None)
    by = {q.qid: q for c in convs for q in c.questions}
    assert by["locomo_0_qa7"].evidence == ("D1:1",) and not by["locomo_0_qa7"].corrected
    assert report.corrections_applied == 0 and report.audit_sha256 is None


def test_session_files_one_line_per_turn_with_dia_ids(tiny_locomo: Path) -> None:
    convs, _ = load(tiny_locomo)
    files = session_files(convs[0])
    # two sessions on 8 May: the second gets a slugged daily file
    assert list(files) == ["memory/2023-05-08.md", "memory/2023-05-08-s2.md", "memory/2023-06-02.md"]
    first = files["memory/2023-05-08.md"]
    lines = first.lines()
    assert lines[0] == "# 2023-05-08: Ada and Bo, session 1 (1:56 pm)"
    assert lines[2] == "- [D1:1] Ada: Hey Bo! I adopted a greyhound called Pixel last week."
    # a newline inside a turn becomes a space; the image caption is kept with the turn
    assert (
        lines[3]
        == "- [D1:2] Bo: Congrats! Mine is a tabby cat. She sleeps all day. (image: a photo of a tabby cat on a sofa)"
    )
    assert first.dia_by_line == {3: "D1:1", 4: "D1:2", 5: "D1:3"}
    assert first.dia_ids(1, 4) == ["D1:1", "D1:2"]
    assert first.span_text(3, 3) == lines[2]
    assert files["memory/2023-05-08-s2.md"].session == 2


def test_session_files_in_paragraphs_write_a_turn_as_a_message(tiny_locomo: Path) -> None:
    convs, _ = load(tiny_locomo)
    first = session_files(convs[0], "paragraphs")["memory/2023-05-08.md"]
    lines = first.lines()
    assert lines[2:8] == [
        "**Ada:** Hey Bo!",
        "",
        "I adopted a greyhound called Pixel last week.",
        "",
        "**Bo:** Congrats!",
        "",
    ]
    assert lines[8:13] == [
        "Mine is a tabby cat.",
        "",
        "She sleeps all day.",
        "",
        "(image: a photo of a tabby cat on a sofa)",
    ]
    assert first.dia_ids(3, 5) == ["D1:1", "D1:1"] and first.dia_ids(7, 13) == ["D1:2"] * 4


def test_write_workspace_is_idempotent_and_removes_stale_files(tiny_locomo: Path, tmp_path: Path) -> None:
    convs, _ = load(tiny_locomo)
    root = tmp_path / "ws"
    write_workspace(convs[0], root)
    daily = root / "memory" / "2023-06-02.md"
    os.utime(daily, (1_000_000, 1_000_000))
    stale = root / "memory" / "2020-01-01.md"
    stale.write_text("old\n")
    files = write_workspace(convs[0], root)
    assert daily.stat().st_mtime == 1_000_000  # unchanged content is not rewritten
    assert not stale.exists()
    assert sorted(p.name for p in (root / "memory").iterdir()) == [
        "2023-05-08-s2.md",
        "2023-05-08.md",
        "2023-06-02.md",
    ]
    assert (root / "lifelong.yaml").exists()
    assert daily.read_text("utf-8") == files["memory/2023-06-02.md"].text


def test_returned_text_metric_counts_whole_evidence_lines_within_the_budget(tiny_locomo: Path) -> None:
    from lifelong_evals.suite_retrieval import returned_turns

    conv = load(tiny_locomo)[0][0]
    files = session_files(conv)
    f = next(iter(files.values()))
    lines = f.lines()
    ids = [f.dia_by_line[n] for n in sorted(f.dia_by_line)]
    first, second = (lines[n - 1] for n in sorted(f.dia_by_line)[:2])

    def tokens(text: str) -> int:
        return len(text.split())

    snippets = [first, second]
    assert returned_turns(snippets, files, ids[:2], 10_000, tokens) == set(ids[:2])
    # a budget that holds only the first line (each line costs its words + 1 for the newline)
    assert returned_turns(snippets, files, ids[:2], tokens(first) + 1, tokens) == {ids[0]}
    # a turn cut off by the snippet's end does not count
    assert returned_turns([first[: len(first) // 2] + "…"], files, ids[:1], 10_000, tokens) == set()


def test_single_turn_bm25_baseline_ranks_the_turn_that_holds_the_words(tiny_locomo: Path) -> None:
    from lifelong_evals.suite_retrieval import TurnBM25

    conv = load(tiny_locomo)[0][0]
    files = session_files(conv)
    f = next(iter(files.values()))
    n = sorted(f.dia_by_line)[0]
    line = f.lines()[n - 1]
    words = [w for w in line.split("] ", 1)[1].split() if len(w) > 5][:3]
    hits, snippets = TurnBM25(files).search(" ".join(words), 5)
    assert hits and (hits[0].path, hits[0].start_line) == (f.relpath, n) and snippets[0] == line
