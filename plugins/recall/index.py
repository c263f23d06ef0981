"""Keeping the index equal to the files: scan, plan (pure), apply.

``scan.scan_workspace`` stats the source files (cheap), ``scan.plan_changes`` decides new /
modified / deleted / unchanged by checksum, and ``RecallIndex.sync`` applies the plan: only changed
files are re-chunked (``writer.FileWriter``), in short write transactions (each file whole), and then ``vector_store.py``
embeds, outside any transaction, only the texts not already in the embedding cache (keyed by
provider, model and content hash). A rename is a delete plus a new file whose chunks all hit the
cache. A killed sync keeps what it committed; the next one re-chunks the files it had not reached
and embeds what still lacks a vector.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lifelong.contracts import Embedder, PluginContext
from lifelong.errors import LockedError
from lifelong.lazy import numpy as np
from lifelong.workspace import Workspace

from .scan import (
    ChangePlan,
    FileState,
    ScannedFile,
    plan_changes,
    resolve_extra_paths,
    scan_workspace,
    sha256_file,
)
from .vector_store import PENDING_KEY, PendingChunk, PendingUnit, VectorStore
from .vectors import CodeMatrix
from .writer import FileWriter, sentence_vectors_on

SENTENCES_KEY = "sentence_vectors"  # "1" once sentence vectors are wanted (see _mark_sentences_due)
EMBED_LOCK_WAIT_S = 3600.0  # how long `lifelong index` waits for another process's embedding
TEXT_BATCH_S = 1.0  # a sync's text side commits after holding the write lock about this long
CODE_LOG_KEEP = 200_000  # code_log rows kept: a process further behind reloads every code


@dataclass
class SyncReport:
    plan: ChangePlan
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded: int = 0  # chunk texts embedded
    cache_hits: int = 0  # chunk texts found in the embedding cache
    units_embedded: int = 0  # unit texts embedded (a unit equal to its chunk's text is not)
    sentences_embedded: int = 0  # the units' sentence texts embedded
    embed_seconds: dict[str, float] = field(default_factory=dict)  # time in the model by pass
    skipped: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)  # indexed, with a caveat (path -> what)
    elapsed_ms: float = 0.0
    vectors: str = "ok"

    def as_json(self) -> dict[str, Any]:
        return {
            "changes": self.plan.as_json(),
            "chunks_added": self.chunks_added,
            "chunks_removed": self.chunks_removed,
            "embedded": self.embedded,
            "embedding_cache_hits": self.cache_hits,
            "units_embedded": self.units_embedded,
            "sentences_embedded": self.sentences_embedded,
            "embed_seconds": {k: round(v, 2) for k, v in self.embed_seconds.items()},
            "skipped": self.skipped,
            "notes": self.notes,
            "elapsed_ms": round(self.elapsed_ms, 1),
            "vectors": self.vectors,
        }


class RecallIndex:
    """The recall index of one workspace, over one open store."""

    def __init__(self, ctx: PluginContext, config: dict[str, Any]):
        self.ctx = ctx
        self.ws: Workspace = ctx.workspace
        self.store = ctx.store
        self.config = config
        self._embedder_failed: str | None = None
        self.writer = FileWriter(ctx, config)
        self._stats_cache: tuple[tuple[int, int], dict[str, tuple[float, int, str, bool]]] | None = None
        self.vectors = VectorStore(ctx.store, config)
        self.total_docs: tuple[str, int] | None = None  # (generation, chunk count) for the FTS plan

    # meta -----------------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self.store.execute("SELECT value FROM index_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.store.execute("DELETE FROM index_meta WHERE key = ?", (key,))
        else:
            self.store.execute("INSERT OR REPLACE INTO index_meta(key, value) VALUES (?, ?)", (key, value))

    @property
    def embedder(self) -> Embedder | None:
        return None if self._embedder_failed else self.ctx.embedder

    def embedder_id(self, embedder: Embedder | None) -> str:
        return f"{embedder.provider}:{embedder.model}" if embedder else "none"

    def _warn(self, message: str | None) -> None:
        self._set_warnings("embedding:", [f"embedding: {message}"] if message else [])

    def _set_warnings(self, prefix: str, messages: list[str]) -> None:
        """Replace the warnings starting with ``prefix`` in .lifelong/warnings.json (what
        ``lifelong status`` shows) with ``messages``; written only when they change."""
        path = self.ws.state_dir / "warnings.json"
        from lifelong.workspace import atomic_write

        old = json.loads(path.read_text("utf-8")) if path.exists() else []
        current = [w for w in old if not w.startswith(prefix)] + messages
        if current != old and (current or path.exists()):
            atomic_write(path, json.dumps(current, indent=1))

    # scanning -------------------------------------------------------------------------------
    def _file_rows(self, columns: str, paths: list[str] | None) -> Any:
        """``columns`` of the files table's rows: every one, or those of ``paths`` it holds."""
        sql = f"SELECT {columns} FROM files"
        if paths is None:
            return self.store.conn.execute(sql)
        return self.store.conn.execute(
            f"{sql} WHERE path IN (SELECT value FROM json_each(?))", [json.dumps(paths)]
        )

    def indexed_files(self, paths: list[str] | None = None) -> dict[str, FileState]:
        """The files table's rows: every one, or those of ``paths`` it holds."""
        return {r[0]: FileState(*r[1:]) for r in self._file_rows("path, mtime, size, sha256, corpus", paths)}

    def disk_state(
        self, indexed: dict[str, FileState] | None = None, scanned: dict[str, ScannedFile] | None = None
    ) -> tuple[dict[str, FileState], dict[str, str]]:
        """What is on disk: relpath -> FileState (the checksum is read only for a file whose
        stat differs from the index), and relpath -> absolute path. ``scanned``: a scan just
        made (a file changed since is caught by the next check, its stat no longer matching)."""
        indexed = self.indexed_files() if indexed is None else indexed
        if scanned is None:
            scanned = self.scan()
        disk: dict[str, FileState] = {}
        paths: dict[str, str] = {}
        for rel, found in scanned.items():
            prev = indexed.get(rel)
            if prev is not None and prev.mtime == found.mtime and prev.size == found.size:
                disk[rel] = prev if prev.corpus == found.corpus else prev._replace(corpus=found.corpus)
            else:
                try:
                    sha = sha256_file(Path(found.path))
                except OSError:
                    continue  # vanished since the scan
                disk[rel] = FileState(found.mtime, found.size, sha, found.corpus)
            paths[rel] = found.path
        return disk, paths

    def _files_version(self) -> tuple[int, int]:
        """(``PRAGMA data_version``: moves when another connection commits, the files table's
        change counter: moves on any change to it, this connection's too)."""
        conn = self.store.conn
        return conn.execute("PRAGMA data_version").fetchone()[0], conn.execute(
            "SELECT n FROM files_version WHERE id = 1"
        ).fetchone()[0]

    def _indexed_stats(self) -> dict[str, tuple[float, int, str, bool]]:
        """path -> (mtime, size, corpus, checksum known) of the files table, cached until the
        table changes (:meth:`_files_version`); a sync patches the cache after its own writes
        (:meth:`_patch_stats`), so the next check does not read ten thousand rows again."""
        version = self._files_version()
        cached = self._stats_cache
        if cached is None or cached[0] != version:
            cached = self._stats_cache = (version, self._stat_rows())
        return cached[1]

    def _stat_rows(self, paths: list[str] | None = None) -> dict[str, tuple[float, int, str, bool]]:
        """The cached stats of every file row, or of those of ``paths``."""
        rows = self._file_rows("path, mtime, size, corpus, sha256 IS NOT NULL", paths)
        return {r[0]: (r[1], r[2], r[3], bool(r[4])) for r in rows}

    def _patch_stats(self, before: tuple[int, int] | None, paths: Iterable[str] | None) -> None:
        """After this sync's own writes to the files table: re-read the rows of ``paths`` into
        the cache (None: forget it), unless another connection committed since the cache was
        read (``before``, its version), which also forgets it."""
        cached = self._stats_cache
        if cached is None or paths is None or before is None or cached[0] != before:
            self._stats_cache = None
            return
        version = self._files_version()
        if version[0] != before[0]:
            self._stats_cache = None  # another process wrote meanwhile: read it all next time
            return
        stats = cached[1]
        paths = list(paths)
        for rel in paths:
            stats.pop(rel, None)
        stats.update(self._stat_rows(paths))
        self._stats_cache = (version, stats)

    def _plan_from_stats(
        self, scanned: dict[str, ScannedFile]
    ) -> tuple[ChangePlan, dict[str, FileState], dict[str, str], dict[str, FileState]]:
        """The plan of a sync that is not forced, reading the index's full rows (and the disk's
        checksums) only for files whose path, mtime, size or corpus differ: on a large workspace
        a sync after one appended line compares ten thousand stats, not ten thousand rows."""
        stats = self._indexed_stats()
        # a row without a checksum is re-read whatever its stat (a migration clears them all to
        # have every file indexed again by the next full sync)
        suspects = [rel for rel, f in scanned.items() if stats.get(rel) != (f.mtime, f.size, f.corpus, True)]
        gone = [rel for rel in stats if rel not in scanned]
        indexed = self.indexed_files([*suspects, *gone])
        disk, paths = self.disk_state(indexed, {rel: scanned[rel] for rel in suspects})
        part = plan_changes(disk, indexed)
        same = set(scanned) - set(suspects)
        unchanged = tuple(sorted(same.union(part.unchanged)))
        return ChangePlan(part.new, part.modified, part.deleted, unchanged), disk, paths, indexed

    def scan(self) -> dict[str, ScannedFile]:
        return scan_workspace(self.ws, self.config.get("extra_paths", []))

    def needs_sync(self, scanned: dict[str, ScannedFile] | None = None, *, backlog: bool = False) -> bool:
        """Cheap check: does any source file differ from the index by path, mtime or size, or
        the model from the one the vectors are of? ``backlog``: also when chunks of an
        interrupted or paused sync still wait for vectors."""
        indexed = self._indexed_stats()
        scanned = self.scan() if scanned is None else scanned
        if len(scanned) != len(indexed):
            return True
        for rel, found in scanned.items():
            if indexed.get(rel, ())[:2] != (found.mtime, found.size):
                return True
        if self.embedder is None:
            return False
        if self.meta("embedder") != self.embedder_id(self.embedder):
            return True
        return backlog and (
            self.meta(PENDING_KEY) is not None or self.meta(SENTENCES_KEY) != self._sentences_wanted()
        )

    def sync_if_changed(self, *, backlog: bool = False) -> SyncReport | None:
        """Sync when something changed; one scan serves both the check and the sync. The
        auto-sync before a search (``backlog`` False) embeds only the chunks it re-chunked,
        for at most ``auto_sync_embed_budget_s``, and never waits for another process's
        embedding (``memory_index`` too: the supersede gate and the flush call it on the way of
        a reply); the watcher (``backlog`` True) also finishes what an interrupted sync left."""
        scanned = self.scan()
        if not self.needs_sync(scanned, backlog=backlog):
            return None
        if backlog:
            return self.sync(scanned=scanned)
        return self.sync(
            scanned=scanned, embed_budget_s=self.config["auto_sync_embed_budget_s"], backlog=False
        )

    # syncing --------------------------------------------------------------------------------
    def sync(
        self,
        *,
        force: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
        scanned: dict[str, ScannedFile] | None = None,
        embed_budget_s: float | None = None,
        backlog: bool = True,
    ) -> SyncReport:
        """Apply the plan in two steps. Text: chunks, units and FTS rows, committed every
        ``TEXT_BATCH_S`` seconds (each file whole), so nobody waits long for the write lock and a
        killed sync keeps what it committed. Vectors: :meth:`VectorStore.embed_pending` runs the
        model outside any transaction and stores batch by batch. ``embed_budget_s``: stop
        embedding after about that long (the rest stays pending for the next sync).
        ``backlog`` (default): also embed every chunk an interrupted sync left without a vector,
        waiting for another process that is embedding; False (a search's auto-sync): only this
        sync's own chunks, and only if no other process is embedding."""
        started = time.monotonic()
        _, problems = resolve_extra_paths(self.ws.root, self.config.get("extra_paths", []))
        self._set_warnings("extra_paths:", problems)
        with self.store.lock:
            if force:
                indexed = self.indexed_files()
                disk, paths = self.disk_state(indexed, scanned)
                plan = plan_changes(disk, indexed, force=True)
            else:
                plan, disk, paths, indexed = self._plan_from_stats(
                    self.scan() if scanned is None else scanned
                )
            cache_version = None if force or self._stats_cache is None else self._stats_cache[0]
            embedder = self.embedder
            # vectors of another provider/model (or none yet) are rebuilt for every chunk
            stale_vectors = embedder is not None and self.meta("embedder") != self.embedder_id(embedder)
            if embedder is not None:
                self._mark_sentences_due(backlog=not stale_vectors)
            resume = embedder is not None and not stale_vectors and self.meta(PENDING_KEY) is not None
        report = SyncReport(plan)
        try:
            pending, unit_pending, token = self._sync_text(
                plan, disk, indexed, paths, report, progress, embedder, reset=stale_vectors, force=force
            )
        except BaseException:
            self._stats_cache = None
            raise
        # a forced sync rewrote every row: read them again when next needed
        self._patch_stats(cache_version, None if force else [*plan.deleted, *disk])
        if not self.config["unit_vectors"]:
            unit_pending = []
        if embedder is None:
            if self._embedder_failed is None:
                report.vectors = "none (FTS-only)"
            else:
                report.vectors = f"failed ({self._embedder_failed}); search is FTS-only for new text"
        elif pending or unit_pending or token is not None or resume or stale_vectors or force:
            everything = stale_vectors or force or (resume and backlog)
            # a pass over its own chunks only never clears the mark of an earlier sync's backlog
            clear = token if everything or not resume else None
            self._embed(
                embedder,
                pending,
                unit_pending,
                clear,
                report,
                progress,
                embed_budget_s,
                everything,
                wait=backlog,
            )
        report.elapsed_ms = (time.monotonic() - started) * 1000
        if plan.changed:
            self.ctx.hook("on_files_changed", ctx=self.ctx, changes=plan)
        return report

    def _sync_text(
        self,
        plan: ChangePlan,
        disk: dict[str, FileState],
        indexed: dict[str, FileState],
        paths: dict[str, str],
        report: SyncReport,
        progress: Callable[[str, int, int], None] | None,
        embedder: Embedder | None,
        *,
        reset: bool,
        force: bool = False,
    ) -> tuple[list[PendingChunk], list[PendingUnit], str | None]:
        """The text side of a sync, in write transactions of about ``TEXT_BATCH_S`` each. Returns
        the chunks and units it added (they lack vectors) and the pending mark's token.
        ``reset``: the vectors are of another model, forget them all first. ``force`` keeps the
        vectors (a file's go with its old chunks; the re-chunked ones get theirs from the cache)
        so searches keep their vector leg during a forced reindex, and drops any vector whose
        chunk is gone at the end."""
        conn = self.store.conn
        pending: list[PendingChunk] = []
        unit_pending: list[PendingUnit] = []
        token: str | None = None
        changed = list(plan.new) + list(plan.modified)
        steps: list[tuple[str, str]] = [("delete", r) for r in plan.deleted] + [("index", r) for r in changed]
        first, i = True, 0
        while first or i < len(steps):
            with self.store.write():
                began = time.monotonic()
                if first:
                    if reset:
                        self.vectors.reset()
                    elif force:  # nearly every code changes: readers reload rather than patch
                        self.vectors.new_epoch()
                    if embedder is not None:
                        self.set_meta("embedder", self.embedder_id(embedder))
                    elif self._embedder_failed is None:  # FTS-only by configuration
                        self.set_meta("embedder", None)
                added_here, done_here = False, 0
                while i < len(steps) and (done_here == 0 or time.monotonic() - began < TEXT_BATCH_S):
                    done_here += 1
                    action, rel = steps[i]
                    i += 1
                    if action == "delete":
                        report.chunks_removed += self._delete_file(rel)
                        continue
                    if progress:
                        progress("chunk", i - len(plan.deleted), len(changed))
                    report.chunks_removed += self._delete_file(rel)
                    added, to_embed, units_to_embed, error, skipped = self._index_file(
                        rel, Path(paths[rel]), disk[rel]
                    )
                    report.chunks_added += added
                    pending.extend(to_embed)
                    unit_pending.extend(units_to_embed)
                    added_here = added_here or bool(to_embed)
                    if error:
                        (report.skipped if skipped else report.notes)[rel] = error
                if i >= len(steps):
                    for rel in plan.unchanged:  # same bytes, new stat (a touch, a copy): remember it
                        if rel not in disk or rel not in indexed:
                            continue  # its stat matched the index: nothing to remember
                        st, prev = disk[rel], indexed[rel]
                        if (st.mtime, st.size) != (prev.mtime, prev.size):
                            conn.execute(
                                "UPDATE files SET mtime = ?, size = ? WHERE path = ?",
                                (st.mtime, st.size, rel),
                            )
                    conn.execute(  # searching processes patch from the recent log, or reload
                        "DELETE FROM code_log WHERE seq <= (SELECT max(seq) FROM code_log) - ?",
                        (CODE_LOG_KEEP,),
                    )
                    if force:
                        self.vectors.drop_orphans()
                # chunks without vectors are marked for the next sync (also when the model
                # failed earlier in this process: another process may have it)
                wants_vectors = embedder is not None or self._embedder_failed is not None
                if wants_vectors and (added_here or (first and reset)):
                    token = self.vectors.mark_pending()
                if plan.changed or reset:
                    self.set_meta("generation", uuid.uuid4().hex)
            first = False
        return pending, unit_pending, token

    def _sentence_vectors(self) -> bool:
        return sentence_vectors_on(self.config)

    def _sentences_wanted(self) -> str | None:
        """The ``sentence_vectors`` mark this index should hold under its config."""
        return "1" if self._sentence_vectors() else None

    def _mark_sentences_due(self, backlog: bool) -> None:
        """Under the store lock: when sentence vectors were just turned on (or this index
        predates them) and ``backlog`` (its units have vectors to keep), mark the vectors
        pending, so the next full sync embeds the sentences of the units the index already
        holds (a search's auto-sync leaves that backlog alone)."""
        want = self._sentences_wanted()
        if self.meta(SENTENCES_KEY) == want:
            return
        with self.store.write():
            self.set_meta(SENTENCES_KEY, want)
            if want and backlog:
                self.vectors.mark_pending()

    def _embed(
        self,
        embedder: Embedder,
        pending: list[PendingChunk],
        unit_pending: list[PendingUnit],
        token: str | None,
        report: SyncReport,
        progress: Callable[[str, int, int], None] | None,
        budget_s: float | None,
        everything: bool,
        *,
        wait: bool = True,
    ) -> None:
        """Embed outside the write lock; one process at a time per workspace (another sync
        that finds the lock taken leaves the work to the one holding it). ``everything``: embed
        every chunk and unit without a vector (a resumed, re-keyed or forced sync), not only
        this sync's own. ``wait``: for another process's embedding to end (else leave it)."""
        try:
            lock = self.ws.lock("embedding", timeout=EMBED_LOCK_WAIT_S if wait else 0)
            lock.__enter__()
        except LockedError:
            report.vectors = "another process is embedding; its chunks are searchable by BM25 meanwhile"
            return
        try:
            if everything:
                with self.store.lock:
                    pending, unit_pending = self.vectors.missing(
                        self.config["unit_vectors"], self._sentence_vectors()
                    )
                    token = self.meta(PENDING_KEY)
            out = self.vectors.embed_pending(
                embedder,
                pending,
                unit_pending,
                token=token,
                progress=progress,
                budget_s=budget_s,
                log=lambda m: self.ctx.log("recall", m),
            )
        finally:
            lock.__exit__(None, None, None)
        report.embedded += out.embedded
        report.units_embedded += out.units_embedded
        report.sentences_embedded += out.sentences_embedded
        report.cache_hits += out.cache_hits
        for kind, seconds in out.seconds.items():
            report.embed_seconds[kind] = report.embed_seconds.get(kind, 0.0) + seconds
        if out.failed:
            self._embedder_failed = out.failed
            report.vectors = f"failed ({out.failed}); search is FTS-only until the next successful index"
            self._warn(out.failed)
            self.ctx.log("recall", f"embedding failed: {out.failed}")
            return
        self._warn(embedder.status_warning())
        if out.left:
            report.vectors = f"partial: {out.left} chunk(s) wait for vectors (`lifelong index` finishes them)"
        elif out.units_left:
            report.vectors = (
                f"partial: every chunk has its vector; {out.units_left} unit(s) wait for their own or "
                "their sentences' vectors (`lifelong index` finishes them)"
            )

    def _delete_file(self, rel: str) -> int:
        return self.writer.delete_file(rel)

    def _index_file(
        self, rel: str, path: Path, state: FileState
    ) -> tuple[int, list[PendingChunk], list[PendingUnit], str | None, bool]:
        return self.writer.index_file(rel, path, state)

    def vector_count(self) -> int:
        return self.vectors.vector_count()

    def mean_vector(self) -> np.ndarray | None:
        return self.vectors.mean_vector()

    def centroid(self) -> np.ndarray | None:
        return self.vectors.centroid()

    def code_matrix(self) -> CodeMatrix:
        return self.vectors.code_matrix()

    def pending_sentences(self) -> int:
        """Units with a vector but no sentence vectors yet, when the index wants them (an index
        from before them, or the option just turned on; ``lifelong index`` adds them)."""
        if self.embedder is None or not self._sentence_vectors():
            return 0
        return self.store.conn.execute(
            "SELECT count(*) FROM unit_vectors WHERE sentences IS NULL"
        ).fetchone()[0]

    def pending_units(self) -> int:
        """Units without their own vector while a sync's embedding is unfinished (0 when none
        is): an embedding pass stores every chunk's vector before any unit's, so a paused or
        killed one leaves units scored by their chunk's cosine until ``lifelong index``."""
        if not self.config["unit_vectors"] or self.meta(PENDING_KEY) is None:
            return 0
        return self.store.conn.execute(
            "SELECT count(*) FROM units u JOIN chunks c ON c.id = u.chunk_id"
            " LEFT JOIN unit_vectors v ON v.unit_id = u.id WHERE v.unit_id IS NULL AND NOT c.lexical_only"
        ).fetchone()[0]

    def pending_vectors(self) -> int:
        """Chunks without a vector while a sync's embedding is unfinished (0 when none is)."""
        if self.meta(PENDING_KEY) is None:
            return 0
        conn = self.store.conn
        return max(
            0,
            conn.execute("SELECT count(*) FROM chunks WHERE NOT lexical_only").fetchone()[0]
            - conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0],
        )
