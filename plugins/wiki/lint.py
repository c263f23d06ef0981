"""Lint the vault (pure: pages and a reader of source lines in, findings and report texts out).

Codes (each a row in ``wiki/reports/lint.md`` with the page and the claim):

- ``duplicate-id``: two pages with one ``id``
- ``missing-source-ids``: a page (not a source or report) with no ``source_ids``
- ``broken-wikilink``: ``[[target]]`` naming no page id, file name, title or alias (links inside
  code spans and fences are not links)
- ``claim-conflict``: one claim id with different texts on two pages, or two active claims about
  the same subject and attribute with different values (:func:`lifelong.facts.compare`), also
  listed in ``wiki/reports/contradictions.md`` with both evidence pointers; a claim below the
  confidence threshold (one source, or old) and a ``contested`` claim are compared too, and such
  a conflict is "contested"
- ``claim-missing-evidence``: a claim without evidence
- ``stale-page`` / ``stale-claim``: newest evidence ≥ ``stale_days`` old (a page whose
  ``updated_at`` is missing or not a date is ``stale-page`` too, with the reason, unless every
  claim's evidence carries no date to give it: hand-written MEMORY.md lines, freshness ``undated``)
- ``evidence-file-missing``: an evidence path that no longer exists
- ``drift``: the evidence lines no longer hash to the recorded sha256 (with the likely new
  location when the text moved)
- ``confidence-below-threshold``: an active claim that was above the threshold and has decayed
  below it with no new evidence
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lifelong.markdown import parse_blocks
from lifelong.text import content_tokens, jaccard

from .compile import NOT_STATED
from .confidence import ConfidenceRule, Freshness, confidence, freshness, newest_date, parse_day
from .conflicts import Contradiction, find_contradictions
from .sources import lines_sha256
from .vault import Claim, PageFile, normalise_key, slug

CODES = (
    "duplicate-id",
    "missing-source-ids",
    "broken-wikilink",
    "claim-conflict",
    "claim-missing-evidence",
    "stale-page",
    "stale-claim",
    "evidence-file-missing",
    "evidence-not-stating",
    "drift",
    "confidence-below-threshold",
)
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_INDENTED = re.compile(r"^(?: {4}|\t)", re.M)
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


@dataclass(frozen=True)
class Finding:
    code: str
    page: str
    claim: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"code": self.code, "page": self.page, "claim": self.claim, "message": self.message}


@dataclass
class LintResult:
    today: dt.date
    pages: int
    claims: int
    findings: list[Finding] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    low_confidence: list[tuple[str, Claim, float]] = field(default_factory=list)
    single_source: list[tuple[str, Claim]] = field(default_factory=list)
    freshness: list[tuple[str, str, str]] = field(default_factory=list)  # page, level, detail

    def counts(self) -> dict[str, int]:
        out = {code: 0 for code in CODES}
        for f in self.findings:
            out[f.code] = out.get(f.code, 0) + 1
        return out


def strip_code(text: str) -> str:
    """``text`` with fenced/indented code blocks and inline code spans blanked (same lines)."""
    if "`" not in text and "~~~" not in text and not _INDENTED.search(text):
        return text
    lines = text.split("\n")
    for b in parse_blocks(text):
        if b.kind in ("fence", "code_block"):
            for i in range(b.start - 1, min(b.end, len(lines))):
                lines[i] = ""
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), "\n".join(lines))


def wikilinks(text: str) -> list[str]:
    """Targets of ``[[target]]``/``[[target|label]]``/``[[target#section]]`` outside code."""
    if "[[" not in text:
        return []
    out = []
    for m in _WIKILINK.finditer(strip_code(text)):
        target = m.group(1).split("|", 1)[0].split("#", 1)[0].strip()
        if target:
            out.append(target)
    return out


def _link_keys(page: PageFile) -> set[str]:
    keys = set()
    if page.id:
        keys.update({page.id.lower(), page.id.split(".", 1)[-1].lower()})
    stem = page.path.rsplit("/", 1)[-1].removesuffix(".md")
    keys.update({stem.lower(), page.path.lower(), page.path.removeprefix("wiki/").lower()})
    keys.update({page.path.removeprefix("wiki/").removesuffix(".md").lower()})
    for name in (page.title, *page.aliases):
        if name.strip():
            keys.update({name.strip().lower(), slug(name)})
    return keys


def _pointers(claim: Claim) -> str:
    return ", ".join(f"`{e.path}#{e.lines}`" for e in claim.evidence) or "no evidence"


SourceReader = Callable[[str], list[str] | None]


def check_evidence(page: PageFile, claim: Claim, read: SourceReader) -> list[Finding]:
    out = []
    for e in claim.evidence:
        if e.note == NOT_STATED:
            out.append(
                Finding(
                    "evidence-not-stating",
                    page.path,
                    claim.id,
                    f"`{e.path}#{e.lines}` is cited for the claim but does not state it (not counted)",
                )
            )
            continue
        lines = read(e.path)
        if lines is None:
            out.append(Finding("evidence-file-missing", page.path, claim.id, f"`{e.path}` no longer exists"))
            continue
        if e.end > len(lines) or lines_sha256(lines, e.start, e.end) != e.sha256:
            moved = locate(lines, e.sha256, e.end - e.start + 1, claim.text)
            where = f"; likely moved to `{e.path}#{moved}`" if moved else "; the text is no longer there"
            out.append(
                Finding(
                    "drift", page.path, claim.id, f"`{e.path}#{e.lines}` no longer matches its sha256{where}"
                )
            )
    return out


def locate(lines: list[str], sha: str, span: int, text: str) -> str | None:
    """Where the evidence text is now: the same lines elsewhere in the file (by hash), else the
    line most like the claim (content Jaccard ≥ 0.5)."""
    for start in range(1, len(lines) - span + 2):
        if lines_sha256(lines, start, start + span - 1) == sha:
            return f"L{start}-L{start + span - 1}"
    want = content_tokens(text)
    best, best_at = 0.0, None
    for i, line in enumerate(lines, 1):
        score = jaccard(want, content_tokens(line))
        if score > best:
            best, best_at = score, i
    return f"L{best_at}-L{best_at}" if best_at is not None and best >= 0.5 else None


def undated_evidence_only(claims: list[Claim]) -> bool:
    """Claims, each with evidence, none of it dated: a compiled page has nothing to date it by."""
    return bool(claims) and all(
        c.evidence and all(parse_day(e.date) is None for e in c.evidence) for c in claims
    )


def lint_pages(
    pages: list[PageFile],
    read: SourceReader,
    today: dt.date,
    rule: ConfidenceRule,
    *,
    aging_days: int = 30,
    stale_days: int = 90,
) -> LintResult:
    result = LintResult(today, len(pages), 0)
    add = result.findings.append
    by_id: dict[str, list[PageFile]] = {}
    keys: set[str] = set()
    for p in pages:
        if p.id:
            by_id.setdefault(p.id, []).append(p)
        keys |= _link_keys(p)
    for pid, same in sorted(by_id.items()):
        if len(same) > 1:
            for p in same:
                others = ", ".join(o.path for o in same if o is not p)
                add(Finding("duplicate-id", p.path, "", f"id `{pid}` is also used by {others}"))
    claim_texts: dict[str, dict[str, str]] = {}
    active: list[tuple[str, Claim]] = []
    weak: list[tuple[str, Claim]] = []  # active or rule claims below the threshold now
    for p in pages:
        if p.error:
            add(Finding("missing-source-ids", p.path, "", f"page frontmatter unreadable: {p.error}"))
            continue
        page_type = str(p.front.get("page_type") or "")
        if page_type not in ("source", "report") and not p.source_ids:
            add(Finding("missing-source-ids", p.path, "", "page has no source_ids (no provenance)"))
        for target in wikilinks(p.body):
            if target.lower() not in keys and slug(target) not in keys:
                add(Finding("broken-wikilink", p.path, "", f"[[{target}]] names no page"))
        page_fresh = freshness(p.updated_at, today, aging_days=aging_days, stale_days=stale_days)
        if page_fresh.level == "unknown" and p.updated_at is None and undated_evidence_only(p.claims):
            # compiled from lines that carry no date (MEMORY.md written by hand): nothing to age
            page_fresh = Freshness("undated", None, "its evidence carries no date (lines written by hand)")
        detail = f"{page_fresh.age_days} days" if page_fresh.age_days is not None else page_fresh.reason
        result.freshness.append((p.path, page_fresh.level, detail))
        if page_fresh.level == "stale":
            add(Finding("stale-page", p.path, "", f"newest evidence is {page_fresh.age_days} days old"))
        elif page_fresh.level == "unknown":
            add(Finding("stale-page", p.path, "", f"freshness unknown: {page_fresh.reason}"))
        claims = p.claims
        result.claims += len(claims)
        for c in claims:
            claim_texts.setdefault(c.id, {})[p.path] = normalise_key(c.text)
            if not c.evidence:
                add(Finding("claim-missing-evidence", p.path, c.id, f"claim has no evidence: {c.text[:80]}"))
            result.findings.extend(check_evidence(p, c, read))
            newest = newest_date(c.evidence)
            stamp = c.updated_at or (newest.isoformat() if newest else None) or p.updated_at
            cf = freshness(stamp, today, aging_days=aging_days, stale_days=stale_days)
            if cf.level == "stale":
                add(
                    Finding(
                        "stale-claim",
                        p.path,
                        c.id,
                        f"newest evidence is {cf.age_days} days old: {c.text[:80]}",
                    )
                )
            if c.status == "contested":  # compared, as neither side of its dispute is settled
                weak.append((p.path, c))
                continue
            if c.status not in ("active", "rule"):
                continue
            now_conf = confidence(c.evidence, today, rule) if c.evidence else 0.0
            then_conf = confidence(c.evidence, newest or today, rule) if c.evidence else 0.0
            if now_conf < rule.active_threshold:
                result.low_confidence.append((p.path, c, now_conf))
                if then_conf >= rule.active_threshold:
                    add(
                        Finding(
                            "confidence-below-threshold",
                            p.path,
                            c.id,
                            f"confidence decayed to {now_conf:.2f} (< {rule.active_threshold}) with no new evidence",
                        )
                    )
                elif len({e.path for e in c.evidence}) <= 1:
                    result.single_source.append((p.path, c))
                weak.append((p.path, c))  # compared too: two one-source claims can disagree
            elif c.status == "active":
                active.append((p.path, c))
    result.contradictions.extend(find_contradictions(active + weak, weak={c.id for _, c in weak}))
    for cid, where in sorted(claim_texts.items()):
        if len(where) > 1 and len(set(where.values())) > 1:
            for path in sorted(where):
                add(
                    Finding(
                        "claim-conflict",
                        path,
                        cid,
                        f"claim id `{cid}` has different texts on {len(where)} pages",
                    )
                )
    for k in result.contradictions:
        add(
            Finding(
                "claim-conflict",
                k.page,
                f"{k.left.id} vs {k.right.id}",
                f'{k.reason}: "{k.left.text[:60]}" vs "{k.right.text[:60]}"',
            )
        )
    result.findings.sort(key=lambda f: (f.page, CODES.index(f.code), f.claim, f.message))
    return result


# ---------------------------------------------------------------------------------------------
# reports


def render_reports(result: LintResult, stale_days: int) -> dict[str, str]:
    """Report name → markdown body (each goes inside a managed region of wiki/reports/NAME.md)."""
    day = result.today.isoformat()
    counts = result.counts()
    lint = [
        f"Lint of {result.pages} page(s), {result.claims} claim(s) as of {day}: "
        f"{len(result.findings)} finding(s).",
        "",
    ]
    lint += ["| code | count |", "|---|---|"] + [f"| {c} | {n} |" for c, n in counts.items()] + [""]
    if result.findings:
        lint += ["| code | page | claim | detail |", "|---|---|---|---|"]
        lint += [
            f"| {f.code} | `{f.page}` | {f.claim or '-'} | {_cell(f.message)} |" for f in result.findings
        ]
    else:
        lint.append("No findings.")
    contra = [
        f"Active claims about the same subject and attribute with different values, as of {day}. "
        "Flagged for review: nothing is overwritten.",
        "",
    ]
    if result.contradictions:
        contra += [
            "| page | claim | evidence | conflicting claim | evidence | why |",
            "|---|---|---|---|---|---|",
        ]
        contra += [
            f"| `{k.pages}` | {_cell(k.left.text)} ({k.left.id}) | {_pointers(k.left)} | "
            f"{_cell(k.right.text)} ({k.right.id}) | {_pointers(k.right)} | {_cell(k.reason)} |"
            for k in result.contradictions
        ]
    else:
        contra.append("No contradictions.")
    questions = [f"What the wiki cannot settle alone, as of {day}.", "", "## Contradictions to resolve", ""]
    questions += [
        f'- Which is right: "{k.left.text}" or "{k.right.text}"? (`{k.pages}`)' for k in result.contradictions
    ]
    questions += ["", "## Claims waiting for a second source", ""]
    questions += [
        f"- {c.text} ({c.id}, `{page}`; evidence {_pointers(c)})" for page, c in result.single_source
    ]
    low = [f"Claims below the active threshold as of {day} (confidence now).", ""]
    low += ["| page | claim | confidence | evidence |", "|---|---|---|---|"]
    low += [
        f"| `{p}` | {_cell(c.text)} ({c.id}) | {v:.2f} | {_pointers(c)} |"
        for p, c, v in result.low_confidence
    ]
    stale = [
        f"Page freshness by the age of the newest evidence as of {day} (stale at {stale_days} days or more).",
        "",
    ]
    stale += ["| page | freshness | detail |", "|---|---|---|"]
    stale += [
        f"| `{p}` | {lvl} | {_cell(d)} |" for p, lvl, d in result.freshness if lvl not in ("fresh", "undated")
    ]
    return {
        "lint": "\n".join(lint) + "\n",
        "contradictions": "\n".join(contra) + "\n",
        "open-questions": "\n".join(questions) + "\n",
        "low-confidence": "\n".join(low) + "\n",
        "stale-pages": "\n".join(stale) + "\n",
    }


REPORT_TITLES = {
    "lint": "Wiki lint",
    "contradictions": "Contradictions",
    "open-questions": "Open questions",
    "low-confidence": "Low-confidence claims",
    "stale-pages": "Stale pages",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
