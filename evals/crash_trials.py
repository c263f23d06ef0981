"""Crash trials (issue 14): seeded ``kill -9`` of a nightly dream and of a forced index at random
moments, then the next ordinary command, then checks.

``python -m evals.crash_trials [--dream-trials 50] [--index-trials 15] [--seed 14] [--json]``

Dream trials: a month of dailies with recall events from real searches (the fleet benchmark's
generator: six durable facts, each stated on three days and recalled on later days). One
uninterrupted ``lifelong dream`` on a copy gives the reference: which items it promotes. Each trial
copies the workspace, starts ``lifelong dream`` as its own process, kills it with SIGKILL after a
random delay spread over the reference run's duration, and then runs ``lifelong dream`` again (the
next night's command, same clock). Checked after that second command:

- **partial files**: MEMORY.md and DREAMS.md each hold balanced managed-section markers and decode
  as UTF-8 (an atomic write leaves the old bytes or the new, never a mix);
- **interrupted run resolved**: no run is left without a final status in ``dream history``;
- **same outcome**: the promoted item keys equal the reference's, none twice (an interrupted run
  was completed or undone, and the recall events it had consumed were not lost);
- **reversible**: rolling back every completed run, newest first, restores MEMORY.md byte for byte;
- **temp files**: none left (``.*.tmp`` anywhere in the workspace).

Index trials: ``--index-files`` dailies; half the trials kill the workspace's first ``lifelong
index`` (the model embeds every chunk), half a ``lifelong index --force``, at a random moment, then
``lifelong index``; checked: every file's unique token is found by ``lifelong search``, SQLite's
``integrity_check`` is ok, every chunk has its vector, no temp files. Printed: the share of vectors
a killed first index had already committed (kept, not redone) and what the next index embedded.

Each failure is listed with its trial number and delay, so a trial can be re-run by its seed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .bench_fleet import make_base

NOW = "2026-03-31T03:00:00+00:00"
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
MARKER = re.compile(r"<!-- lifelong:([\w.-]+):(start|end)")


def cli(ws: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lifelong", "--workspace", str(ws), "--now", NOW, *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
    )


def start(ws: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lifelong", "--workspace", str(ws), "--now", NOW, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
        start_new_session=True,
    )


def promoted_keys(ws: Path) -> list[str]:
    text = (ws / "MEMORY.md").read_text("utf-8")
    return [line.split("key:")[1].split()[0] for line in text.splitlines() if "<!-- key:" in line]


def balanced(path: Path) -> str | None:
    """None when the file is whole: UTF-8 and every managed section opened is closed."""
    if not path.exists():
        return None
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError:
        return f"{path.name} is not UTF-8"
    open_sections: list[str] = []
    for name, edge in MARKER.findall(text):
        if edge == "start":
            open_sections.append(name)
        elif not open_sections or open_sections.pop() != name:
            return f"{path.name}: section {name} ends unopened"
    return f"{path.name}: section {open_sections[-1]} never ends" if open_sections else None


def temp_files(ws: Path) -> list[str]:
    return sorted(str(p.relative_to(ws)) for p in ws.rglob(".*.tmp"))


def history(ws: Path) -> list[dict[str, Any]]:
    out = cli(ws, "dream", "history", "--json")
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-300:])
    data = json.loads(out.stdout)
    return data["runs"] if isinstance(data, dict) else data


def dream_trials(base: Path, work: Path, trials: int, rng: random.Random) -> dict[str, Any]:
    ref = work / "reference"
    shutil.copytree(base, ref)
    t0 = time.perf_counter()
    done = cli(ref, "dream")
    duration = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"reference dream failed: {done.stderr.strip()[-300:]}")
    reference = sorted(promoted_keys(ref))
    original = (base / "MEMORY.md").read_bytes()
    failures: list[str] = []
    killed_while_running = 0
    for i in range(trials):
        ws = work / f"dream-{i:03d}"
        shutil.copytree(base, ws)
        delay = rng.uniform(0.0, duration)
        proc = start(ws, "dream")
        time.sleep(delay)
        if proc.poll() is None:
            killed_while_running += 1
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        problems = [p for p in (balanced(ws / "MEMORY.md"), balanced(ws / "DREAMS.md")) if p]
        after = cli(ws, "dream")
        if after.returncode != 0:
            problems.append(f"next dream failed: {after.stderr.strip()[-200:]}")
        problems += [p for p in (balanced(ws / "MEMORY.md"), balanced(ws / "DREAMS.md")) if p]
        runs = history(ws)
        unfinished = [r["run_id"] for r in runs if r.get("status") in (None, "", "running")]
        if unfinished:
            problems.append(f"runs left unfinished: {unfinished}")
        keys = promoted_keys(ws)
        if len(keys) != len(set(keys)):
            problems.append("a key promoted twice")
        if sorted(set(keys)) != reference:
            problems.append(f"promoted {len(set(keys))} items, reference {len(reference)}")
        for run in sorted(runs, key=lambda r: str(r.get("started") or r["run_id"]), reverse=True):
            if run.get("status") in ("ok", "nothing"):
                undo = cli(ws, "dream", "rollback", run["run_id"])
                if undo.returncode != 0:
                    problems.append(f"rollback {run['run_id']} failed: {undo.stderr.strip()[-200:]}")
        if (ws / "MEMORY.md").read_bytes() != original:
            problems.append("MEMORY.md differs from the original after rolling back every run")
        left = temp_files(ws)
        if left:
            problems.append(f"temp files left: {left}")
        if problems:
            failures.append(f"trial {i} (kill after {delay:.2f} s): " + "; ".join(problems))
        shutil.rmtree(ws, ignore_errors=True)
    return {
        "trials": trials,
        "reference_seconds": round(duration, 2),
        "reference_promoted": len(reference),
        "killed_while_running": killed_while_running,
        "failed_trials": len(failures),
        "failures": failures[:20],
    }


def build_index_workspace(root: Path, files: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    root.mkdir(parents=True)
    (root / "lifelong.yaml").write_text("timezone: UTC\nembedding: {provider: local}\n")
    (root / "MEMORY.md").write_text("# MEMORY\n")
    (root / "memory").mkdir()
    tokens = []
    words = "offsite pitch budget roadmap invoice design travel hiring android retention".split()
    for i in range(files):
        token = f"zq{seed}x{i:05d}"
        tokens.append(token)
        lines = [
            f"- {' '.join(rng.choices(words, k=12))} {token if j == 2 else ''}".rstrip() for j in range(6)
        ]
        day = f"2025-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
        (root / "memory" / f"{day}-n{i}.md").write_text(f"# {day}\n\n" + "\n".join(lines) + "\n")
    return tokens


def index_trials(work: Path, trials: int, files: int, rng: random.Random) -> dict[str, Any]:
    """Half the trials kill the first index of the workspace (the model embedding every chunk,
    nothing cached), half a forced reindex (mostly cache hits). After a kill during the first
    index, the vectors it committed must be kept and the next ``index`` must embed only the rest."""
    base = work / "index-base"
    tokens = build_index_workspace(base, files, 7)
    t0 = time.perf_counter()
    first = cli(base, "index")
    first_duration = time.perf_counter() - t0
    if first.returncode != 0:
        raise RuntimeError(first.stderr.strip()[-300:])
    t0 = time.perf_counter()
    forced = cli(base, "index", "--force")
    duration = time.perf_counter() - t0
    if forced.returncode != 0:
        raise RuntimeError(forced.stderr.strip()[-300:])
    failures: list[str] = []
    kept: list[float] = []  # share of the chunks' vectors a killed first index had committed
    resumed: list[int] = []  # texts the next index embedded after a killed first index
    total_texts = 0
    for i in range(trials):
        ws = work / f"index-{i:03d}"
        fresh = i % 2 == 0
        shutil.copytree(base, ws, ignore=shutil.ignore_patterns(".lifelong") if fresh else None)
        delay = rng.uniform(0.0, first_duration if fresh else duration)
        proc = start(ws, "index") if fresh else start(ws, "index", "--force")
        time.sleep(delay)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        problems = []
        db = ws / ".lifelong" / "index.sqlite"
        if fresh and db.exists():
            with sqlite3.connect(db) as conn:
                try:
                    chunks, vectors = conn.execute(
                        "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunk_vectors)"
                    ).fetchone()
                except sqlite3.OperationalError:  # killed before the tables existed
                    chunks, vectors = 0, 0
            kept.append(vectors / chunks if chunks else 0.0)
        again = cli(ws, "index", "--json")
        if again.returncode != 0:
            problems.append(f"next index failed: {again.stderr.strip()[-200:]}")
        elif fresh:
            report = json.loads(again.stdout)
            resumed.append(
                int(report.get("embedded", 0))
                + int(report.get("units_embedded", 0))
                + int(report.get("sentences_embedded", 0))
            )
        if not db.exists():
            failures.append(f"trial {i}: no index after the next index ({again.stderr.strip()[-300:]})")
            shutil.rmtree(ws, ignore_errors=True)
            continue
        with sqlite3.connect(db) as conn:
            check = conn.execute("PRAGMA integrity_check").fetchone()[0]
            chunks, vectors = conn.execute(
                "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunk_vectors)"
            ).fetchone()
        if check != "ok":
            problems.append(f"integrity_check: {check}")
        if chunks != vectors:
            problems.append(f"{chunks - vectors} chunk(s) without a vector after the next index")
        for token in rng.sample(tokens, min(20, len(tokens))):
            found = cli(ws, "search", token, "--json")
            if found.returncode != 0 or token not in found.stdout:
                problems.append(f"{token} not found")
                break
        left = temp_files(ws)
        if left:
            problems.append(f"temp files left: {left}")
        if problems:
            kind = "first index" if fresh else "forced index"
            failures.append(f"trial {i} ({kind}, kill after {delay:.2f} s): " + "; ".join(problems))
        shutil.rmtree(ws, ignore_errors=True)
    first_report = json.loads(cli(base, "index", "--force", "--json").stdout or "{}")
    total_texts = int(first_report.get("embedded", 0)) + int(first_report.get("embedding_cache_hits", 0))
    return {
        "trials": trials,
        "files": files,
        "first_index_seconds": round(first_duration, 2),
        "forced_index_seconds": round(duration, 2),
        "killed_first_index_vectors_kept_mean": round(sum(kept) / len(kept), 3) if kept else None,
        "next_index_texts_embedded": resumed,
        "chunks": total_texts,
        "failed_trials": len(failures),
        "failures": failures[:20],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.crash_trials", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--dream-trials", type=int, default=50)
    parser.add_argument("--index-trials", type=int, default=15)
    parser.add_argument("--index-files", type=int, default=120)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    out: dict[str, Any] = {"seed": args.seed}
    with tempfile.TemporaryDirectory(prefix="lifelong-crash-") as tmp:
        work = Path(tmp)
        if args.dream_trials:
            base = work / "dream-base"
            make_base(base, args.seed, "none")
            out["dream"] = dream_trials(base, work, args.dream_trials, rng)
            d = out["dream"]
            print(
                f"dream: {d['trials']} kill -9 trials ({d['killed_while_running']} while running; reference run "
                f"{d['reference_seconds']} s promoting {d['reference_promoted']}): {d['failed_trials']} failed",
                flush=True,
            )
            for line in d["failures"]:
                print(f"  {line}")
        if args.index_trials:
            out["index"] = index_trials(work, args.index_trials, args.index_files, rng)
            x = out["index"]
            print(
                f"index: {x['trials']} kill -9 trials (half during the {x['first_index_seconds']} s first index, "
                f"half during the {x['forced_index_seconds']} s forced index) of {x['files']} files: "
                f"{x['failed_trials']} failed; a killed first index kept on average "
                f"{x['killed_first_index_vectors_kept_mean']} of its chunks' vectors, and the next index "
                f"embedded {x['next_index_texts_embedded']} texts",
                flush=True,
            )
            for line in x["failures"]:
                print(f"  {line}")
    if args.json:
        print(json.dumps(out, indent=1))
    return 1 if any(out.get(k, {}).get("failed_trials") for k in ("dream", "index")) else 0


if __name__ == "__main__":
    raise SystemExit(main())
