"""Privacy tiers in consolidation (issue 14): a line of a note under ``memory/private/`` or with
frontmatter ``privacy: private`` (``lifelong.privacy.is_private``) is never promoted into MEMORY.md
and never reaches DREAMS.md, the reports or what ``lifelong dream`` prints, however often it recurs
and is recalled; a shared note beside it is promoted as usual."""

from __future__ import annotations

import json

from click.testing import CliRunner

from lifelong.cli import cli

from .conftest import at, dream, record_event

SHARED = "Decision: the pitch opens with the live offline sync demo, market size moves to slide 9."
FOLDER = "Dr Okafor prescribed lisinopril 10 mg for my blood pressure, every morning."
MARKED = "The Zurich locker code is 4471, locker 12 at the Okafor clinic basement."
FILES = {
    "MEMORY.md": "# MEMORY\n",
    "memory/2026-03-04.md": f"# 2026-03-04\n\n## Work\n- {SHARED}\n",
    "memory/private/2026-03-04.md": f"# 2026-03-04\n\n## Health\n- {FOLDER}\n",
    "memory/2026-03-05.md": f"---\nprivacy: private\n---\n# 2026-03-05\n\n## Notes\n- {MARKED}\n",
}
QUERIES = {
    ("memory/2026-03-04.md", 4): ["how does the pitch open", "pitch opening slide", "pitch structure"],
    ("memory/private/2026-03-04.md", 4): [
        "blood pressure pills",
        "lisinopril dose",
        "what does Okafor prescribe",
    ],
    ("memory/2026-03-05.md", 7): ["Zurich locker code", "locker at the clinic", "Okafor clinic locker"],
}
PRIVATE_WORDS = ("lisinopril", "4471", "Zurich locker", "Okafor")


def recall_all(host, days=("2026-03-06", "2026-03-07", "2026-03-08")) -> None:  # noqa: ANN001
    for (rel, line), queries in QUERIES.items():
        for day in days:
            for n, q in enumerate(queries):
                record_event(host, rel, line, line, q, at(day, 9 + n))


def leaked(text: str) -> list[str]:
    return [w for w in PRIVATE_WORDS if w.lower() in text.lower()]


def everything_written(root) -> str:  # noqa: ANN001
    out = [(root / "MEMORY.md").read_text()]
    if (root / "DREAMS.md").exists():
        out.append((root / "DREAMS.md").read_text())
    reports = root / ".lifelong" / "reports"
    if reports.exists():
        out += [p.read_text() for p in reports.rglob("*") if p.is_file()]
    return "\n".join(out)


def test_private_notes_are_never_promoted_or_written_in_clear(dream_host) -> None:  # noqa: ANN001
    host = dream_host(FILES, {"plugins": {"dreaming": {"lookback_days": 7}}})
    root = host.workspace.root
    recall_all(host)
    run = dream(host, at("2026-03-09"))
    assert [p["text"] for p in run.promoted] == [SHARED]
    assert leaked(everything_written(root)) == []
    assert leaked(json.dumps(run.as_json())) == []
    assert run.reports["light"]["private_dailies"] == 2
    # the notes are untouched
    assert {p: (root / p).read_text() for p in FILES if p != "MEMORY.md"} == {
        p: t for p, t in FILES.items() if p != "MEMORY.md"
    }


def test_a_note_marked_private_after_it_was_staged_is_not_promoted(dream_host) -> None:  # noqa: ANN001
    files = {**FILES, "memory/2026-03-05.md": f"# 2026-03-05\n\n## Notes\n- {MARKED}\n"}
    host = dream_host(files, {"plugins": {"dreaming": {"lookback_days": 7}}})
    root = host.workspace.root
    record_event(host, "memory/2026-03-05.md", 4, 4, "Zurich locker code", at("2026-03-05", 20))
    first = dream(host, at("2026-03-06"))
    assert MARKED in [s["text"] for s in first.reports["light"]["staged"]]  # staged while shared
    (root / "memory/2026-03-05.md").write_text(FILES["memory/2026-03-05.md"])  # now marked private
    for day in ("2026-03-06", "2026-03-07", "2026-03-08"):
        for n, q in enumerate(QUERIES[("memory/2026-03-05.md", 7)]):
            record_event(host, "memory/2026-03-05.md", 7, 7, q, at(day, 9 + n))
    run = dream(host, at("2026-03-09"))
    assert MARKED not in [p["text"] for p in run.promoted]
    assert "4471" not in (root / "MEMORY.md").read_text()
    deep = json.dumps(run.reports["deep"])
    assert "4471" not in deep and "4471" not in (root / "DREAMS.md").read_text()


def test_dream_json_prints_no_private_text(dream_host, tmp_path) -> None:  # noqa: ANN001
    host = dream_host(FILES, {"plugins": {"dreaming": {"lookback_days": 7}}})
    recall_all(host)
    root = host.workspace.root
    host.close()
    out = CliRunner().invoke(
        cli, ["--workspace", str(root), "--now", "2026-03-09T03:00", "dream", "--dry-run", "--json"]
    )
    assert out.exit_code == 0, out.output
    assert leaked(out.output) == []
