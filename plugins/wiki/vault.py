"""The vault on disk: page and claim records, how a page is rendered and read back (pure).

A page is markdown with YAML frontmatter (``id``, ``page_type``, ``title``, ``aliases``,
``source_ids``, ``updated_at``, ``claims``) and a generated body inside
``<!-- lifelong:wiki:start/end -->``. A ``<!-- lifelong:human:start/end -->`` block anywhere in
the page belongs to the human: it is carried over byte for byte whenever the page is regenerated.
Rendering is deterministic (fixed key order, sorted claims and evidence), so unchanged sources
give byte-identical pages.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import yaml

from lifelong.errors import InputError
from lifelong.workspace import find_regions, split_frontmatter

PAGE_DIRS: dict[str, str] = {
    "entity": "entities",
    "concept": "concepts",
    "synthesis": "syntheses",
    "source": "sources",
}
REPORTS_DIR = "reports"
BODY_REGION = "wiki"
HUMAN_REGION = "human"
HUMAN_BLOCK = "<!-- lifelong:human:start -->\n<!-- lifelong:human:end -->\n"
STATUSES = ("active", "contested", "superseded", "retired", "rule")

# libyaml when installed (lifelong.workspace.split_frontmatter reads with it too)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(data: Any) -> str:
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
    )


_KEY_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACES = re.compile(r"\s+")
_SLUG = re.compile(r"[^a-z0-9]+")


def normalise_key(text: str) -> str:
    """The claim key: NFKC, case-folded, punctuation dropped, whitespace collapsed. Two
    statements that differ only in case, spacing or punctuation have one key (one claim).
    Decimal points and thousands separators inside numbers are kept (``1.5`` is not ``15``)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"(?<=\d)[.,](?=\d)", "\x00", text)
    text = _KEY_PUNCT.sub(" ", text).replace("\x00", ".")
    return _SPACES.sub(" ", text).strip()


def slug(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return _SLUG.sub("-", folded).strip("-") or "page"


def page_path(page_id: str, page_type: str) -> str:
    """Workspace-relative path of a page: ``wiki/entities/elena-brandt.md`` for
    ``entity.elena-brandt``."""
    name = page_id.split(".", 1)[1] if "." in page_id else page_id
    return f"wiki/{PAGE_DIRS[page_type]}/{name}.md"


@dataclass(frozen=True)
class Evidence:
    """A pointer from a claim to the lines that support it. ``source_id`` is the citation
    ``path#Lx-Ly`` (the recall index's chunk covering those lines resolves it); ``sha256`` is of
    the exact lines joined with ``\\n``; ``date`` is the day the evidence was written."""

    source_id: str
    path: str
    lines: str
    sha256: str
    weight: float
    note: str = ""
    date: str | None = None

    @property
    def start(self) -> int:
        return int(self.lines.split("-")[0].lstrip("L"))

    @property
    def end(self) -> int:
        return int(self.lines.split("-")[-1].lstrip("L"))

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source_id": self.source_id,
            "path": self.path,
            "lines": self.lines,
            "sha256": self.sha256,
            "weight": self.weight,
            "note": self.note,
        }
        if self.date:
            out["date"] = self.date
        return out


@dataclass(frozen=True)
class Claim:
    id: str
    key: str
    text: str
    status: str
    confidence: float
    evidence: tuple[Evidence, ...]
    updated_at: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "key": self.key,
            "text": self.text,
            "status": self.status,
            "confidence": self.confidence,
            "updated_at": self.updated_at,
        }
        if self.valid_from:
            out["valid_from"] = self.valid_from
        if self.valid_to:
            out["valid_to"] = self.valid_to
        out["evidence"] = [e.as_json() for e in self.evidence]
        return out


@dataclass(frozen=True)
class Page:
    id: str
    page_type: str
    title: str
    aliases: tuple[str, ...] = ()
    claims: tuple[Claim, ...] = ()
    source_ids: tuple[str, ...] = ()
    updated_at: str | None = None
    related: tuple[str, ...] = ()  # ids of pages linked from the body
    mentions: tuple[tuple[str, str], ...] = ()  # (claim id, text) of claims homed elsewhere
    extra: dict[str, Any] = field(default_factory=dict)  # frontmatter keys the compiler does not own

    @property
    def path(self) -> str:
        return page_path(self.id, self.page_type)


# ---------------------------------------------------------------------------------------------
# rendering


def render_frontmatter(page: Page) -> str:
    data: dict[str, Any] = {
        "id": page.id,
        "page_type": page.page_type,
        "title": page.title,
        "aliases": list(page.aliases),
        "source_ids": list(page.source_ids),
        "updated_at": page.updated_at,
    }
    for key in sorted(page.extra):
        if key not in data and key != "claims":
            data[key] = page.extra[key]
    data["claims"] = [c.as_json() for c in page.claims]
    return f"---\n{dump_yaml(data)}---\n"


def citation(e: Evidence) -> str:
    return f"`{e.path}#{e.lines}`"


def claim_state(status: str, confidence: float, threshold: float) -> str:
    """A claim's state as its page, a search result and ``wiki get`` all say it: its status,
    except that an active claim below the threshold is ``unconfirmed``."""
    return status if status != "active" or confidence >= threshold else "unconfirmed"


