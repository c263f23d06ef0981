"""Bad input never stops recall and nothing outside the workspace is read.

``python -m evals.bad_input [--big-mb 50] [--json FILE]`` builds a workspace holding one good daily
and a corpus of bad files, then runs the real CLI (subprocesses) over it and checks each case:

- binary ``.md``, non-UTF-8, ``\\r``-only line endings, a bare ``\\r`` on the last line with no final
  newline, NUL bytes, a huge file (``--big-mb``), a 2 MB single line, malformed YAML frontmatter,
  a symlink loop, a symlink out of the workspace, a ``memory/`` folder link out of the workspace;
- ``lifelong index`` exits 0 and names each skipped file in one line; the good daily and the
  indexable odd ones (``\\r`` endings, malformed frontmatter as plain text) are searchable;
- ``lifelong search`` and ``lifelong gate`` work; ``lifelong get`` refuses path traversal, a
  non-markdown file, a symlink out, a NUL in the path and a bad line range, each with one
  ``error:`` line and exit 1, and never prints a host path outside the workspace;
- the secret planted outside the workspace never appears in any output, and no output names an
  absolute host path (error messages speak of workspace-relative paths).

Prints one row per case (ok / FAILED with what happened) and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

OUTSIDE_SECRET = "OUTSIDE-SECRET-7f3a9c"
GOOD = "# 2026-03-04\n\n- Booked the team offsite at Gut Boltenhagen for April 14-16.\n"


@dataclass
class Case:
    name: str
    ok: bool
    detail: str


def lifelong(ws: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [sys.executable, "-m", "lifelong", "--workspace", str(ws), "--now", "2026-03-10T09:00", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def _first_line_with(text: str, needle: str) -> str:
    return next((line[:160] for line in text.splitlines() if needle in line), "")


def build(root: Path, big_mb: int) -> tuple[Path, Path]:
    ws = root / "ws"
    outside = root / "outside"
    (ws / "memory").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text(f"# secret\n\n- {OUTSIDE_SECRET}\n")
    (outside / "folder").mkdir()
    (outside / "folder" / "2026-03-01.md").write_text(f"- {OUTSIDE_SECRET} in a linked folder\n")
    (ws / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    (ws / "MEMORY.md").write_text("# MEMORY\n")
    m = ws / "memory"
    (m / "2026-03-04.md").write_text(GOOD)
    (m / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    (m / "latin1.md").write_bytes("# Notiz\n\n- Café mit Jürgen über Zölle\n".encode("latin-1"))
    (m / "2026-03-05.md").write_bytes(
        b"# 2026-03-05\r\r- Mac line endings: kayak rental booked\r- second line\r"
    )
    (m / "2026-03-06.md").write_bytes(b"# 2026-03-06\n\n- bare carriage return at the end: lighthouse tour\r")
    (m / "nul.md").write_bytes(b"# nul\n\n- text with a \x00 NUL byte\n")
    with open(m / "huge.md", "wb") as fh:
        line = b"- filler line about nothing in particular, repeated to make a huge file\n"
        for _ in range(big_mb * 1024 * 1024 // len(line) + 1):
            fh.write(line)
    (m / "2026-03-07.md").write_text("# 2026-03-07\n\n- long line: " + ("zebra crossing " * 140_000) + "\n")
    (m / "2026-03-08.md").write_text(
        "---\ntitle: [unclosed\ndate: 2026-03-08\n---\n# 2026-03-08\n\n- frontmatter broken: origami class\n"
    )
    os.symlink(m / "loop-b.md", m / "loop-a.md")
    os.symlink(m / "loop-a.md", m / "loop-b.md")
    os.symlink(outside / "secret.md", m / "escape.md")
    os.symlink(outside / "folder", m / "linked")
    return ws, outside


def check(ws: Path, outside: Path) -> list[Case]:
    cases: list[Case] = []
    started = time.monotonic()
    index = lifelong(ws, "index", "--json")
    elapsed = time.monotonic() - started
    out = index.stdout + index.stderr
    cases.append(Case("index exits 0", index.returncode == 0, f"exit {index.returncode} in {elapsed:.1f} s"))
    report = {}
    try:
        report = json.loads(index.stdout)
    except ValueError:
        cases.append(Case("index --json is JSON", False, index.stdout[-300:]))
    skipped = report.get("skipped", {})
    for rel, why in (
        ("memory/binary.md", "binary"),
        ("memory/latin1.md", "UTF-8"),
        ("memory/nul.md", "binary"),
        ("memory/huge.md", "limit"),
    ):
        reason = skipped.get(rel, "")
        cases.append(
            Case(f"{rel} skipped with a reason", why.lower() in reason.lower(), reason or "not skipped")
        )
    cases.append(Case("no host path outside the workspace in index output", str(outside) not in out, ""))
    cases.append(
        Case(
            "no absolute host path in index output",
            str(ws.parent) not in out,
            _first_line_with(out, str(ws.parent)),
        )
    )
    cases.append(Case("no outside secret in index output", OUTSIDE_SECRET not in out, ""))

    for query, rel in (
        ("offsite Gut Boltenhagen", "memory/2026-03-04.md"),
        ("kayak rental", "memory/2026-03-05.md"),
        ("lighthouse tour", "memory/2026-03-06.md"),
        ("origami class", "memory/2026-03-08.md"),
    ):
        res = lifelong(ws, "search", query, "--json")
        paths = [r["path"] for r in json.loads(res.stdout)["results"]] if res.returncode == 0 else []
        cases.append(Case(f"search finds {rel}", rel in paths, f"exit {res.returncode}; {paths[:3]}"))
    res = lifelong(ws, "search", "zebra crossing", "--json")
    cases.append(Case("search works beside a 2 MB line", res.returncode == 0, res.stderr.strip()[:200]))
    res = lifelong(ws, "search", OUTSIDE_SECRET, "--json")
    found = json.dumps(json.loads(res.stdout)["results"]).count(OUTSIDE_SECRET) if res.returncode == 0 else -1
    cases.append(
        Case("nothing outside the workspace is indexed", found == 0, f"exit {res.returncode}, {found} hits")
    )
    gate = lifelong(ws, "gate", "where is the team offsite?")
    cases.append(
        Case("gate answers", gate.returncode == 0 and "Memory gate: ok" in gate.stdout, gate.stdout[:120])
    )

    for args, name in (
        (["get", "../outside/secret.md"], "get refuses path traversal"),
        (["get", str(outside / "secret.md")], "get refuses an absolute path outside"),
        (["get", "memory/escape.md"], "get refuses a symlink out"),
        (["get", "memory/loop-a.md"], "get refuses a symlink loop"),
        (["get", "lifelong.yaml"], "get refuses a non-markdown file"),
        (["get", "memory/2026-03-04.md\x00x"], "get refuses a NUL in the path"),
        (["get", "memory/2026-03-04.md", "--from", "0"], "get refuses --from 0"),
        (["get", "memory/2026-03-04.md", "--lines", "-3"], "get refuses --lines -3"),
    ):
        try:
            res = lifelong(ws, *args)
        except ValueError as exc:  # the OS refuses a NUL in an argument: nothing reached lifelong
            cases.append(Case(name, True, f"refused before running ({exc})"))
            continue
        err = res.stderr.strip()
        one_line = res.returncode != 0 and err.startswith("error: ") and "\n" not in err
        leaked = OUTSIDE_SECRET in res.stdout + res.stderr or str(ws.parent) in res.stdout + res.stderr
        cases.append(Case(name, one_line and not leaked, (err or res.stdout)[:160]))
    return cases


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.bad_input", description=__doc__.split("\n\n")[0])
    parser.add_argument("--big-mb", type=int, default=50, help="Size of the huge file (MB).")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lifelong-bad-input-") as tmp:
        ws, outside = build(Path(tmp), args.big_mb)
        cases = check(ws, outside)
    width = max(len(c.name) for c in cases)
    for c in cases:
        print(f"{'ok    ' if c.ok else 'FAILED'} {c.name:<{width}}  {c.detail}")
    failed = [c for c in cases if not c.ok]
    print(f"\n{len(cases) - len(failed)} of {len(cases)} cases ok")
    if args.json:
        args.json.write_text(json.dumps([asdict(c) for c in cases], indent=1), encoding="utf-8")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
