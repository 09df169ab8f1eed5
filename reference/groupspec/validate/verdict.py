"""Verdicts: one per group, and the report for one trace file.

- **conforming**: the replay found an order and timing in which the reference coordinator
  answers every request as the broker did, and no replay-free check failed.
- **violation**: the first divergent event (seq and line), what the broker answered, what
  the protocol allows there, the rule and the Kafka source it comes from. Only evidence
  that no missing event could explain is a violation.
- **inconclusive**: the events do not decide; ``missing`` says what is missing, with line
  numbers (unreadable lines, dropped events, undecodable frames, a trace that starts after
  the group already existed, a search that hit its bound).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from groupspec.validate.problems import InputProblem

CONFORMING = "conforming"
VIOLATION = "violation"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Divergence:
    seq: int
    line: int
    api: str
    connection: str
    client_id: str
    broker_answered: str
    protocol_allows: tuple[str, ...]
    rule: str
    rule_summary: str
    kafka_source: str
    detail: str
    #: who deviated: "broker" (the coordinator's answer) or "client" (what a client sent;
    #: ``connection`` and ``client_id`` name it)
    side: str = "broker"


@dataclass(frozen=True)
class Missing:
    line: int | None
    what: str


@dataclass(frozen=True)
class GroupVerdict:
    group_id: str
    verdict: str
    exchanges: int
    records: int
    violation: Divergence | None = None
    #: for inconclusive: what would decide it; for a violation, the divergence it may hide
    missing: tuple[Missing, ...] = ()
    #: the divergence an inconclusive verdict stopped at, if any
    divergence: Divergence | None = None
    notes: tuple[str, ...] = ()
    assumed: dict[str, int] = field(default_factory=dict)
    alternatives_explored: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FileReport:
    source: str
    events: int
    groups: tuple[GroupVerdict, ...]
    problems: tuple[InputProblem, ...]
    #: the file could not be read at all
    error: str | None = None

    def worst(self) -> str:
        vs = {g.verdict for g in self.groups}
        if VIOLATION in vs:
            return VIOLATION
        if INCONCLUSIVE in vs or self.error is not None or self.bad_input():
            return INCONCLUSIVE
        return CONFORMING

    def bad_input(self) -> bool:
        """Problems other than requests left unanswered (normal when a client stops)."""
        return any(p.kind != "missing_response" for p in self.problems) or not self.groups

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "events": self.events,
            "error": self.error,
            "verdict": self.worst(),
            "problems": [
                {"kind": p.kind, "line": p.line, "seq": p.seq, "group_id": p.group_id, "message": p.message}
                for p in self.problems
            ],
            "groups": [g.to_json() for g in self.groups],
        }


def exit_code(reports: list[FileReport]) -> int:
    """0: every group conforming and the input clean; 1: a violation anywhere; 2: otherwise
    (inconclusive verdicts only, or bad input)."""
    worst = {r.worst() for r in reports}
    if VIOLATION in worst:
        return 1
    if INCONCLUSIVE in worst or not reports:
        return 2
    return 0
