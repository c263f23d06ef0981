"""The in-memory code matrix: patched with logged changes it must answer exactly as a matrix
loaded from scratch, in this process and after another connection's sync."""

from __future__ import annotations

import datetime as dt

import numpy as np
from lifelong_plugins.recall import service
from lifelong_plugins.recall.vectors import CODES, CodeMatrix, hamming, pack_codes

from lifelong import clock
from lifelong.host import Host
from lifelong.workspace import Workspace

NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=dt.UTC)


def _matrix(ids: np.ndarray, vecs: np.ndarray) -> CodeMatrix:
    order = np.argsort(ids)
    return CodeMatrix("e", 0, ids[order], np.ascontiguousarray(pack_codes(vecs[order], None).T))


def test_patched_matrix_answers_like_a_fresh_one() -> None:
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(3000, 384)).astype(np.float32)
    state = {i: vecs[i] for i in range(3000)}
    matrix = _matrix(np.arange(3000, dtype=np.int64), vecs)
    for step in range(6):
        removed = rng.choice(sorted(state), size=40, replace=False).astype(np.int64)
        for cid in removed:
            del state[int(cid)]
        replaced = rng.choice(sorted(state), size=10, replace=False).astype(np.int64)
        new_ids = np.concatenate([replaced, np.arange(10_000 + step * 30, 10_000 + step * 30 + 30)])
        new_vecs = rng.normal(size=(len(new_ids), 384)).astype(np.float32)
        for cid, v in zip(new_ids, new_vecs, strict=True):
            state[int(cid)] = v
        order = np.argsort(new_ids)
        matrix = matrix.patched(
            step + 1,
            removed,
            new_ids[order],
            np.ascontiguousarray(pack_codes(new_vecs[order], None).T),
        )
        fresh = _matrix(np.array(sorted(state), dtype=np.int64), np.stack([state[i] for i in sorted(state)]))
        assert matrix.size == len(state) == fresh.size
        assert sorted(matrix.all_ids().tolist()) == sorted(state)
        for _ in range(5):
            q = pack_codes(rng.normal(size=(1, 384)).astype(np.float32), None)[0]
            got, want = matrix.nearest(q, 50), fresh.nearest(q, 50)
            assert len(got) == 50 and not set(got.tolist()) - set(state)
            # same distances (ties may pick different ids)
            dist = dict(zip(fresh.ids.tolist(), hamming(fresh.words, q).tolist(), strict=True))
            assert sorted(dist[i] for i in got.tolist()) == sorted(dist[i] for i in want.tolist())
    assert matrix.tail_ids.size or matrix.dead.size  # still a patched matrix, not compacted


def test_compaction_keeps_every_live_code() -> None:
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(10000, 384)).astype(np.float32)
    matrix = _matrix(np.arange(10000, dtype=np.int64), vecs)
    removed = np.arange(0, 10000, 2, dtype=np.int64)  # half: over the compaction threshold
    patched = matrix.patched(1, removed, np.zeros(0, dtype=np.int64), np.zeros((6, 0), dtype=np.uint64))
    assert patched.dead.size == 0 and patched.tail_ids.size == 0  # compacted
    assert patched.ids.tolist() == list(range(1, 10000, 2))
    assert np.array_equal(patched.words, matrix.words[:, 1::2])


def _codes_in_db(idx) -> dict[int, bytes]:  # noqa: ANN001
    return dict(idx.store.conn.execute("SELECT chunk_id, code FROM chunk_codes").fetchall())


def _codes_in_matrix(matrix: CodeMatrix) -> dict[int, bytes]:
    out = {
        int(i): matrix.words[:, p].tobytes()
        for p, i in enumerate(matrix.ids)
        if p not in set(matrix.dead.tolist())
    }
    if matrix.tail_words is not None:
        out.update({int(i): matrix.tail_words[:, p].tobytes() for p, i in enumerate(matrix.tail_ids)})
    return out


