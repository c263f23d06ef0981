"""Secret redaction on a corpus written by someone who never read the rules.

``python -m evals.secrets_heldout [--corpus evals/heldout/secrets.yaml] [--json FILE] [--misses]``

The corpus (``evals/heldout/secrets.yaml``) holds note lines with secrets in them, each with the
exact substrings that must never survive (a card line lists its number, expiry and CVV; a
connection string its password; a private key its body lines), and ordinary lines that look
secret-ish but are not (hashes, UUIDs, versions, tracking numbers, error codes).

Printed for :func:`lifelong.safety.redact_secrets` and, in the same run, for the baseline a user
would try first, the ``detect-secrets`` scanner with its default plugins (keyword and entropy
detectors included) run line by line on the same text:

- leaked: secret substrings still present after redaction, and lines with any leak;
- fragments: long secrets (16+ characters) of which a run of 8+ characters survives (a match that
  stopped early, ``[redacted …]XcVbNm0123…``);
- false positives: ordinary lines changed by redaction;
- idempotence: lines where redacting the redacted text changes it again (target 0).

Reading a miss here and fixing it makes this corpus tuning data: write a new one for the next
held-out figure (the README says which corpus is unseen).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from lifelong.safety import redact_secrets

CORPUS = Path(__file__).resolve().parent / "heldout" / "secrets.yaml"


def detect_secrets_redact(text: str) -> str:
    """The baseline: every secret ``detect-secrets scan`` (default plugins and filters) reports in
    the text written to a file of its own, replaced by ``[redacted]``."""
    import tempfile

    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as tmp, default_settings():
        path = Path(tmp) / "note.md"
        path.write_text(text, "utf-8")
        found = SecretsCollection()
        found.scan_file(str(path))
        values = sorted({s.secret_value for _, s in found if s.secret_value}, key=len, reverse=True)
    for value in values:
        text = text.replace(value, "[redacted]")
    return text


def fragment_left(secret: str, text: str, run: int = 8) -> bool:
    if len(secret) < 16:
        return False
    return any(secret[i : i + run] in text for i in range(len(secret) - run + 1))


def score(redact: Any, corpus: dict[str, Any]) -> dict[str, Any]:
    leaked = fragments = lines_leaking = total = 0
    by_kind: dict[str, list[int]] = {}
    misses: list[dict[str, Any]] = []
    for entry in corpus["secrets"]:
        out = redact(entry["text"])
        left = [s for s in entry["secrets"] if s in out]
        frag = [s for s in entry["secrets"] if s not in out and fragment_left(s, out)]
        total += len(entry["secrets"])
        leaked += len(left)
        fragments += len(frag)
        lines_leaking += bool(left or frag)
        k = by_kind.setdefault(entry["kind"], [0, 0])
        k[0] += len(entry["secrets"])
        k[1] += len(left) + len(frag)
        if left or frag:
            misses.append({"kind": entry["kind"], "left": left, "fragments": frag, "out": out[:300]})
    fp = [e for e in corpus["ordinary"] if redact(e["text"]) != e["text"]]
    not_idempotent = [
        e["text"][:120]
        for e in corpus["secrets"] + corpus["ordinary"]
        if redact(redact(e["text"])) != redact(e["text"])
    ]
    return {
        "secret_substrings": total,
        "leaked": leaked,
        "fragments": fragments,
        "secret_lines": len(corpus["secrets"]),
        "lines_leaking": lines_leaking,
        "ordinary_lines": len(corpus["ordinary"]),
        "false_positives": len(fp),
        "false_positive_lines": [e["text"][:120] for e in fp],
        "not_idempotent": len(not_idempotent),
        "not_idempotent_lines": not_idempotent[:20],
        "by_kind": {k: {"secrets": v[0], "left": v[1]} for k, v in sorted(by_kind.items())},
        "misses": misses,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--misses", action="store_true", help="print every miss and false positive")
    args = ap.parse_args(argv)
    corpus = yaml.safe_load(args.corpus.read_text("utf-8"))
    results = {
        "lifelong": score(lambda t: redact_secrets(t)[0], corpus),
        "detect-secrets (baseline)": score(detect_secrets_redact, corpus),
    }
    print(
        f"corpus {args.corpus.name}: {len(corpus['secrets'])} secret lines, {len(corpus['ordinary'])} ordinary"
    )
    print(
        f"{'redactor':28} {'leaked':>12} {'fragments':>9} {'lines leak':>10} {'false pos':>10} {'not idem':>8}"
    )
    for name, r in results.items():
        print(
            f"{name:28} {r['leaked']:>5} of {r['secret_substrings']:<4} {r['fragments']:>9} "
            f"{r['lines_leaking']:>4} of {r['secret_lines']:<3} {r['false_positives']:>4} of {r['ordinary_lines']:<3} "
            f"{r['not_idempotent']:>8}"
        )
    ours = results["lifelong"]
    print(
        "lifelong by kind (left / secrets): "
        + ", ".join(f"{k} {v['left']}/{v['secrets']}" for k, v in ours["by_kind"].items() if v["left"])
    )
    if args.misses:
        for m in ours["misses"]:
            print(f"  MISS {m['kind']}: left {m['left']} fragments {m['fragments']}\n      {m['out']!r}")
        for t in ours["false_positive_lines"]:
            print(f"  FP   {t!r}")
        for t in ours["not_idempotent_lines"]:
            print(f"  NOT IDEMPOTENT {t!r}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
