"""Verdicts: one per group, and the report for one trace file.

- **conforming**: the replay found an order and timing in which the reference coordinator
  answers every request as the broker did, and no replay-free check failed.
- **violation**: the first divergent event (seq and line), what the broker answered, what
  the protocol allows there, the rule and the Kafka source it comes from. Only evidence
  that no missing event could explain is a violation.
- **inconclusive**: the events do not decide; ``missing`` says what is missing, with line
  numbers (unreadable lines, dropped events, undecodable frames, a trace that starts after
  the group already existed, a search that hit its bound).

Besides the verdict, a group lists every divergence found (``divergences``, in seq order):
the replay resynchronises after each one and goes on judging. Each is a finding with the
side that deviated (``broker`` here; client-side rules append theirs with ``client``),
whether it is decisive on its own, and the earlier divergence it may be a consequence of.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from groupspec.validate.problems import InputProblem

CONFORMING = "conforming"
VIOLATION = "violation"
INCONCLUSIVE = "inconclusive"

#: which party a finding says deviated from Kafka
BROKER = "broker"
CLIENT = "client"


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
    #: who deviated: "broker" (the coordinator's answers) or "client"
    side: str = BROKER
    #: decisive on its own (False: something missing, history before the trace, the search
    #: bound or an earlier undecided divergence could explain it)
    definite: bool = True
    #: seq of an earlier divergence whose effect on the replayed state this one may be
    consequence_of: int | None = None
    #: what would decide it, when it is not definite
    undecided_because: str = ""


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
    #: every finding, in seq order (the replay goes on past each divergence), capped at
    #: ReplayConfig.max_divergences for the replay's
    divergences: tuple[Divergence, ...] = ()
    #: the replay stopped before the trace's end (the cap, or a divergence it could not
    #: resynchronise after)
    divergences_truncated: bool = False
    #: the replay search's budget: alternatives allowed per divergence, and the most one
    #: divergence (or the whole trace, when none) used
    search_budget: int = 0
    search_used: int = 0
    #: per check, (events it covered, events it applies to): the replay's exchanges judged,
    #: the records the record invariants followed, ...
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)

    def distinct(self) -> list[Divergence]:
        """One divergence per distinct deviation (side, rule, API and what the broker
        answered, ignoring member ids and generations), the first of each."""
        seen: set[tuple[str, str, str, str]] = set()
        out: list[Divergence] = []
        for d in self.divergences:
            key = (d.side, d.rule, d.api, deviation_key(d.broker_answered))
            if key not in seen:
                seen.add(key)
                out.append(d)
        return out

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


def deviation_key(answer: str) -> str:
    """An answer's summary without what changes between occurrences of the same deviation
    (the words after the API and error: member ids, generations, assignments)."""
    return " ".join(answer.split()[:2])


def exit_code(reports: list[FileReport]) -> int:
    """0: every group conforming and the input clean; 1: a violation anywhere; 2: otherwise
    (inconclusive verdicts only, or bad input)."""
    worst = {r.worst() for r in reports}
    if VIOLATION in worst:
        return 1
    if INCONCLUSIVE in worst or not reports:
        return 2
    return 0
