"""The recall plugin's part of ``lifelong status``: what is indexed, when, what was skipped and
whether the index is behind the files."""

from __future__ import annotations

import datetime as dt

from lifelong.contracts import PluginContext, StatusReport

from .service import PLUGIN, index_for


def vectors_note(embedder: str | None, provider: str, model: object, indexed: bool) -> str:
    """What the vectors count is about: the embedder the index's vectors come from, or what is
    configured and why there are none."""
    if provider == "none":
        return "FTS-only: embedding.provider none"
    configured = f"embedding.provider {provider}" + (f", model {model}" if model else "")
    if embedder:
        return embedder
    if not indexed:
        return f"{configured} configured; nothing indexed yet"
    return f"none yet: {configured} configured"


def recall_status(ctx: PluginContext) -> StatusReport:
    idx = index_for(ctx)
    conn = ctx.store.conn
    files = dict(conn.execute("SELECT status, count(*) FROM files GROUP BY status").fetchall())
    skipped = conn.execute("SELECT path, error FROM files WHERE status = 'skipped' ORDER BY path").fetchall()
    noted = conn.execute(
        "SELECT path, error FROM files WHERE status = 'indexed' AND error IS NOT NULL ORDER BY path"
    ).fetchall()
    lexical = conn.execute("SELECT count(*) FROM chunks WHERE lexical_only").fetchone()[0]
    chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    vectors = conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]
    last = conn.execute("SELECT max(indexed_at) FROM files").fetchone()[0]
    tz = ctx.workspace.timezone
    last_text = dt.datetime.fromtimestamp(last, tz).isoformat(timespec="minutes") if last else None
    embedder = idx.meta("embedder")  # what the indexed vectors were made with
    emb_config = ctx.workspace.config.get("embedding") or {}
    configured = str(emb_config.get("provider", "local"))
    behind = idx.needs_sync()
    pending = idx.pending_vectors()
    units_pending = idx.pending_units()
    sentences = idx.pending_sentences()
    private = conn.execute("SELECT count(DISTINCT path) FROM chunks WHERE corpus = 'private'").fetchone()[0]
    indexed = int(files.get("indexed", 0))
    summary = [
        f"{indexed} files indexed{f' ({private} private)' if private else ''}, {chunks} chunks, "
        f"{vectors} vectors ({vectors_note(embedder, configured, emb_config.get('model'), bool(last))})",
        f"last index {last_text}" if last_text else "never indexed",
    ]
    if pending:
        summary.append(
            f"{pending} chunk(s) wait for vectors (searched by BM25 until `lifelong index` finishes)"
        )
    if units_pending:
        summary.append(
            f"{units_pending} unit(s) wait for their own vectors (scored by their chunk's vector meanwhile)"
        )
    if sentences:
        summary.append(
            f"{sentences} unit(s) wait for sentence vectors (scored by their own vector meanwhile)"
        )
    if skipped:
        summary.append(f"{len(skipped)} file(s) skipped (see warnings)")
    if lexical:
        summary.append(f"{lexical} chunk(s) indexed for their words only, no vectors (see warnings)")
    steps = []
    if pending and not behind:
        steps.append(f"lifelong index  ({pending} chunk(s) wait for vectors)")
    elif units_pending and not behind:
        steps.append(f"lifelong index  ({units_pending} unit(s) wait for vectors)")
    elif sentences and not behind:
        steps.append(f"lifelong index  ({sentences} unit(s) wait for sentence vectors)")
    if behind:
        auto = ctx.config(PLUGIN)["auto_sync"]
        steps.append(
            "lifelong index  (files changed since the last index"
            + ("; searches also sync first" if auto else "")
            + ")"
        )
    return StatusReport(
        plugin=PLUGIN,
        summary=tuple(summary),
        data={
            "files_indexed": indexed,
            "files_skipped": len(skipped),
            "chunks": chunks,
            "vectors": vectors,
            "vectors_pending": pending,
            "chunks_lexical_only": lexical,
            "units_pending": units_pending,
            "sentences_pending": sentences,
            "files_private": private,
            "embedder": embedder,
            "embedder_configured": configured,
            "last_index": last_text,
            "behind_files": behind,
        },
        warnings=tuple(f"skipped {path}: {error}" for path, error in skipped)
        + tuple(f"{path}: {error}" for path, error in noted),
        next_steps=tuple(steps),
    )
