"""The workspace on disk: where it is, its layout and config, and the only ways to write into it.

Layout (compatible with an OpenClaw workspace)::

    lifelong.yaml            config (optional for an existing OpenClaw workspace)
    MEMORY.md | memory.md    the durable record, loaded at every session start
    memory/YYYY-MM-DD.md     daily notes (also memory/YYYY-MM-DD-topic.md, memory/captured/)
    DREAMS.md                the dream diary (generated, managed sections only)
    wiki/                    the belief wiki
    .lifelong/               derived state: index.sqlite, logs/, journal/, locks/, reports/

Every durable write goes through :func:`atomic_write` (unique temp file, fsync, os.replace) under
:meth:`Workspace.lock`. Automatic text inside human files lives between fences::

    <!-- lifelong:NAME:start -->
    ...
    <!-- lifelong:NAME:end -->

and :func:`replace_region` never changes a byte outside them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import clock
from .errors import ConfigError, InputError, LockedError, WorkspaceError

CONFIG_NAME = "lifelong.yaml"
STATE_DIR = ".lifelong"
MAX_FILE_BYTES_DEFAULT = 8 * 1024 * 1024

DAILY_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:-[\w.-]+)?\.md$")

CORE_CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "timezone": {"type": ["string", "null"], "default": None},
        "max_file_bytes": {"type": "integer", "minimum": 1024, "default": MAX_FILE_BYTES_DEFAULT},
        # the rest of the section is the provider's: the plugin whose manifest serves
        # ``provider`` validates it against its own schema (``Host.embedding_config``)
        "embedding": {
            "type": "object",
            "properties": {"provider": {"type": "string", "minLength": 1, "default": "local"}},
            "default": {},
        },
        "llm": {
            "type": "object",
            "properties": {
                "model": {"type": ["string", "null"], "default": None},
                "timeout_s": {"type": "number", "minimum": 0.1, "maximum": 600, "default": 60},
            },
            "additionalProperties": False,
            "default": {},
        },
        "plugins": {"type": "object", "default": {}},
    },
    "additionalProperties": False,
}


# ---------------------------------------------------------------------------------------------
# Locating the workspace


def resolve_root(
    option: str | os.PathLike[str] | None, *, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path:
    """``--workspace``, then ``LIFELONG_WORKSPACE``, then the current directory if it holds
    lifelong.yaml (or looks like an OpenClaw workspace: MEMORY.md/memory.md plus memory/)."""
    env = os.environ if env is None else env
    if option:
        root = Path(option).expanduser()
        if not root.is_dir():
            raise WorkspaceError(f"workspace {str(root)!r} is not a directory (run `lifelong init {root}`)")
        return root.resolve()
    if env.get("LIFELONG_WORKSPACE"):
        root = Path(env["LIFELONG_WORKSPACE"]).expanduser()
        if not root.is_dir():
            raise WorkspaceError(f"LIFELONG_WORKSPACE={str(root)!r} is not a directory")
        return root.resolve()
    here = (cwd or Path.cwd()).resolve()
    if (here / CONFIG_NAME).is_file() or (
        ((here / "MEMORY.md").is_file() or (here / "memory.md").is_file()) and (here / "memory").is_dir()
    ):
        return here
    raise WorkspaceError(
        "no workspace: pass --workspace DIR, set LIFELONG_WORKSPACE, or run inside a folder with lifelong.yaml"
    )


# ---------------------------------------------------------------------------------------------
# Reading files safely


def read_text_file(path: Path, *, max_bytes: int = MAX_FILE_BYTES_DEFAULT, label: str | None = None) -> str:
    """Read a markdown file as UTF-8 text, refusing binary, non-UTF-8 and oversized files. Errors
    name the file by ``label`` (its workspace-relative path; default the file name), never by an
    absolute host path."""
    name = label or Path(path).name
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise WorkspaceError(f"{name}: no such file") from exc
    if size > max_bytes:
        raise InputError(f"{name}: {size} bytes is over the {max_bytes}-byte limit (max_file_bytes)")
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise InputError(f"{name}: binary file (contains NUL bytes), skipped")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 (byte {exc.start}), skipped") from exc
    return text[1:] if text.startswith("\ufeff") else text


# libyaml's safe loader when installed: the pure-Python one takes ~20 ms a page, which a
# 1,000-page wiki cannot afford on every compile and lint (same YAML, same errors)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def split_frontmatter(text: str) -> tuple[dict[str, Any], str, int]:
    """Split optional YAML frontmatter. Returns (data, body, body_first_line_offset).

    Malformed YAML raises InputError naming the problem; the text itself is never altered."""
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return {}, text, 0
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            raw = "".join(lines[1:i])
            try:
                data = yaml.load(raw, Loader=_YAML_LOADER) or {}  # noqa: S506 - a safe loader
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" at line {mark.line + 2}" if mark is not None else ""
                raise InputError(
                    f"malformed YAML frontmatter{where}: {getattr(exc, 'problem', exc)}"
                ) from exc
            if not isinstance(data, dict):
                raise InputError("malformed YAML frontmatter: expected a mapping of keys to values")
            return data, "".join(lines[i + 1 :]), i + 1
    return {}, text, 0


# ---------------------------------------------------------------------------------------------
# Writing


# what tempfile.mkstemp(prefix=".NAME.", suffix=".tmp") creates in atomic_write
_ATOMIC_TEMP = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
_swept_roots: set[Path] = set()


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` so that a reader (or a crash) sees the old or the new file,
    never a mix: unique temp file in the same directory, fsync, os.replace, fsync the directory."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    with contextlib.suppress(FileNotFoundError):
        mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


# ---------------------------------------------------------------------------------------------
# Managed regions


def _fence(name: str, which: str) -> str:
    return f"<!-- lifelong:{name}:{which} -->"


_FENCE_RE = re.compile(r"<!-- lifelong:([\w.:-]+?):(start|end) -->")


@dataclass(frozen=True)
class Region:
    name: str
    start: int  # offset of the start fence
    body_start: int  # offset just after the start fence line
    body_end: int  # offset of the end fence
    end: int  # offset just after the end fence (and its newline)

    def body(self, text: str) -> str:
        return text[self.body_start : self.body_end]


def find_regions(text: str) -> list[Region]:
    """All managed regions, in order. Unbalanced or nested fences raise InputError (never guess)."""
    regions: list[Region] = []
    open_name: str | None = None
    open_at = open_body = 0
    for m in _FENCE_RE.finditer(text):
        name, which = m.group(1), m.group(2)
        if which == "start":
            if open_name is not None:
                raise InputError(f"managed region {open_name!r} is not closed before {name!r} starts")
            open_name, open_at = name, m.start()
            open_body = m.end() + (1 if text[m.end() : m.end() + 1] == "\n" else 0)
        else:
            if open_name != name:
                raise InputError(f"managed region end for {name!r} without a matching start")
            end = m.end() + (1 if text[m.end() : m.end() + 1] == "\n" else 0)
            regions.append(Region(name, open_at, open_body, m.start(), end))
            open_name = None
    if open_name is not None:
        raise InputError(f"managed region {open_name!r} has a start fence but no end fence")
    names = [r.name for r in regions]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise InputError(f"managed region {sorted(dupes)[0]!r} appears more than once")
    return regions


def read_region(text: str, name: str) -> str | None:
    for region in find_regions(text):
        if region.name == name:
            return region.body(text)
    return None


def replace_region(text: str, name: str, body: str) -> str:
    """Return ``text`` with region ``name`` holding ``body``; appended at the end when missing.
    Every byte outside the region is kept as it was."""
    if body and not body.endswith("\n"):
        body += "\n"
    for region in find_regions(text):
        if region.name == name:
            return text[: region.body_start] + body + text[region.body_end :]
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}{_fence(name, 'start')}\n{body}{_fence(name, 'end')}\n"


def append_text(current: str, addition: str) -> str:
    """``current`` with ``addition`` appended on lines of its own (append-only: every byte of
    ``current`` is kept; a missing final newline is added before the addition)."""
    if not addition:
        return current
    if not addition.endswith("\n"):
        addition += "\n"
    if current and not current.endswith(("\n", "\r")):
        current += "\n"
    return current + addition


def remove_region(text: str, name: str) -> str:
    """Return ``text`` without region ``name`` (fences included); unchanged when absent."""
    for region in find_regions(text):
        if region.name == name:
            return text[: region.start] + text[region.end :]
    return text


# ---------------------------------------------------------------------------------------------
# The workspace


def daily_date(relpath: str) -> dt.date | None:
    """The date of a daily file (memory/2026-05-01.md or memory/2026-05-01-topic.md), else None."""
    parts = relpath.replace("\\", "/").split("/")
    if len(parts) < 2 or parts[0] != "memory":
        return None
    m = DAILY_RE.match(parts[-1])
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


class Workspace:
    """A workspace folder: layout, config, safe paths, locks."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise WorkspaceError(f"workspace {str(self.root)!r} is not a directory")
        self._config: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # layout ---------------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @property
    def memory_file(self) -> Path:
        """MEMORY.md, or memory.md when only that exists (OpenClaw accepts both)."""
        upper, lower = self.root / "MEMORY.md", self.root / "memory.md"
        if upper.exists():
            return upper
        names = {p.name for p in self.root.iterdir()} if self.root.exists() else set()
        return lower if "memory.md" in names else upper

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def dreams_file(self) -> Path:
        """The dream diary: DREAMS.md, or a dreams.md that is already a dream diary (it holds a
        ``lifelong:dream-`` entry or OpenClaw's ``openclaw:dreaming:diary`` block; OpenClaw reads
        either name). A dreams.md of the user's own is
        never written into: the diary goes to DREAMS.md beside it, or, where the file system does
        not tell the two names apart, to DREAMS.lifelong.md."""
        upper, lower = self.root / "DREAMS.md", self.root / "dreams.md"
        names = set(os.listdir(self.root)) if self.root.is_dir() else set()
        if "DREAMS.md" in names or "dreams.md" not in names:
            return upper
        try:
            text = lower.read_text("utf-8", errors="replace")
        except OSError:
            text = ""
        ours = "<!-- lifelong:dream-" in text or "<!-- openclaw:dreaming:diary" in text
        if ours:
            return lower
        return self.root / "DREAMS.lifelong.md" if upper.exists() else upper

    @property
    def wiki_dir(self) -> Path:
        return self.root / "wiki"

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.sqlite"

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def reports_dir(self) -> Path:
        return self.state_dir / "reports"

    def daily_path(self, day: dt.date) -> Path:
        return self.memory_dir / f"{day.isoformat()}.md"

    def ensure_state(self) -> None:
        for d in (self.state_dir, self.logs_dir, self.state_dir / "locks"):
            d.mkdir(parents=True, exist_ok=True)

    # config ---------------------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        if self._config is None:
            self._config = load_config(self.config_path)
        return self._config

    def plugin_config(self, plugin_id: str) -> dict[str, Any]:
        value = self.config.get("plugins", {}).get(plugin_id) or {}
        if not isinstance(value, dict):
            raise ConfigError(f"plugins.{plugin_id}: expected a mapping, got {value!r}")
        return value

    @property
    def timezone(self) -> dt.tzinfo:
        return clock.zone(self.config.get("timezone"))

    @property
    def max_file_bytes(self) -> int:
        return int(self.config.get("max_file_bytes", MAX_FILE_BYTES_DEFAULT))

    def now(self) -> dt.datetime:
        """Now, in the workspace time zone."""
        return clock.now(self.timezone)

    # paths ----------------------------------------------------------------------------------
    def resolve(self, relpath: str | os.PathLike[str]) -> Path:
        """An absolute path inside the workspace, or WorkspaceError. Symlinks are resolved, so
        a link that leaves the workspace is refused too."""
        raw = Path(relpath)
        shown = "an absolute path" if raw.is_absolute() else f"path {str(relpath)!r}"
        if "\x00" in str(relpath):
            raise WorkspaceError(f"{shown.replace(chr(0), '?')} contains a NUL byte")
        candidate = raw if raw.is_absolute() else self.root / raw
        try:
            resolved = candidate.resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop, or a name the OS refuses
            raise WorkspaceError(f"{shown} cannot be resolved (a symlink loop?)") from exc
        if resolved != self.root and self.root not in resolved.parents:
            raise WorkspaceError(f"{shown} is outside the workspace")
        return resolved

    def relpath(self, path: Path) -> str:
        return Path(path).resolve().relative_to(self.root).as_posix()

    def read_text(self, relpath: str | os.PathLike[str]) -> str:
        path = self.resolve(relpath)
        return read_text_file(path, max_bytes=self.max_file_bytes, label=self.relpath(path))

    # locks ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, name: str = "write", timeout: float = 10.0) -> Iterator[None]:
        """A cross-process lock (file lock under .lifelong/locks/). LockedError on timeout."""
        import filelock  # imported here: a CLI call that writes nothing never pays for it

        self.ensure_state()
        lock = filelock.FileLock(str(self.state_dir / "locks" / f"{name}.lock"))
        try:
            lock.acquire(timeout=timeout)
        except filelock.Timeout as exc:
            raise LockedError(f"another lifelong process holds the {name!r} lock on {self.root}") from exc
        try:
            if name == "write" and self.root not in _swept_roots:
                # every automatic write happens under this lock, so a temp file of ours found now
                # was left by a writer that was killed: sweep them once per process
                _swept_roots.add(self.root)
                self.remove_stale_temp_files()
            yield
        finally:
            lock.release()

    def sweep_temp_files(self, timeout: float = 10.0) -> None:
        """Remove the temp files a killed writer left, if this process has not yet: taking the
        ``write`` lock sweeps them the first time (see :meth:`lock`). For a job that must start
        clean before it writes anything (a dream, a rollback)."""
        with self.lock("write", timeout=timeout):
            return

    def remove_stale_temp_files(self) -> list[str]:
        """Delete the temp files :func:`atomic_write` leaves when its process is killed between
        creating and renaming them (``.NAME.XXXXXXXX.tmp`` beside NAME) in the folders the suite
        writes: the root, ``memory/``, ``wiki/``, ``.lifelong/reports/`` and ``.lifelong/cache/``
        at every depth, and ``.lifelong/`` (journals included). Call it only while holding the ``write`` lock. Returns what it removed,
        workspace-relative."""
        folders = [self.root, self.state_dir]
        for parent in (self.state_dir / "journal", self.state_dir):
            with contextlib.suppress(OSError):
                folders += [Path(e.path) for e in os.scandir(parent) if e.is_dir(follow_symlinks=False)]
        # every level of the folders the suite writes below the first: memory/captured/<day>/,
        # .lifelong/reports/<run>/, the compaction cache's session folders, wiki/<kind>/
        for tree in (self.memory_dir, self.wiki_dir, self.state_dir / "reports", self.state_dir / "cache"):
            with contextlib.suppress(OSError):
                folders += [Path(d) for d, _, _ in os.walk(tree)]
        removed = []
        for folder in dict.fromkeys(folders):
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if _ATOMIC_TEMP.match(entry.name) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
                        removed.append(Path(entry.path).relative_to(self.root).as_posix())
        return removed


