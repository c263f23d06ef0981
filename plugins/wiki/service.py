"""The wiki's executors: read the workspace, run the pure planners (compile, lint) and write
through a journal under the workspace's write lock. Shared by the hooks, tools and commands."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lifelong.errors import InputError, LifelongError
from lifelong.journal import Journal
from lifelong.markdown import split_lines
from lifelong.privacy import is_private_text
from lifelong.workspace import Workspace, atomic_write, daily_date, replace_region

from .compile import CompileConfig, CompilePlan, plan_compile
from .confidence import ConfidenceRule
from .lint import REPORT_TITLES, LintResult, lint_pages, render_reports
from .model_extract import model_subjects
from .sources import SourceLine, read_daily, read_memory
from .vault import PAGE_DIRS, REPORTS_DIR, PageFile, read_page

PLUGIN = "wiki"
REPORT_REGION = "wiki-report"


def state_path(ws: Workspace) -> Path:
    return ws.state_dir / "wiki" / "last.json"


def new_run_id(now: dt.datetime) -> str:
    return f"wiki-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


# ---------------------------------------------------------------------------------------------
# reading


def daily_paths(ws: Workspace, limit: int) -> list[str]:
    """Daily notes (memory/YYYY-MM-DD*.md), newest ``limit`` by date, in path order."""
    if not ws.memory_dir.is_dir():
        return []
    found = []
    for path in ws.memory_dir.iterdir():
        rel = f"memory/{path.name}"
        day = daily_date(rel)
        if day is not None and path.is_file():
            found.append((day, rel))
    found.sort(reverse=True)
    return sorted(rel for _, rel in found[:limit]) if limit else []


def read_sources(ws: Workspace, cfg: dict[str, Any]) -> tuple[list[SourceLine], list[SourceLine], list[str]]:
    """(MEMORY.md items, daily bullets, problems). A file that cannot be read is skipped and named."""
    problems: list[str] = []
    memory: list[SourceLine] = []
    mem_path = ws.memory_file
    if mem_path.exists():
        rel = ws.relpath(mem_path)
        try:
            memory = read_memory(rel, ws.read_text(rel))
        except LifelongError as exc:
            problems.append(str(exc))
    dailies: list[SourceLine] = []
    for rel in daily_paths(ws, int(cfg["max_daily_files"])):
        try:
            text = ws.read_text(rel)
        except LifelongError as exc:
            problems.append(str(exc))
            continue
        if not is_private_text(rel, text):  # a private note never becomes a (shared) page
            dailies.extend(read_daily(rel, text))
    return memory, dailies, problems


def page_files(
    ws: Workspace, cache: dict[str, tuple[int, int, PageFile, str]] | None = None
) -> tuple[dict[str, PageFile], dict[str, str]]:
    """Every page under wiki/{entities,concepts,syntheses,sources}/ (parsed, and its text).
    With ``cache`` (path -> (mtime_ns, size, page, text)), a file whose stat is unchanged is not
    read or parsed again."""
    pages: dict[str, PageFile] = {}
    texts: dict[str, str] = {}
    for folder in sorted(PAGE_DIRS.values()):
        root = ws.wiki_dir / folder
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.md")):
            rel = ws.relpath(path)
            st = path.stat()
            hit = cache.get(rel) if cache is not None else None
            if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
                pages[rel], texts[rel] = hit[2], hit[3]
                continue
            try:
                text = ws.read_text(rel)
            except LifelongError as exc:
                pages[rel] = PageFile(rel, {}, "", error=str(exc))
                continue
            texts[rel] = text
            pages[rel] = read_page(rel, text)
            if cache is not None:
                cache[rel] = (st.st_mtime_ns, st.st_size, pages[rel], text)
    return pages, texts


def page_cache(ctx: Any) -> dict[str, tuple[int, int, PageFile, str]]:
    return ctx.state.setdefault("wiki.page_cache", {})


class SourceCache:
    """Lines of workspace files for lint (None: the file is missing or unreadable)."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.cache: dict[str, list[str] | None] = {}

    def __call__(self, rel: str) -> list[str] | None:
        if rel not in self.cache:
            try:
                path = self.ws.resolve(rel)
                self.cache[rel] = split_lines(self.ws.read_text(rel)) if path.is_file() else None
            except LifelongError:
                self.cache[rel] = None
        return self.cache[rel]


# ---------------------------------------------------------------------------------------------
# compile and lint


@dataclass
class WikiOutcome:
    run_id: str | None
    plan: CompilePlan | None
    lint: LintResult
    written: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    compile_ms: float = 0.0
    lint_ms: float = 0.0

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 1, "run_id": self.run_id, "written": self.written}
        if self.plan is not None:
            out.update(
                pages=len(self.plan.pages),
                claims=self.plan.claims,
                unchanged=len(self.plan.unchanged),
                compile_ms=round(self.compile_ms, 1),
                orphans=self.plan.orphans,
            )
        out["lint"] = lint_json(self.lint)
        out["lint_ms"] = round(self.lint_ms, 1)
        if self.problems:
            out["problems"] = self.problems
        return out


