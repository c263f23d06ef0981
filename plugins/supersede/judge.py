"""The optional model judge: with a model configured, it confirms or rejects a conflict the rules
found, and looks at closely related pairs the rules passed (a paraphrased change). Offline, or when
the model fails or answers nonsense, the rules' verdict stands."""

from __future__ import annotations

import json
import re
from typing import Any

from lifelong import llm, prompts
from lifelong.errors import LLMOffline

VERDICTS = ("conflict", "compatible", "unrelated")
_OBJECT = re.compile(r"\{.*?\}", re.S)


def judge_model(cfg: dict[str, Any], workspace_config: dict[str, Any]) -> str | None:
    """The model to judge with: ``judge_model``, else the workspace's ``llm.model``; None when
    the judge is off or no model is configured."""
    if not cfg["judge"]:
        return None
    return cfg["judge_model"] or (workspace_config.get("llm") or {}).get("model") or None


def render(old: str, new: str, old_date: str, new_date: str, workspace: Any = None) -> str:
    return prompts.render(
        "supersede_judge.md.j2", workspace, old=old, new=new, old_date=old_date, new_date=new_date
    )


def read_verdict(reply: str) -> tuple[str, str] | None:
    """(verdict, reason) from the model's reply; None when it holds no valid verdict."""
    for m in _OBJECT.finditer(reply or ""):
        try:
            data = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("verdict") in VERDICTS:
            return str(data["verdict"]), " ".join(str(data.get("reason") or "").split())[:300]
    return None


def ask(
    model: str,
    cfg: dict[str, Any],
    old: str,
    new: str,
    old_date: str,
    new_date: str,
    workspace: Any = None,
) -> tuple[str, str] | None:
    """Ask the model; None (the rules decide) when it is offline, late or answers nonsense."""
    prompt = render(old, new, old_date, new_date, workspace)
    try:
        reply = llm.complete(
            [{"role": "user", "content": prompt}],
            model=model,
            deadline_s=float(cfg["judge_timeout_s"]),
            **cfg["judge_options"],
        )
    except LLMOffline:
        return None
    return read_verdict(reply)
