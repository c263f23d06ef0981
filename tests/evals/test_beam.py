"""``python -m evals.beam`` on a tiny BEAM-shaped chat written here: loading, the workspace layout,
placing returned text back on messages, the baselines, and a whole FTS-only run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lifelong_evals import beam

CODE = "Here is the schema:\n\n```sql\nCREATE TABLE pets (name TEXT);\n```\n\nRun it once."
MESSAGES = [
    ("user", "I'm planning my week, can you help me set up a simple routine?", "March-15-2024"),
    ("assistant", "Of course. Start with fixed wake-up times and short evening walks.", None),
    ("user", "My cat is called Biscuit and she needs her vet check on Fridays.", None),
    ("assistant", CODE, None),
    ("user", "The budget for the pet insurance is 30 dollars a month.", "April-05-2024"),
    ("assistant", "Noted, 30 dollars a month fits your plan.", None),
    ("user", "Update: the pet insurance budget went up to 45 dollars a month.", None),
    ("assistant", "Thanks, I will use 45 dollars a month from now on.", None),
]


def beam_chat() -> list[dict[str, Any]]:
    """Two batches of messages in BEAM's chat.json shape (ids 0..7)."""
    batches: list[dict[str, Any]] = []
    for i, (role, content, anchor) in enumerate(MESSAGES):
        m: dict[str, Any] = {"role": role, "id": i, "content": content}
        if anchor:
            m.update(time_anchor=anchor, index=f"{len(batches) + 1},1", question_type="main_question")
            batches.append({"batch_number": len(batches) + 1, "turns": [], "time_anchor": None})
        if role == "user":
            batches[-1]["turns"].append([m])
        else:
            batches[-1]["turns"][-1].append(m)
    return batches


QUESTIONS = {
    "information_extraction": [
        {"question": "What is my cat called?", "answer": "Biscuit", "source_chat_ids": [2]},
    ],
    "knowledge_update": [
        {
            "question": "What is the pet insurance budget?",
            "answer": "45 dollars a month",
            "source_chat_ids": {"original_info": [4], "updated_info": [6]},
        }
    ],
    "abstention": [{"question": "What is my dog called?", "ideal_response": "Not mentioned."}],
}


@pytest.fixture
def beam_data(tmp_path: Path) -> Path:
    chat = tmp_path / "beam" / "chats" / "100K" / "1"
    (chat / "probing_questions").mkdir(parents=True)
    (chat / "chat.json").write_text(json.dumps(beam_chat()), encoding="utf-8")
    (chat / "probing_questions" / "probing_questions.json").write_text(
        json.dumps(QUESTIONS), encoding="utf-8"
    )
    return tmp_path / "beam"


def test_loading_reads_batches_dates_and_evidence(beam_data: Path) -> None:
    chats, report = beam.load_chats(beam.chats_root(beam_data))
    (chat,) = chats
    assert [b.day.isoformat() for b in chat.batches] == ["2024-03-15", "2024-04-05"]
    assert [m.id for b in chat.batches for m in b.messages] == list(range(8))
    probes = {p.ability: p for p in chat.probes}
    assert probes["information_extraction"].evidence == (2,)
    assert probes["knowledge_update"].evidence == (4, 6)
    assert probes["knowledge_update"].evidence_parts == {"original_info": (4,), "updated_info": (6,)}
    assert "abstention" not in probes and report.skipped_by_ability() == {"abstention": 1}
    assert chat.ask_time.date().isoformat() == "2024-04-06"


def test_every_line_of_a_message_maps_to_it(beam_data: Path) -> None:
    (chat,), _ = beam.load_chats(beam.chats_root(beam_data))
    files = beam.chat_files(chat)
    assert list(files) == ["memory/2024-03-15.md", "memory/2024-04-05.md"]
    first = files["memory/2024-03-15.md"]
    lines = first.lines()
    code_lines = [n for n, mid in first.message_by_line.items() if mid == 3]
    assert [lines[n - 1] for n in code_lines] == [
        "**Assistant:** Here is the schema:",
        "```sql",
        "CREATE TABLE pets (name TEXT);",
        "```",
        "Run it once.",
    ]
    assert lines[min(n for n, mid in first.message_by_line.items() if mid == 2) - 1].startswith(
        "**User:** My cat is called Biscuit"
    )