def load_config(path: Path) -> dict[str, Any]:
    """Load and validate lifelong.yaml (core keys). A missing file means all defaults."""
    from .schema import apply_defaults, validate

    raw: Any = {}
    if path.exists():
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark is not None else ""
            raise ConfigError(f"{path.name}{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path.name}: not UTF-8") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path.name}: expected a mapping at the top level")
    validate(raw, CORE_CONFIG_SCHEMA, where="")
    if raw.get("timezone"):
        clock.zone(raw["timezone"])  # an unknown zone is refused when the config is read
    return apply_defaults(raw, CORE_CONFIG_SCHEMA)


WORKSPACE_FOLDERS = ("memory", "wiki")


def template_files(timezone: str) -> dict[str, str]:
    """What ``lifelong init`` lays down, workspace-relative path -> text: every file of the
    top-level ``workspace_template/`` folder (package data in a wheel), rendered with jinja2
    (variable ``timezone``)."""
    import jinja2

    from .prompts import shipped_dir

    folder = shipped_dir("workspace_template")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return {rel: env.get_template(rel).render(timezone=timezone) for rel in files}


def init_workspace(root: Path, *, timezone: str | None = None) -> tuple[list[str], list[str]]:
    """Create an empty, valid workspace in ``root``: the files of ``workspace_template/``
    (MEMORY.md, a short header and a comment on how its fenced sections work; lifelong.yaml,
    commented, with ``timezone``, default this machine's zone; lifelong-agent.md, the agent
    instructions snippet), and the folders ``memory/`` and ``wiki/``. Nothing that
    exists is overwritten; an OpenClaw workspace's lowercase memory.md counts as MEMORY.md.
    Returns (created, kept) workspace-relative paths."""
    root = Path(root).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    kept: list[str] = []
    if timezone is None:
        timezone = clock.system_timezone_name()
    clock.zone(timezone)  # an unknown zone is refused before anything is written
    for rel, text in template_files(timezone).items():
        target = root / rel
        if target.exists() or (rel == "MEMORY.md" and (root / "memory.md").exists()):
            kept.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, text)
        created.append(rel)
    for folder in WORKSPACE_FOLDERS:
        if (root / folder).is_dir():
            kept.append(f"{folder}/")
        else:
            (root / folder).mkdir()
            created.append(f"{folder}/")
    return created, kept
