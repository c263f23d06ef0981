"""Exact identifiers found however they are typed: error codes, ticket ids, snake_case and dotted
names, versions, hashes and paths.

``python -m evals.identifiers [--embedding none|local] [--days N] [--json FILE]``

Sixty identifiers, each written once (``--days N``: on N days, a week apart, as a recurring error
code is; from two days on the concept index knows it) in a note line among 40 days of ordinary
work notes (which
mention the identifiers' words in other senses: "the lock on the shed", "merge the branches"), are
searched the way people type them: as written, in lower or upper case, with the separators changed
or dropped into spaces ("ERR LOCK 77", "proj 1234", "v2 3 1"). Printed: hit@1 and hit@5 (the line
holding the identifier first, or in the top five) for lifelong's ``memory_search`` and, in the same
run, BM25 over the lines (``bm25s`` with its default tokenizer), the baseline a user would try;
and the share of the queries the concept index answered.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import tempfile
from pathlib import Path

from lifelong import clock
from lifelong.host import Host
from lifelong.workspace import Workspace, init_workspace

IDENTIFIERS = [
    "ERR_LOCK_77",
    "E_CONNREFUSED",
    "ERR_SSL_PROTOCOL_ERROR",
    "ORA-00942",
    "HTTP 503",
    "0x80070005",
    "SIGSEGV",
    "EADDRINUSE",
    "KeyError: 'user_id'",
    "NullPointerException",
    "PROJ-1234",
    "OPS-77",
    "JIRA-5521",
    "TW-418",
    "GH-3309",
    "INC0012345",
    "CVE-2024-3094",
    "RFC 9110",
    "safe_cron_merge",
    "user_id",
    "max_retry_count",
    "flush_pending_writes",
    "build_index_v2",
    "is_private_text",
    "QMD_ROUTER_TIMEOUT",
    "__init__",
    "numpy.linalg.norm",
    "os.path.join",
    "lifelong.facts.compare",
    "com.acme.billing.Invoice",
    "api.tidewater.io",
    "db-prod-1.internal",
    "s3://acme-backups/nightly",
    "eu-central-1",
    "v2.3.1",
    "1.106.12",
    "3.11.7",
    "v0.9.0-rc2",
    "node@20.20.2",
    "sqlite-vec 0.1.9",
    "3f2a9c1b7d10",
    "a8bd26a",
    "sha256:9b1c",
    "8cffab0",
    "/etc/nginx/sites-enabled/default",
    "~/.ssh/id_ed25519",
    "memory/2026-03-04.md",
    "src/lifelong/cli.py",
    "C:\\Users\\ana\\Desktop",
    "./scripts/deploy.sh",
    "safe-cron-merge.sh",
    "docker-compose.yml",
    "Makefile.am",
    "kube-prometheus-stack",
    "pg_dump",
    "rsync -avz",
    "git rebase --onto",
    "X-Request-Id",
    "utf-8-sig",
    "en_GB.UTF-8",
]
FILLER = [
    "Fixed the lock on the shed door.",
    "Merged the two spreadsheets for the budget.",
    "The router in the hall needs a restart sometimes.",
    "Read a chapter about error analysis.",
    "Project review with Priya went fine.",
    "Ops standup moved to 9:30.",
    "Index cards for the talk.",
    "Build the bookshelf on Saturday.",
    "The user interview was useful.",
    "Path along the river is flooded.",
    "Docker course, lesson three.",
    "Prometheus talk at the meetup.",
    "Version control workshop notes.",
    "Timeout at the bakery queue, 20 minutes.",
    "Max came over for dinner.",
    "Retry the sourdough recipe.",
]


def variants(ident: str, rng: random.Random) -> list[str]:
    """How people type an identifier: as written, folded case, separators changed or spaced."""
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", ident) if p]
    out = [ident, ident.lower(), ident.upper(), " ".join(parts)]
    if len(parts) > 1:
        out.append(rng.choice(["-", "_", "."]).join(parts).lower())
    return list(dict.fromkeys(out))


def build(root: Path, days: int = 1) -> dict[str, str]:
    """Forty days of notes; identifier i on day i % 40 (and, with ``days`` above 1, on the days
    7, 14, ... after it, modulo 40). Returns identifier -> its first daily (for a reader of the
    workspace)."""
    rng = random.Random(4)
    start = dt.date(2026, 5, 1)
    where: dict[str, str] = {}
    lines: dict[int, list[str]] = {d: [] for d in range(40)}
    for i, ident in enumerate(IDENTIFIERS):
        for k in range(days):
            lines[(i + 7 * k) % 40].append(f"- Looked into {ident} today; noted it for the retro.")
        where[ident] = f"memory/{(start + dt.timedelta(days=i % 40)).isoformat()}.md"
    for day, own in lines.items():
        date = start + dt.timedelta(days=day)
        body = own + [f"- {rng.choice(FILLER)}" for _ in range(4)]
        rng.shuffle(body)
        (root / "memory" / f"{date.isoformat()}.md").write_text(
            f"# {date.isoformat()}\n\n" + "\n".join(body) + "\n"
        )
    return where


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedding", default="none", choices=["none", "local"])
    ap.add_argument("--days", type=int, default=1, choices=range(1, 6), help="days each identifier is on")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    import bm25s

    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="lifelong-ids-") as tmp:
        root = Path(tmp) / "ws"
        init_workspace(root, timezone="UTC")
        (root / "lifelong.yaml").write_text(f"timezone: UTC\nembedding: {{provider: {args.embedding}}}\n")
        build(root, args.days)
        corpus = [
            (p.relative_to(root).as_posix(), line)
            for p in sorted((root / "memory").glob("*.md"))
            for line in p.read_text().splitlines()
            if line.startswith("- ")
        ]
        retriever = bm25s.BM25()
        retriever.index(
            bm25s.tokenize([line for _, line in corpus], show_progress=False), show_progress=False
        )
        host = Host(Workspace(root))
        rows = []
        for ident in IDENTIFIERS:
            for query in variants(ident, rng):
                with clock.pinned(dt.datetime(2026, 6, 15, 12, tzinfo=dt.UTC)):
                    found = host.call_tool(
                        "memory_search", {"query": query, "max_results": 5, "min_score": 0}
                    )
                ours = [r for r in found.get("results", [])]
                hits = [ident in r["snippet"] for r in ours]
                docs, _ = retriever.retrieve(
                    bm25s.tokenize([query], show_progress=False), k=5, show_progress=False
                )
                base = [ident in corpus[int(d)][1] for d in docs[0]]
                rows.append(
                    {
                        "identifier": ident,
                        "query": query,
                        "hit1": bool(hits[:1] and hits[0]),
                        "concepts": bool(ours)
                        and (ours[0].get("extra") or {}).get("answered_by") == "concepts",
                        "hit5": any(hits),
                        "bm25_hit1": bool(base[:1] and base[0]),
                        "bm25_hit5": any(base),
                    }
                )
        host.close()
    n = len(rows)
    figures = {k: sum(r[k] for r in rows) / n for k in ("hit1", "hit5", "bm25_hit1", "bm25_hit5", "concepts")}
    print(
        f"{len(IDENTIFIERS)} identifiers on {args.days} day(s) each, {n} queries"
        " (as written, lower, upper, spaced, other separators):"
    )
    print(
        f"  lifelong ({args.embedding})  hit@1 {figures['hit1']:.3f}  hit@5 {figures['hit5']:.3f}"
        f"  (answered by the concept index: {figures['concepts']:.3f})"
    )
    print(f"  BM25 over lines (bm25s)  hit@1 {figures['bm25_hit1']:.3f}  hit@5 {figures['bm25_hit5']:.3f}")
    for r in rows:
        if not r["hit1"]:
            print(f"  miss@1: {r['query']!r}")
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
