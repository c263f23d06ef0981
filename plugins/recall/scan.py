"""Which files recall indexes and what changed since the last sync (no database): the stat scan
of the workspace (``scan_workspace``: MEMORY.md, memory/, wiki/ and configured extra paths; the
suite's own outputs, hidden folders and links leaving the workspace are never entered) and the
pure plan (``plan_changes``: new / modified / deleted / unchanged by checksum). ``index.py``
applies the plan."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from lifelong.contracts import FileChanges
from lifelong.workspace import Workspace

GENERATED_FILES = ("DREAMS.md", "DREAMS.lifelong.md")
# the suite's own outputs, never indexed: dreaming's reports, the state folder, and the wiki
# plugin's dashboards (lint, contradictions, open questions...), which would rank high on every
# concept they list
GENERATED_DIRS = ("memory/dreaming/", ".lifelong/", "wiki/reports/")


class FileState(NamedTuple):
    mtime: float
    size: int
    sha256: str | None = None
    corpus: str = "memory"


ChangePlan = FileChanges  # what a sync plans is what on_files_changed is told


def plan_changes(
    disk: dict[str, FileState], indexed: dict[str, FileState], *, force: bool = False
) -> ChangePlan:
    """Pure: compare what is on disk with what is indexed, by checksum."""
    new = sorted(p for p in disk if p not in indexed)
    deleted = sorted(p for p in indexed if p not in disk)
    modified: list[str] = []
    unchanged: list[str] = []
    for p in sorted(set(disk) & set(indexed)):
        same = disk[p].sha256 is not None and disk[p].sha256 == indexed[p].sha256
        same = same and disk[p].corpus == indexed[p].corpus
        (unchanged if same and not force else modified).append(p)
    return ChangePlan(tuple(new), tuple(modified), tuple(deleted), tuple(unchanged))


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_generated_path(relpath: str) -> bool:
    return relpath in GENERATED_FILES or relpath.startswith(GENERATED_DIRS)


@dataclass(frozen=True)
class ScannedFile:
    """A source file found by the scan, with what its stat said."""

    path: str  # absolute
    corpus: str
    mtime: float
    size: int


_GLOB_CHARS = frozenset("*?[")


def resolve_extra_paths(root: Path, entries: Iterable[str]) -> tuple[list[str], list[str]]:
    """``extra_paths`` as workspace-relative glob patterns, and a one-line problem for each entry
    that cannot be used (skipped; the others still count). An entry may be a glob or a path,
    relative to the workspace or absolute inside it (``~`` expanded); a folder means every
    markdown file below it. Entries are trimmed and duplicates dropped."""
    entries = list(entries)
    patterns: list[str] = []
    problems: list[str] = []
    if not entries:  # the common case, before every search: no path resolution at all
        return patterns, problems
    root = Path(root).resolve()
    for raw in entries:
        entry = str(raw).strip()
        if not entry:
            problems.append("extra_paths: an empty entry is ignored")
            continue
        path = Path(entry).expanduser()
        if path.is_absolute():
            literal = Path(path.parts[0])  # the part before the first glob character
            for part in path.parts[1:]:
                if _GLOB_CHARS & set(part):
                    break
                literal = literal / part
            try:
                rel_literal = literal.resolve().relative_to(root)
            except ValueError:
                problems.append(
                    f"extra_paths: {entry} is outside the workspace and is ignored (link it into the "
                    "workspace, e.g. `ln -s DIR notes`, and list `notes`)"
                )
                continue
            rest = path.parts[len(literal.parts) :]
            pattern = Path(rel_literal, *rest).as_posix()
        else:
            pattern = path.as_posix()
        if pattern in ("", "."):
            pattern = "**/*.md"
        elif ".." in Path(pattern).parts:
            problems.append(f"extra_paths: {entry} leaves the workspace and is ignored")
            continue
        elif not _GLOB_CHARS & set(pattern):
            target = root / pattern
            if target.is_dir():
                pattern = f"{pattern.rstrip('/')}/**/*.md"
            elif not target.exists():
                problems.append(f"extra_paths: {entry} does not exist (yet); nothing is indexed from it")
        if pattern not in patterns:
            patterns.append(pattern)
    return patterns, problems


def scan_workspace(ws: Workspace, extra_paths: Iterable[str] = ()) -> dict[str, ScannedFile]:
    """Source markdown files: relpath -> ScannedFile. Skips hidden folders, the suite's
    generated outputs and symlinks that leave the workspace.

    Runs before every search (the auto-sync check), so it costs one ``os.scandir`` per folder
    and one ``lstat`` per file (cached by the directory entry); only symlinks are resolved."""
    root = str(ws.root)
    prefix = root + os.sep
    found: dict[str, ScannedFile] = {}

    def inside(real: str) -> str | None:
        return real[len(prefix) :].replace(os.sep, "/") if real.startswith(prefix) else None

    def add(rel: str, abspath: str, corpus: str, st: os.stat_result) -> None:
        if rel in found or is_generated_path(rel):
            return
        if any(part.startswith(".") for part in rel.split("/")[:-1]):
            return
        found[rel] = ScannedFile(abspath, corpus, st.st_mtime, st.st_size)

    def add_link(abspath: str, corpus: str) -> None:
        real = os.path.realpath(abspath)
        rel = inside(real)
        if rel is None:
            return  # a symlink leaving the workspace
        try:
            st = os.stat(real)
        except OSError:
            return  # dangling (editors' lock files are such links)
        if stat.S_ISREG(st.st_mode):
            add(rel, real, corpus, st)

    def walk(folder: str, relbase: str, corpus: str) -> None:
        if relbase.startswith(GENERATED_DIRS):
            return
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            return
        for entry in entries:
            name = entry.name
            try:
                if entry.is_symlink():
                    if name.lower().endswith(".md"):
                        add_link(entry.path, corpus)
                elif entry.is_dir():
                    if not name.startswith("."):
                        walk(entry.path, f"{relbase}{name}/", corpus)
                elif name.lower().endswith(".md") and entry.is_file():
                    rel = relbase + name  # hidden and generated folders were not entered
                    if rel not in found and rel not in GENERATED_FILES:
                        st = entry.stat(follow_symlinks=False)
                        found[rel] = ScannedFile(entry.path, corpus, st.st_mtime, st.st_size)
            except OSError:
                continue  # vanished between listing and stat

    mem = ws.memory_file
    if mem.is_symlink():
        add_link(str(mem), "memory")
    elif mem.is_file():
        add(mem.name, str(mem), "memory", mem.stat())
    for folder, corpus in ((ws.memory_dir, "memory"), (ws.wiki_dir, "wiki")):
        real = os.path.realpath(folder)
        rel = inside(real)
        if rel is not None and os.path.isdir(real):
            walk(real, rel + "/", corpus)
    patterns, _ = resolve_extra_paths(ws.root, extra_paths)
    for pattern in patterns:
        try:
            matches = sorted(ws.root.glob(pattern))
        except (ValueError, OSError):
            continue  # reported by resolve_extra_paths's caller; one entry never stops the scan
        for path in matches:
            if path.suffix.lower() == ".md":
                add_link(str(path), "memory")  # resolved: a folder link on the way may leave
    return found
