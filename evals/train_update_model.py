"""Train (and check) the learned update reader, ``lifelong/update_model.json``.

``python -m evals.train_update_model [--train SET ...] [--test SET ...] [--write] [--l2 1.0]
[--negatives 1] [--seed 0]``

Data: labelled pairs (``label: update | compatible``, ``old``, ``new``) from ``evals/heldout/``
(default training sets: pairs.yaml, pairs-2 to -7, seven writers), plus ``--negatives`` random
cross pairs per pair (one pair's ``old`` with another's ``new``) labelled compatible: the easy
negatives a real notes folder is full of. Features: :func:`lifelong.update_model.features` (the
hand rules' verdicts and the difference of the two statements' vectors from the bundled
embedder). Model: L2-regularised logistic regression on standardised features, fitted by
full-batch gradient descent (numpy, deterministic). Predictions are scored as shipped: behind the
same-thing cosine gate (:data:`lifelong.update_model.SAME_THING_COSINE`).

Prints, in one run, beside the hand rules alone (``relate`` finds an update): each training set
predicted by a model fitted on the *other* sets (leave one writer out), then each ``--test`` set
with the model fitted on all training sets: recall of updates, false positives on the compatible
pairs, and on random cross pairs of that set (unrelated lines read as an update), at three
thresholds. ``--write`` stores the fitted model with what it was trained on and these figures.

Which sets are held out: a set used with ``--test`` once is reported as such; a set whose misses
were read to change the features or the threshold is tuning data from then on (say so).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from lifelong import update_model as um
from lifelong.facts import relate

HERE = Path(__file__).resolve().parent / "heldout"
TRAIN_SETS = tuple(f"pairs{s}.yaml" for s in ("", "-2", "-3", "-4", "-5", "-6", "-7"))
THRESHOLDS = (0.5, um.LIKELY, 0.85)
CROSS_PER_PAIR = 3  # random cross pairs per held-out pair: how often unrelated lines read as an update


def load(path: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text("utf-8"))["pairs"])


Pair = tuple[str, str]


def rows(pairs: list[dict[str, Any]], *, negatives: int, seed: int) -> tuple[list[Pair], Any]:
    """The (older, newer) texts as the model reads them (:func:`lifelong.update_model.plain`) and
    their labels, with ``negatives`` random cross pairs per pair labelled compatible."""
    texts = [(um.plain(p["old"]), um.plain(p["new"])) for p in pairs]
    labels = [p["label"] == "update" for p in pairs]
    rng = random.Random(seed)
    for _ in range(negatives * len(pairs)):
        p, q = rng.sample(pairs, 2)
        texts.append((um.plain(p["old"]), um.plain(q["new"])))
        labels.append(False)
    return texts, np.array(labels, dtype=np.float64)


def matrix(texts: list[Pair], vecs: dict[str, Any]) -> Any:
    return np.array([um.features(a, b, vecs[a], vecs[b]) for a, b in texts])


def fit(x: Any, y: Any, l2: float, iters: int = 3000, rate: float = 0.1) -> dict[str, Any]:
    mean, scale = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / scale
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(z @ w + b)))
        w -= rate * (z.T @ (p - y) / len(y) + l2 * w / len(y))
        b -= rate * float((p - y).mean())
    return {"mean": mean.tolist(), "scale": scale.tolist(), "weights": w.tolist(), "bias": b}


def predict(model: dict[str, Any], texts: list[Pair], vecs: dict[str, Any]) -> Any:
    """What the shipped reader answers: the model behind the same-thing cosine gate."""
    m = um.UpdateModel({**model, "features_version": um.FEATURES_VERSION})
    return np.array([um._probability(m, a, b, vecs) for a, b in texts])


def figures(y: Any, p: Any, cross: Any = None) -> dict[str, dict[str, float]]:
    out = {}
    for t in THRESHOLDS:
        hit = p >= t
        row = {
            "update_recall": round(float((hit & (y == 1)).sum() / max(1, (y == 1).sum())), 3),
            "compatible_fp": round(float((hit & (y == 0)).sum() / max(1, (y == 0).sum())), 3),
        }
        if cross is not None:
            row["cross_pair_fp"] = round(float((cross >= t).mean()), 4)
        out[f"{t:.2f}"] = row
    return out


def rules(pairs: list[dict[str, Any]]) -> dict[str, float]:
    upd = [p for p in pairs if p["label"] == "update"]
    comp = [p for p in pairs if p["label"] != "update"]
    return {
        "update_recall": round(sum(relate(p["old"], p["new"]).kind == "update" for p in upd) / len(upd), 3),
        "compatible_fp": round(sum(relate(p["old"], p["new"]).kind == "update" for p in comp) / len(comp), 3),
    }


def show(name: str, rule: dict[str, float], learned: dict[str, dict[str, float]]) -> None:
    print(f"{name}")
    print(
        f"  {'hand rules (relate)':28} recall {rule['update_recall']:.3f}  compatible fp {rule['compatible_fp']:.3f}"
    )
    for t, f in learned.items():
        cross = f"  random cross pairs fp {f['cross_pair_fp']:.4f}" if "cross_pair_fp" in f else ""
        print(
            f"  {'learned, p >= ' + t:28} recall {f['update_recall']:.3f}  compatible fp {f['compatible_fp']:.3f}{cross}"
        )


def held_out(
    model: dict[str, Any], pairs: list[dict[str, Any]], vecs: dict[str, Any], seed: int
) -> dict[str, dict[str, float]]:
    texts, y = rows(pairs, negatives=0, seed=seed)
    cross, _ = rows(pairs, negatives=CROSS_PER_PAIR, seed=seed + 1)
    return figures(y, predict(model, texts, vecs), predict(model, cross[len(pairs) :], vecs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", nargs="+", default=list(TRAIN_SETS))
    ap.add_argument("--test", nargs="*", default=[])
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--negatives", type=int, default=1, help="random cross pairs per training pair")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", action="store_true", help=f"store the fitted model in {um.MODEL_FILE}")
    args = ap.parse_args(argv)
    from lifelong_plugins.embeddings.providers import LocalE5

    def path(name: str) -> Path:
        return Path(name) if Path(name).exists() else HERE / name

    sets = {name: load(path(name)) for name in args.train}
    tests = {name: load(path(name)) for name in args.test}
    every = [p for ps in [*sets.values(), *tests.values()] for p in ps]
    texts = sorted({um.plain(t) for p in every for t in (p["old"], p["new"])})
    vecs = dict(zip(texts, LocalE5().embed_passages(texts), strict=True))
    loso: dict[str, Any] = {}
    if len(sets) > 1:  # each writer's set predicted by a model fitted on the others' sets
        for name, pairs in sets.items():
            rest = [p for other, ps in sets.items() if other != name for p in ps]
            t, y = rows(rest, negatives=args.negatives, seed=args.seed)
            model = fit(matrix(t, vecs), y, args.l2)
            loso[name] = held_out(model, pairs, vecs, args.seed)
            show(f"{name} ({len(pairs)} pairs), fitted on the other training sets", rules(pairs), loso[name])
    train = [p for ps in sets.values() for p in ps]
    t, y = rows(train, negatives=args.negatives, seed=args.seed)
    model = fit(matrix(t, vecs), y, args.l2)
    test_figures = {}
    for name, pairs in tests.items():
        test_figures[name] = held_out(model, pairs, vecs, args.seed)
        show(
            f"{name} ({len(pairs)} pairs), fitted on {', '.join(args.train)}",
            rules(pairs),
            test_figures[name],
        )
    if args.write:
        data = {
            "features_version": um.FEATURES_VERSION,
            "embedder": list(um.TRAINED_WITH),
            "trained_on": args.train,
            "random_negatives_per_pair": args.negatives,
            "seed": args.seed,
            "l2": args.l2,
            "same_thing_cosine": um.SAME_THING_COSINE,
            "leave_one_set_out": loso,
            "tested_on": test_figures,
            **model,
        }
        um.MODEL_FILE.write_text(json.dumps(data, separators=(",", ":")) + "\n", "utf-8")
        print(f"wrote {um.MODEL_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
