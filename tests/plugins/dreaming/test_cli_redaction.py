"""Every text the dream prints goes through lifelong.safety's redaction (issue 14 item 3): a
blocked candidate's injection text and a secret never reach stdout of ``lifelong dream --json``,
``--dry-run``, the plain run, ``dream explain`` or ``dream history``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from lifelong.cli import cli
from lifelong.host import Host
from lifelong.workspace import Workspace

from .conftest import at, record_event
from .test_safety import DAILIES, QUERIES, leaks


def cli_run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def hostile_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "memory").mkdir()
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    (root / "MEMORY.md").write_text("# MEMORY\n")
    for rel, text in DAILIES.items():
        (root / rel).write_text(text)
    host = Host(Workspace(root), builtins=("embeddings", "recall", "dreaming"), entry_points=False)
    for path, queries in QUERIES.items():
        for day in ("2026-03-06", "2026-03-07", "2026-03-08"):
            for n, q in enumerate(queries):
                record_event(host, path, 4, 4, q, at(day, 9 + n))
    host.close()
    return root


def test_nothing_the_dream_prints_carries_a_secret_or_an_injection(tmp_path: Path) -> None:
    root = hostile_workspace(tmp_path)
    w = ["--workspace", str(root), "--now", "2026-03-10T03:00"]
    dry = cli_run(*w, "dream", "--dry-run")
    assert "blocked" in dry and leaks(dry) == []
    dry_json = cli_run(*w, "dream", "--dry-run", "--json")
    assert leaks(dry_json) == []
    out = cli_run(*w, "dream", "--json")
    data = json.loads(out)
    assert data["status"] == "ok" and len(data["blocked"]) == 2
    assert leaks(out) == [], leaks(out)
    injection, secret = sorted(data["blocked"], key=lambda b: b["reason"].startswith("only about"))
    assert "[withheld: reads as instructions to an agent" in injection["text"]
    # a line holding a secret is never promoted (issue 40): it is listed blocked, redacted
    assert "[redacted password]" in secret["text"] and secret["reason"].startswith("only about a secret")
    assert not any("redacted" in p["text"] for p in data["promoted"])
    key = injection["key"]
    assert leaks(cli_run(*w, "dream", "explain", key)) == []
    assert leaks(cli_run(*w, "dream", "explain", key, "--json")) == []
    assert leaks(cli_run(*w, "dream", "history", "--json")) == []
    # the notes themselves are never modified
    assert {p: (root / p).read_text() for p in DAILIES} == DAILIES


def test_run_ids_are_not_taken_for_card_numbers() -> None:
    """A run id holds fourteen digits; one in ten passes the Luhn check of the card rule."""
    from lifelong_plugins.dreaming.screening import neutralise

    from lifelong.safety import redact_secrets

    run_id = "20260310-000900-7f2d"
    assert redact_secrets(run_id)[1] == 0  # no card issuer starts with 20 (the core rule's prefix check)
    line = f"`lifelong dream rollback {run_id}` undoes it; card 4111 1111 1111 1111"
    assert neutralise(line) == f"`lifelong dream rollback {run_id}` undoes it; card [redacted card number]"
