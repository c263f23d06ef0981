"""The record of one consolidation run: :class:`DreamRun` (its inputs, each phase's frozen result,
its reports, safety tally and how it ended), its id, and its row in ``dream_runs`` (written when
the run starts, so a crash leaves a record the next command undoes, and again when it ends)."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from lifelong.journal import Journal

from . import diary, state
from .candidates import CandidatePool
from .light import LightResult
from .memory_file import item_hash
from .promotion import DeepResult
from .rem import RemResult
from .screening import SafetyTally, neutralise_json

PLUGIN = "dreaming"
PHASES = ("light", "rem", "deep")
WATERMARK_KEY = "event_watermark"


@dataclass(frozen=True)
class Saved:
    """What saving a run with material wrote: the diary entry's source (model | offline, None:
    no entry) and the folder of its reports."""

    material: bool
    diary_source: str | None = None
    report_dir: str | None = None


@dataclass
class DreamRun:
    """One run: its inputs, each phase's frozen result as the coordinator records it
    (:meth:`record`), the reports, the safety tally and how it ended. Third-party
    ``dreaming_phase`` implementations get it too: ``run_id``, ``now``, ``mode``, ``dry_run``,
    ``journal`` for reversible writes, the reports of earlier phases and, after deep, ``promoted``."""

    run_id: str
    now: dt.datetime
    config: dict[str, Any]
    backfill: bool = False
    dry_run: bool = False
    journal: Journal | None = None
    model: str | None = None
    llm_kwargs: dict[str, Any] = field(default_factory=dict)
    event_watermark: float = 0.0
    light_result: LightResult | None = None
    rem_result: RemResult | None = None
    deep_result: DeepResult | None = None
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra_reports: dict[str, list[Any]] = field(default_factory=dict)
    completed: list[str] = field(default_factory=list)
    safety: SafetyTally = field(default_factory=SafetyTally)
    status: str = "running"
    message: str = ""
    elapsed_ms: float = 0.0
    saved: Saved | None = None
    recovered: tuple[str, ...] = ()  # what the run found a killed rollback left, and did about it

    def record(self, phase: str, result: LightResult | RemResult | DeepResult) -> dict[str, Any]:
        """The coordinator's one place to assemble a phase's result into the run."""
        if isinstance(result, LightResult):
            self.light_result = result
        elif isinstance(result, RemResult):
            self.rem_result = result
        else:
            self.deep_result = result
            self.safety.refused += len(result.plan.refused_keys)
            self.safety.refused_keys.extend(result.plan.refused_keys)
            self.safety.secrets_redacted += result.plan.secrets_redacted
        self.reports[phase] = result.report
        self.completed.append(phase)
        return result.report

    @property
    def mode(self) -> str:
        return "backfill" if self.backfill else "nightly"

    # read-only views of the phase results (what the summary, diary, rollback and tests read)
    @property
    def pool(self) -> CandidatePool | None:
        return self.light_result.pool if self.light_result else None

    @property
    def reader(self) -> Any:
        return self.light_result.reader if self.light_result else None

    @property
    def touched(self) -> frozenset[str]:
        return self.light_result.touched if self.light_result else frozenset()

    @property
    def event_watermark_next(self) -> float:
        return self.light_result.event_watermark_next if self.light_result else 0.0

    @property
    def themes(self) -> tuple[Any, ...]:
        return self.rem_result.themes if self.rem_result else ()

    @property
    def rem_summary(self) -> str:
        return self.rem_result.summary if self.rem_result else ""

    @property
    def scored(self) -> list[Any]:
        return self.deep_result.scores.scored if self.deep_result else []

    @property
    def fact_groups(self) -> dict[str, list[str]]:
        return self.deep_result.scores.fact_groups if self.deep_result else {}

    @property
    def joined(self) -> dict[str, str]:
        return self.deep_result.scores.joined if self.deep_result else {}

    @property
    def promoted(self) -> list[dict[str, Any]]:
        return self.deep_result.promoted if self.deep_result else []

    @property
    def compaction(self) -> Any:
        write = self.deep_result.write if self.deep_result else None
        return write.compaction if write else None

    @property
    def memory_regions(self) -> list[str]:
        write = self.deep_result.write if self.deep_result else None
        return write.regions if write else []

    @property
    def item_hashes(self) -> dict[str, str]:
        """key -> hash of the text written for each promoted item."""
        if self.deep_result is None:
            return {}
        return {p.key: item_hash(p.live.text) for p in self.deep_result.plan.promote}

    @property
    def human_edits(self) -> list[dict[str, str]]:
        return self.deep_result.human_edits if self.deep_result else []

    @property
    def material(self) -> bool:
        return self.saved.material if self.saved else False

    @property
    def diary_source(self) -> str | None:
        return self.saved.diary_source if self.saved else None

    @property
    def report_dir(self) -> str | None:
        return self.saved.report_dir if self.saved else None

    def as_json(self) -> dict[str, Any]:
        """The run as JSON, every string neutralised (secrets redacted, instruction-like lines
        withheld): what ``lifelong dream --json`` prints."""
        deep = self.reports.get("deep", {})
        data = {
            "version": 1,
            "run_id": self.run_id,
            "status": self.status,
            "mode": self.mode,
            "dry_run": self.dry_run,
            "now": self.now.isoformat(timespec="seconds"),
            "elapsed_ms": round(self.elapsed_ms, 1),
            "promoted": self.promoted,
            "dropped": deep.get("dropped", []),
            "blocked": deep.get("blocked", []),
            "warnings": deep.get("warnings", []),
            "compaction": deep.get("compaction"),
            "report_dir": self.report_dir,
            "diary": self.diary_source,
            "message": self.message,
            "phases": self.reports,
            "extra_phase_reports": self.extra_reports,
            "safety": self.safety.as_json(),
            "recovered": list(self.recovered),
        }
        return neutralise_json(json.loads(json.dumps(data, default=str)))


def new_run_id(now: dt.datetime) -> str:
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def record_history(store: Any, run: DreamRun) -> None:
    light = run.reports.get("light", {})
    deep_r = run.reports.get("deep", {})
    summary = {
        "promoted": [p["key"] for p in run.promoted],
        "compacted_regions": run.compaction.touched_regions() if run.compaction is not None else [],
        "memory_region": None,
        "memory_regions": run.memory_regions if run.promoted else [],
        "diary_region": diary.region_name(run.run_id) if run.diary_source else None,
        "report_dir": run.report_dir,
        "themes": [t.tag for t in run.themes][:12],
        "journal": f".lifelong/journal/{run.run_id}" if run.journal is not None else None,
        "safety": run.safety.as_json(),
    }
    state.write_run(
        store,
        {
            "run_id": run.run_id,
            "started_at": run.now.isoformat(timespec="seconds"),
            "finished_at": (run.now + dt.timedelta(milliseconds=run.elapsed_ms)).isoformat(
                timespec="seconds"
            ),
            "mode": run.mode,
            "status": run.status,
            "staged": int(light.get("snippets", 0)),
            "new_candidates": int(light.get("new_candidates", 0)),
            "signals": int(light.get("signals", 0)),
            "promoted": len(run.promoted),
            "dropped": len(deep_r.get("dropped", [])),
            "blocked": len(deep_r.get("blocked", [])),
            "memory_bytes": deep_r.get("memory_bytes"),
            "elapsed_ms": round(run.elapsed_ms, 1),
            "message": run.message,
            "summary": json.dumps(summary),
        },
    )