def test_only_the_text_returned_counts_for_a_message(beam_data: Path) -> None:
    (chat,), _ = beam.load_chats(beam.chats_root(beam_data))
    files = beam.chat_files(chat)
    f = files["memory/2024-03-15.md"]
    line_of = {mid: min(n for n, m in f.message_by_line.items() if m == mid) for mid in (1, 2, 3)}
    sizes = beam.message_sizes(files)
    # one result whose lines span messages 1 to 3, but whose snippet holds only message 2's text
    # (cut with "…" and with a redaction inside) and the last line of message 3
    results = [
        {
            "path": f.relpath,
            "start_line": line_of[1],
            "end_line": max(n for n, m in f.message_by_line.items() if m == 3),
            "snippet": "…My cat is called Biscuit and she [redacted password] vet check on Fridays.\nRun it once.",
        },
        # a snippet that is not in its result's lines places nothing
        {
            "path": f.relpath,
            "start_line": line_of[1],
            "end_line": line_of[1],
            "snippet": "Biscuit likes fish",
        },
    ]
    got = beam.returned_chars(results, files)
    assert set(got.chars) == {2, 3}
    assert got.unplaced == 1
    assert beam.present(got, sizes) == {2}  # message 3: 12 characters of it, under PRESENT_CHARS
    assert beam.present(got, sizes, beam.WHOLE_SHARE) == set()  # the redaction hid part of 2
    assert beam.recall(beam.present(got, sizes), [2, 3]) == 0.5


def test_baselines_fill_the_budget_and_pick_the_newest_match(beam_data: Path) -> None:
    (chat,), _ = beam.load_chats(beam.chats_root(beam_data))
    files = beam.chat_files(chat)
    bm25 = beam.MessageBM25(chat, files)
    ranked = bm25.ranked("pet insurance budget")
    assert {m for m, _ in ranked} >= {4, 6}
    assert beam.fill_budget([1, 2, 3], {1: 5, 2: 20, 3: 4}, 10) == [1, 3]  # 2 does not fit: skipped
    picked = bm25.within_budget(ranked, 1000)
    assert sum(bm25.cost[m] for m in picked) <= 1000 and set(picked) >= {4, 6}
    assert beam.newest_match(bm25.query_words("What is the pet insurance budget?"), bm25.line_words) == 6
    assert beam.newest_match(bm25.query_words("insurance budget for my cat"), bm25.line_words) == 6
    assert beam.newest_match(frozenset({"zzz"}), bm25.line_words) is None
    lines = [
        (1, frozenset({"a", "b"})),
        (2, frozenset({"a"})),
        (3, frozenset({"a", "b"})),
        (4, frozenset({"b"})),
    ]
    assert beam.newest_match(frozenset({"a", "b"}), lines) == 3


def test_a_bare_git_directory_is_extracted(beam_data: Path, tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(beam_data), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture")
    root, commit = beam.extract_from_git(beam_data / ".git", tmp_path / "extracted", lambda m: None)
    assert root == tmp_path / "extracted" / "100K" and len(commit) == 40
    assert (root / "1" / "chat.json").read_text() == (beam_data / "chats/100K/1/chat.json").read_text()
    assert beam.chats_root(root) == root


def test_the_eval_runs_end_to_end_fts_only(beam_data: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "beam.json"
    results = beam.main(
        ["--data", str(beam_data), "--fts-only", "--json", str(out), "--cache", str(tmp_path / "ws")]
    )
    rows = {r["ability"]: r for r in results["rows"]}
    cat = rows["information_extraction"]
    # the cat's message is returned, and every message counted was in the returned snippets
    assert 2 in cat["lifelong"]["2000"]["returned"]
    assert all(0 <= m < len(MESSAGES) for m in cat["lifelong"]["2000"]["returned"])
    assert cat["lifelong"]["2000"]["unplaced"] == 0
    assert rows["knowledge_update"]["newest_match"] == [6]
    agg = results["aggregate"]
    assert agg["overall"]["n"] == 2 and agg["information_extraction"]["lifelong@2000"] == 1.0
    assert agg["knowledge_update"]["updated_info:newest_match"] == 1.0
    assert agg["knowledge_update"]["original_info:newest_match"] == 0.0
    assert results["load"]["skipped_by_ability"] == {"abstention": 1}
    assert json.loads(out.read_text())["aggregate"] == agg
    printed = capsys.readouterr().out
    assert "information_extraction" in printed and "newest matching line" in printed and "tokens/s" in printed
    assert beam.main(["--show", str(out)])["aggregate"] == agg
