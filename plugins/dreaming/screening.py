"""What a dream writes may not carry secrets or instructions to an agent (issue 14, items 2 and 3).

MEMORY.md is loaded as trusted context; DREAMS.md and the run reports are read by people and tools
that may paste them into a prompt. The rules are :mod:`lifelong.safety`'s; this module applies them
to the plugin's outputs:

- a candidate about to be promoted: a statement that reads as instructions (or carries the suite's
  own wrapper tags) is refused (status ``blocked``, never promoted); secrets in one that passes are
  redacted in the promoted text (:func:`screen_statement`);
- the diary entry and every string of a report: each line with a secret is redacted, each line that
  reads as instructions is withheld whole (:func:`neutralise`, :func:`neutralise_json`).

The daily notes the text came from are never modified. Counts go to the run's ``safety`` tally,
its history row and ``lifelong status``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lifelong.safety import neutralise as safety_neutralise
from lifelong.safety import redact_secrets, screen, strip_invisible


@dataclass
class SafetyTally:
    """What one run redacted or refused."""

    secrets_redacted: int = 0  # secret values redacted in promoted text, the diary and reports
    refused: int = 0  # candidates never promoted because they read as instructions
    lines_withheld: int = 0  # diary or report lines withheld whole
    refused_keys: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "secrets_redacted": self.secrets_redacted,
            "refused": self.refused,
            "lines_withheld": self.lines_withheld,
            "refused_keys": self.refused_keys,
        }


def screen_statement(text: str) -> tuple[str, int, tuple[str, ...]]:
    """(text safe to promote, secrets redacted, instruction rules tripped). The statement may be
    promoted only when no rule is tripped."""
    result = screen(strip_invisible(text))
    return result.text, result.secrets, result.instructions


# the suite's own run ids (YYYYMMDD-HHMMSS-hex, "undo-" ones too): fourteen digits that a card-number
# rule may take for a card (one in ten passes the Luhn check); they are set aside while screening
RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{4}\b")


def _redact(line: str) -> tuple[str, int]:
    ids = RUN_ID.findall(line)
    if not ids:
        return redact_secrets(line)
    masked = RUN_ID.sub("\x00", line.replace("\x00", ""))
    clean, count = redact_secrets(masked)
    parts = clean.split("\x00")
    if len(parts) != len(ids) + 1:  # a redaction swallowed a run id: redact the line as it is
        return redact_secrets(line)
    return "".join(p + (ids[i] if i < len(ids) else "") for i, p in enumerate(parts)), count


def neutralise(text: str, tally: SafetyTally | None = None) -> str:
    """``text`` with secrets redacted and every line that reads as instructions withheld whole
    (:func:`lifelong.safety.neutralise`, the suite's run ids set aside)."""
    clean, secrets, withheld = safety_neutralise(text, redact=_redact)
    if tally is not None:
        tally.secrets_redacted += secrets
        tally.lines_withheld += withheld
    return clean


def neutralise_json(data: Any, tally: SafetyTally | None = None) -> Any:
    """A copy of ``data`` (JSON-like) with every string neutralised."""
    if isinstance(data, str):
        return neutralise(data, tally)
    if isinstance(data, dict):
        return {k: neutralise_json(v, tally) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [neutralise_json(v, tally) for v in data]
    return data