def lint_json(result: LintResult) -> dict[str, Any]:
    return {
        "as_of": result.today.isoformat(),
        "pages": result.pages,
        "claims": result.claims,
        "counts": result.counts(),
        "findings": [f.as_json() for f in result.findings],
        "contradictions": [
            {
                "page": k.page,
                "other_page": k.other_page or None,
                "reason": k.reason,
                "claims": [
                    {"id": c.id, "text": c.text, "evidence": [f"{e.path}#{e.lines}" for e in c.evidence]}
                    for c in (k.left, k.right)
                ],
            }
            for k in result.contradictions
        ],
    }


def hints_for(ctx: Any, memory: list[SourceLine], cfg: dict[str, Any]) -> dict[str, str]:
    model = (ctx.workspace.config.get("llm") or {}).get("model")
    if not cfg["use_model"] or not model or not memory:
        return {}
    return model_subjects(
        memory,
        model=model,
        timeout_s=float(cfg["model_timeout_s"]),
        cache_path=ctx.workspace.state_dir / "wiki" / "subjects.json",
        workspace=ctx.workspace,
        **dict(cfg["model_options"]),
    )


def plan_for(ctx: Any, cfg: dict[str, Any]) -> tuple[CompilePlan, list[str]]:
    ws = ctx.workspace
    memory, dailies, problems = read_sources(ws, cfg)
    existing, texts = page_files(ws, page_cache(ctx))
    index_path = ws.wiki_dir / "index.md"
    index_text = ws.read_text("wiki/index.md") if index_path.is_file() else None
    plan = plan_compile(
        memory,
        dailies,
        existing,
        texts,
        CompileConfig.from_config(cfg),
        hints=hints_for(ctx, memory, cfg),
        index_text=index_text,
    )
    return plan, problems + plan.skipped


def run_lint(ctx: Any, cfg: dict[str, Any], today: dt.date) -> LintResult:
    pages, _ = page_files(ctx.workspace, page_cache(ctx))
    return lint_pages(
        list(pages.values()),
        SourceCache(ctx.workspace),
        today,
        ConfidenceRule.from_config(cfg),
        aging_days=int(cfg["aging_days"]),
        stale_days=int(cfg["stale_days"]),
    )


def report_writes(ws: Workspace, result: LintResult, cfg: dict[str, Any]) -> dict[str, str]:
    """wiki/reports/NAME.md for each report: the body inside a managed region (text a human adds
    outside it stays)."""
    out = {}
    for name, body in render_reports(result, int(cfg["stale_days"])).items():
        rel = f"wiki/{REPORTS_DIR}/{name}.md"
        path = ws.root / rel
        current = ws.read_text(rel) if path.is_file() else f"# {REPORT_TITLES[name]}\n\n"
        new = replace_region(current, REPORT_REGION, body)
        if new != current:
            out[rel] = new
    return out


def compile_and_lint(
    ctx: Any,
    *,
    journal: Journal | None = None,
    now: dt.datetime | None = None,
    compile_pages: bool = True,
    write: bool = True,
) -> WikiOutcome:
    """Compile (optional), lint and write pages and reports through ``journal`` (a new one when
    None), under the workspace's write lock."""
    cfg = ctx.config(PLUGIN)
    ws = ctx.workspace
    now = now or ctx.now()
    plan, problems, compile_ms = None, [], 0.0
    written: list[str] = []
    run_id = journal.run_id if journal is not None else None
    with ws.lock("write", timeout=float(cfg["lock_timeout_s"])):
        if compile_pages:
            started = time.monotonic()
            plan, problems = plan_for(ctx, cfg)
            compile_ms = (time.monotonic() - started) * 1000
            if write and plan.writes:
                journal = journal or Journal(ws, new_run_id(now), plugin=PLUGIN)
                for rel in sorted(plan.writes):
                    journal.write(ws.root / rel, plan.writes[rel], action="wiki-compile")
                written.extend(sorted(plan.writes))
        started = time.monotonic()
        result = run_lint(ctx, cfg, now.date())
        lint_ms = (time.monotonic() - started) * 1000
        if write:
            reports = report_writes(ws, result, cfg)
            if reports:
                journal = journal or Journal(ws, new_run_id(now), plugin=PLUGIN)
                for rel in sorted(reports):
                    journal.write(ws.root / rel, reports[rel], action="wiki-lint")
                written.extend(sorted(reports))
    run_id = journal.run_id if journal is not None else run_id
    outcome = WikiOutcome(run_id, plan, result, written, problems, compile_ms, lint_ms)
    if write:
        save_state(ws, now, outcome)
    return outcome


def save_state(ws: Workspace, now: dt.datetime, outcome: WikiOutcome) -> None:
    data = {
        "at": now.isoformat(timespec="seconds"),
        "run_id": outcome.run_id,
        "compiled": outcome.plan is not None,
        "written": len(outcome.written),
        "counts": outcome.lint.counts(),
        "contradictions": len(outcome.lint.contradictions),
    }
    if outcome.plan is not None:
        data.update(pages=len(outcome.plan.pages), claims=outcome.plan.claims)
    try:
        atomic_write(state_path(ws), json.dumps(data, indent=1))
    except OSError:  # derived state only: a read-only state folder must not fail the compile
        pass


def load_state(ws: Workspace) -> dict[str, Any] | None:
    path = state_path(ws)
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None


def require_page(pages: dict[str, PageFile], lookup: str) -> PageFile:
    for p in pages.values():
        if p.id == lookup or p.path == lookup:
            return p
    raise InputError(f"no wiki page {lookup!r}")
