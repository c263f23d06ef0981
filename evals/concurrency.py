"""Concurrent use never loses a line or locks a user out.

``python -m evals.concurrency [--seconds 60] [--files 400] [--json FILE]`` builds a workspace of
``--files`` dailies with local embeddings not yet computed (so the first index is long), then runs
at the same time, as separate processes through the real CLI:

- two writers, each appending lines with a unique token to its own daily (as an agent or a human
  would) and searching for the token it just wrote;
- a dreamer running the nightly consolidation in a loop;
- one long ``lifelong index`` (embedding every chunk), then ``lifelong index --force``;
- a watcher (``lifelong index --watch``).

At the end the watcher is stopped, one final ``lifelong index`` runs, and every token is looked up.
Printed: lines appended, lost (not in its file, or not findable after the final index), duplicated,
"database is locked" errors that reached a user (any command's output), other failed commands,
and search latency (p50/p95, CLI wall time including start-up) while the index ran.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

TOPICS = [
    "offsite",
    "pitch",
    "retention",
    "hiring",
    "budget",
    "android",
    "invoice",
    "roadmap",
    "travel",
    "design",
]
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def cli(ws: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lifelong", "--workspace", str(ws), *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
    )


def build(root: Path, files: int, seed: int) -> Path:
    rng = random.Random(seed)
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: local}\n")
    (ws / "MEMORY.md").write_text("# MEMORY\n")
    for i in range(files):
        day = f"2025-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
        lines = [f"# {day} ({i})", ""]
        for _ in range(rng.randint(4, 12)):
            a, b = rng.sample(TOPICS, 2)
            lines.append(
                f"- Note {rng.randint(1, 10**6)} about the {a} and the {b}: {rng.choice(TOPICS)} follow-up."
            )
        (ws / "memory" / f"{day}-n{i}.md").write_text("\n".join(lines) + "\n")
    return ws


@dataclass
class Tally:
    appended: dict[str, str] = field(default_factory=dict)  # token -> file
    locked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    search_inner_ms: list[float] = field(default_factory=list)  # the search itself (its JSON elapsed_ms)
    record_ms: list[float] = field(default_factory=list)  # of it, recording the recall events
    lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, what: str, res: subprocess.CompletedProcess[str]) -> None:
        out = res.stdout + res.stderr
        with self.lock:
            if "database is locked" in out:
                self.locked.append(f"{what}: {out.strip()[-200:]}")
            elif res.returncode != 0:
                self.failed.append(f"{what}: exit {res.returncode}: {out.strip()[-200:]}")


def writer(ws: Path, name: str, stop: float, tally: Tally) -> None:
    path = ws / "memory" / f"2026-03-1{name}.md"
    n = 0
    while time.monotonic() < stop:
        n += 1
        token = f"zq{name}x{n:04d}"
        with open(path, "a", encoding="utf-8") as fh:  # an append, as an editor or agent does
            fh.write(f"- {token} written by writer {name}\n")
        with tally.lock:
            tally.appended[token] = path.name
        t0 = time.monotonic()
        res = cli(ws, "search", token, "--json", "--explain")
        tally.search_ms.append((time.monotonic() - t0) * 1000)
        tally.check(f"writer {name} search", res)
        if res.returncode == 0:
            try:
                data = json.loads(res.stdout)
                tally.search_inner_ms.append(float(data["elapsed_ms"]))
                tally.record_ms.append(float(data["legs"]["record_ms"]))
            except (ValueError, KeyError):
                pass


def dreamer(ws: Path, stop: float, tally: Tally) -> None:
    night = 0
    while time.monotonic() < stop:
        night += 1
        res = cli(ws, "--now", f"2026-03-{min(28, 1 + night):02d}T03:00", "dream", "--json")
        if "another lifelong process holds the 'dream' lock" in res.stderr:
            continue
        tally.check("dream", res)
        time.sleep(2)


def indexer(ws: Path, stop: float, tally: Tally) -> None:
    tally.check("index (first, embedding everything)", cli(ws, "index"))
    if time.monotonic() < stop:
        tally.check("index --force", cli(ws, "index", "--force"))


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(seconds: int, files: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="lifelong-concurrency-") as tmp:
        ws = build(Path(tmp), files, seed)
        tally = Tally()
        watcher = subprocess.Popen(
            [sys.executable, "-m", "lifelong", "--workspace", str(ws), "index", "--watch"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=ENV,
            start_new_session=True,
            # Ctrl-C's default action even when this runs as a background job (which inherits
            # SIGINT ignored, and so would its watcher: it would never stop)
            preexec_fn=_default_sigint,
        )
        stop = time.monotonic() + seconds
        threads = [
            threading.Thread(target=writer, args=(ws, "1", stop, tally)),
            threading.Thread(target=writer, args=(ws, "2", stop, tally)),
            threading.Thread(target=dreamer, args=(ws, stop, tally)),
            threading.Thread(target=indexer, args=(ws, stop, tally)),
        ]
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        os.killpg(watcher.pid, signal.SIGINT)
        t_stop = time.monotonic()
        try:
            watcher_out, _ = watcher.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(watcher.pid, signal.SIGKILL)
            watcher_out, _ = watcher.communicate()
            tally.failed.append("watcher did not stop within 300 s of Ctrl-C (killed)")
        watcher_stop_s = time.monotonic() - t_stop
        if "database is locked" in watcher_out:
            tally.locked.append("watcher: " + watcher_out.strip()[-200:])
        wall = time.monotonic() - started
        tally.check("final index", cli(ws, "index"))
        text = {p.name: p.read_text("utf-8") for p in (ws / "memory").glob("2026-03-1*.md")}
        lost_in_file = [t for t, f in tally.appended.items() if t not in text.get(f, "")]
        duplicated = [t for t, f in tally.appended.items() if text.get(f, "").count(f"{t} ") > 1]
        not_found = []
        for token in tally.appended:
            res = cli(ws, "search", token, "--json", "--min-score", "0")
            hits = json.loads(res.stdout)["results"] if res.returncode == 0 else []
            if not any(token in h["snippet"] for h in hits):
                not_found.append(token)
    ms = sorted(tally.search_ms)
    inner = sorted(tally.search_inner_ms)
    record = sorted(tally.record_ms)
    return {
        "seconds": seconds,
        "wall_s": round(wall, 1),
        "files": files,
        "appended": len(tally.appended),
        "lost_in_file": len(lost_in_file),
        "not_findable": len(not_found),
        "duplicated": len(duplicated),
        "database_locked": len(tally.locked),
        "other_failures": len(tally.failed),
        "watcher_stop_s": round(watcher_stop_s, 1),
        "search_ms_p50": round(statistics.median(ms), 1) if ms else None,
        "search_ms_p95": round(ms[int(0.95 * (len(ms) - 1))], 1) if ms else None,
        "search_inner_ms_p50": round(statistics.median(inner), 1) if inner else None,
        "search_inner_ms_p95": round(inner[int(0.95 * (len(inner) - 1))], 1) if inner else None,
        "record_ms_p50": round(statistics.median(record), 1) if record else None,
        "record_ms_p95": round(record[int(0.95 * (len(record) - 1))], 1) if record else None,
        "examples": (tally.locked + tally.failed)[:5] + not_found[:5],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.concurrency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    r = run(args.seconds, args.files, args.seed)
    print(
        f"{r['seconds']} s of two writers, a dreamer, a long index and a watcher ({r['files']} dailies; wall {r['wall_s']} s):\n"
        f"  lines appended {r['appended']}: lost {r['lost_in_file']}, not findable after the final index "
        f"{r['not_findable']}, duplicated {r['duplicated']}\n"
        f"  'database is locked' reaching a user: {r['database_locked']}; other failed commands: {r['other_failures']}\n"
        f"  search while indexing (CLI wall time incl. start-up and auto-sync): p50 {r['search_ms_p50']} ms, "
        f"p95 {r['search_ms_p95']} ms; the search itself p50 {r['search_inner_ms_p50']} ms, p95 {r['search_inner_ms_p95']} ms, "
        f"of which recording its recall events p50 {r['record_ms_p50']} ms, p95 {r['record_ms_p95']} ms\n"
        f"  the watcher stopped {r['watcher_stop_s']} s after Ctrl-C"
    )
    for example in r["examples"]:
        print(f"  e.g. {example}")
    if args.json:
        args.json.write_text(json.dumps(r, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