def test_a_search_process_patches_after_another_connection_syncs(make_host) -> None:
    files = {
        f"memory/2026-03-{d:02d}.md": f"# Day {d}\n\n- note {d} about topic {d} and venue {d}\n"
        for d in range(1, 41)
    }
    writer = make_host(files)
    CODES.clear()
    with clock.pinned(NOW):
        widx = service.index_for(writer.ctx)
        widx.sync()
        reader = Host(Workspace(writer.workspace.root))
        ridx = service.index_for(reader.ctx)
        first = ridx.code_matrix()
        assert _codes_in_matrix(first) == _codes_in_db(ridx) and len(_codes_in_db(ridx)) == 40
        root = writer.workspace.root
        with open(root / "memory/2026-03-07.md", "a") as fh:
            fh.write("- appended: the projector needs HDMI\n")
        (root / "memory/2026-03-09.md").unlink()
        (root / "memory/2026-03-30.md").write_text("# Day 30\n\n- rewritten entirely\n")
        widx.sync()
        second = ridx.code_matrix()
        assert second.epoch == first.epoch and second.seq > first.seq
        assert second.ids is first.ids  # patched, not reloaded
        assert _codes_in_matrix(second) == _codes_in_db(ridx)
        hits = service.run_search(
            reader.ctx, service.make_request(reader.ctx, query="projector HDMI"), sync=False
        )
        assert hits.results and hits.results[0].path == "memory/2026-03-07.md"
        # a forced re-index is a new epoch: the reader reloads
        widx.sync(force=True)
        third = ridx.code_matrix()
        assert third.epoch != first.epoch and _codes_in_matrix(third) == _codes_in_db(ridx)
        reader.close()


def test_smallest_selects_the_k_smallest_distances() -> None:
    from lifelong_plugins.recall.vectors import FAR, smallest

    rng = np.random.default_rng(8)
    for n, k in ((1, 1), (10, 3), (1000, 400), (5000, 17), (300, 300), (50, 80)):
        dist = rng.integers(0, 60, size=n).astype(np.uint16)
        dist[rng.random(n) < 0.1] = FAR
        got = smallest(dist, k)
        assert len(got) == min(n, k) == len(set(got.tolist()))
        assert sorted(dist[got].tolist()) == sorted(dist.tolist())[: min(n, k)]


def test_shortlist_ranks_by_the_float_query_against_the_sign_codes() -> None:
    rng = np.random.default_rng(12)
    centres = rng.normal(size=(30, 384)).astype(np.float32)
    vecs = centres[rng.integers(0, 30, size=6000)] + 0.6 * rng.normal(size=(6000, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    centroid = vecs.mean(axis=0)
    codes = pack_codes(vecs, centroid)
    matrix = CodeMatrix("e", 0, np.arange(6000, dtype=np.int64), np.ascontiguousarray(codes.T))
    signs = np.where(vecs - centroid > 0, 1.0, -1.0).astype(np.float32)
    hits_short, hits_hamming = [], []
    for _ in range(20):
        q = vecs[rng.integers(0, 6000)] + 0.3 * rng.normal(size=384).astype(np.float32)
        q /= np.linalg.norm(q)
        qcode = pack_codes(q[None, :], centroid)[0]
        got = matrix.shortlist(qcode, q - centroid, coarse=600, pool=50)
        coarse = matrix.nearest(qcode, 600)
        expect = coarse[np.argsort(-(signs[coarse] @ (q - centroid)))[:50]]  # +-1 code . centred query
        assert sorted(got.tolist()) == sorted(expect.tolist())
        exact = set(np.argsort(-(vecs @ q))[:10].tolist())
        hits_short.append(len(exact & set(got.tolist())))
        hits_hamming.append(len(exact & set(matrix.nearest(qcode, 50).tolist())))
    assert sum(hits_short) > sum(hits_hamming)  # same exact re-rank budget, better candidates