def counts_as_active(status: str, confidence: float, threshold: float) -> bool:
    """An active claim (or a rule) at or above the threshold."""
    return status in ("active", "rule") and confidence >= threshold


def render_body(page: Page, threshold: float) -> str:
    lines = [f"# {page.title}", ""]
    if page.aliases:
        lines += [f"Also known as: {', '.join(page.aliases)}", ""]
    lines.append("## Claims")
    lines.append("")
    if not page.claims:
        lines.append("_No claims yet._")
    for c in page.claims:
        state = claim_state(c.status, c.confidence, threshold)
        sources = ", ".join(citation(e) for e in c.evidence) or "no evidence"
        lines.append(f"- {c.text} — {state}, confidence {c.confidence:.2f} ({c.id}); evidence: {sources}")
    if page.mentions:
        lines += ["", "## Mentioned in", ""]
        lines += [f"- {text} ({cid})" for cid, text in page.mentions]
    if page.related:
        lines += ["", "## Related", ""]
        lines += [f"- [[{rid}]]" for rid in page.related]
    return "\n".join(lines) + "\n"


def render_page(page: Page, threshold: float, existing_body: str | None = None) -> str:
    """The page's text. With ``existing_body`` (what follows the frontmatter of the page on
    disk), everything outside the generated region is kept byte for byte (the human block and
    any text a human added); a new page gets an empty human block."""
    body = render_body(page, threshold)
    generated = f"<!-- lifelong:{BODY_REGION}:start -->\n{body}<!-- lifelong:{BODY_REGION}:end -->\n"
    if existing_body is None:
        return f"{render_frontmatter(page)}{generated}\n{HUMAN_BLOCK}"
    rest = existing_body
    regions = {r.name: r for r in find_regions(rest)}
    region = regions.get(BODY_REGION)
    if region is None:
        tail = rest if rest.strip() else f"\n{HUMAN_BLOCK}"
        return f"{render_frontmatter(page)}{generated}{'' if tail.startswith(chr(10)) else chr(10)}{tail}"
    return f"{render_frontmatter(page)}{rest[: region.start]}{generated}{rest[region.end :]}"


# ---------------------------------------------------------------------------------------------
# reading back


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return str(value)


def evidence_from(data: Any) -> Evidence | None:
    if not isinstance(data, dict):
        return None
    path = str(data.get("path") or "")
    lines = str(data.get("lines") or "")
    if not path or not re.fullmatch(r"L\d+-L\d+", lines):
        return None
    return Evidence(
        source_id=str(data.get("source_id") or f"{path}#{lines}"),
        path=path,
        lines=lines,
        sha256=str(data.get("sha256") or ""),
        weight=float(data.get("weight") or 0.0),
        note=str(data.get("note") or ""),
        date=_text(data.get("date")),
    )


def claim_from(data: Any) -> Claim | None:
    if not isinstance(data, dict) or not data.get("text"):
        return None
    evidence = tuple(e for e in (evidence_from(x) for x in data.get("evidence") or []) if e is not None)
    text = str(data["text"])
    try:
        confidence = float(data.get("confidence") or 0.0)
    except (TypeError, ValueError):
        confidence = 0.0
    return Claim(
        id=str(data.get("id") or ""),
        key=str(data.get("key") or normalise_key(text)),
        text=text,
        status=str(data.get("status") or "active"),
        confidence=confidence,
        evidence=evidence,
        updated_at=_text(data.get("updated_at")),
        valid_from=_text(data.get("valid_from")),
        valid_to=_text(data.get("valid_to")),
    )


@dataclass(frozen=True)
class PageFile:
    """A page as found on disk (possibly hand-written or broken)."""

    path: str
    front: dict[str, Any]
    body: str
    error: str | None = None
    body_line: int = 1  # the file line the body starts on

    def line_of(self, needle: str) -> int:
        """The file line of the first body line containing ``needle`` (1 when none does)."""
        for i, line in enumerate(self.body.split("\n")):
            if needle in line:
                return self.body_line + i
        return 1

    @property
    def id(self) -> str | None:
        value = self.front.get("id")
        return str(value) if value else None

    @property
    def title(self) -> str:
        return str(self.front.get("title") or "")

    @property
    def aliases(self) -> list[str]:
        raw = self.front.get("aliases") or []
        return [str(a) for a in raw] if isinstance(raw, list) else [str(raw)]

    @property
    def claims(self) -> list[Claim]:
        raw = self.front.get("claims") or []
        return [c for c in (claim_from(x) for x in raw) if c is not None] if isinstance(raw, list) else []

    @property
    def raw_claims(self) -> list[Any]:
        raw = self.front.get("claims") or []
        return raw if isinstance(raw, list) else []

    @property
    def source_ids(self) -> list[str]:
        raw = self.front.get("source_ids") or []
        return [str(s) for s in raw] if isinstance(raw, list) else [str(raw)]

    @property
    def updated_at(self) -> Any:
        return self.front.get("updated_at")


def read_page(path: str, text: str) -> PageFile:
    try:
        front, body, offset = split_frontmatter(text)
    except InputError as exc:
        return PageFile(path, {}, text, error=str(exc))
    return PageFile(path, front, body, body_line=offset + 1)
