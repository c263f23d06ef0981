"""The dream diary: after a run with material, a short first-person entry in DREAMS.md between
``<!-- lifelong:dream-<run_id>:start/end -->`` markers. With a model configured the entry comes
from the prompt prompts/dreaming_diary.md.j2 (top-level folder; a workspace may override it);
offline (or when the model fails) from the jinja2 template templates/dream_diary_offline.md.j2 filled with the run's numbers. DREAMS.md is never indexed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lifelong import llm, prompts
from lifelong.errors import LLMOffline
from lifelong.templates import PromptTemplates
from lifelong.workspace import replace_region

from .screening import neutralise

TEMPLATES = PromptTemplates(Path(__file__).parent / "templates")  # the offline entry (no model)

HEADER = (
    "# Dream diary\n\n"
    "Written by lifelong after each nightly consolidation (one entry per run, newest last).\n"
    "This file is never indexed or promoted.\n"
)


def region_name(run_id: str) -> str:
    return f"dream-{run_id}"


def diary_vars(run: Any) -> dict[str, Any]:
    light = run.reports.get("light", {})
    deep = run.reports.get("deep", {})
    comp = deep.get("compaction") or {}
    return {
        "date": run.now.date().isoformat(),
        "time": run.now.strftime("%H:%M"),
        "run_id": run.run_id,
        "mode": run.mode,
        "dailies": len(light.get("dailies", [])),
        "snippets": light.get("snippets", 0),
        "new_candidates": light.get("new_candidates", 0),
        "recalls": light.get("events_attributed", 0),
        "themes": [t.tag for t in run.themes][:5],
        "rem_summary": run.rem_summary,
        "promoted": [{"text": p["text"], "source": p["source"]} for p in run.promoted],
        "near_misses": len(deep.get("near_misses", [])),
        "dropped": len(deep.get("dropped", [])),
        "blocked": len(deep.get("blocked", [])),
        "compaction": comp.get("note", ""),
        "evicted": [e["text"] for e in comp.get("evicted", [])],
    }


def evictions_text(evicted: list[str]) -> str:
    """The items a run took out of MEMORY.md, listed in every diary entry (model or not)."""
    if not evicted:
        return ""
    return "To keep MEMORY.md within its budget I set aside (still in the notes):\n" + "".join(
        f"- {t}\n" for t in evicted
    )


def human_edits_text(edits: list[dict[str, str]]) -> str:
    """The edits a human made inside the managed sections of MEMORY.md, kept and listed."""
    if not edits:
        return ""
    shown = "".join(f"- {e['kind']} in {e['section']}: {e['text'][:120]}\n" for e in edits[:10])
    more = f"- … and {len(edits) - 10} more\n" if len(edits) > 10 else ""
    return f"I found {len(edits)} edit(s) of yours inside my sections of MEMORY.md and kept them as written:\n{shown}{more}"


def sanitise(text: str, limit: int = 1500) -> str:
    """Model output as plain text: no HTML comments (so no fences), no headings, bounded."""
    text = re.sub(r"<!--.*?(-->|$)", "", text, flags=re.S)
    text = text.replace("<!--", "").replace("-->", "")
    lines = [re.sub(r"^#+\s*", "", ln).rstrip() for ln in text.strip().split("\n")]
    text = "\n".join(lines).strip()
    if len(text) > limit:
        cut = text[:limit]
        text = cut[: cut.rfind(" ")] + "…" if " " in cut else cut
    return text


def entry(ctx: Any, run: Any) -> tuple[str, str]:
    """(markdown entry, 'model' | 'offline')."""
    variables = diary_vars(run)
    offline = TEMPLATES.render("dream_diary_offline.md.j2", **variables)
    cfg = run.config
    if run.model and cfg["use_model"]:
        try:
            reply = llm.complete(
                [
                    {
                        "role": "user",
                        "content": prompts.render("dreaming_diary.md.j2", ctx.workspace, **variables),
                    }
                ],
                model=run.model,
                deadline_s=cfg["model_timeout_s"],
                **run.llm_kwargs,
            )
            body = sanitise(reply)
            if body:
                listed = evictions_text(variables["evicted"])
                tail = f"\n{listed}" if listed else ""
                return f"### {variables['date']} · run {run.run_id}\n\n{body}\n{tail}", "model"
        except LLMOffline as exc:
            ctx.log("dreaming", f"run {run.run_id}: diary model unavailable, offline entry used ({exc})")
    return offline, "offline"


def write_entry(ctx: Any, run: Any) -> str:
    """Write the run's diary entry (journaled); returns its source: model | offline."""
    text, source = entry(ctx, run)
    edits = human_edits_text(getattr(run, "human_edits", []))
    if edits:
        text = text.rstrip("\n") + "\n\n" + edits
    text = neutralise(text, run.safety)  # no secret, no instruction-like line reaches the diary
    path = ctx.workspace.dreams_file
    current = path.read_text("utf-8") if path.exists() else HEADER
    run.journal.write(path, replace_region(current, region_name(run.run_id), text))
    return source
