"""The validator: a trace in, a verdict per group out.

``validate_path`` / ``validate_bytes`` read a trace (JSON Lines or Parquet), split it by
group (:mod:`.grouping`), run the replay-free checks (:mod:`.checks`) and the replay search
(:mod:`.replay`) on each group, and decide the verdict from their evidence and the gaps
in the input (:mod:`.verdict`). Nothing here raises on a trace's content; a file that
cannot be read raises :class:`~groupspec.validate.problems.TraceInputError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from groupspec.gc_pause import paused_gc
from groupspec.trace.events import FetchEvent, RecordEvent
from groupspec.validate import checks, client_rules
from groupspec.validate.grouping import Exchange, Gap, GroupTrace, group_trace
from groupspec.validate.load import LoadedTrace, load_bytes, load_path
from groupspec.validate.replay import Failure, ReplayConfig, ReplayResult, replay_group
from groupspec.validate.verdict import (
    CONFORMING,
    INCONCLUSIVE,
    VIOLATION,
    Divergence,
    FileReport,
    GroupVerdict,
    Missing,
)

#: gap kinds that do not, alone, make a group inconclusive (a client that stops leaves
#: requests unanswered; the replay accounts for them)
_BENIGN = frozenset({"missing_response", "out_of_order", "duplicate_event", "missing_header"})


@paused_gc()
def validate_path(path: str | Path, config: ReplayConfig | None = None) -> FileReport:
    return validate_loaded(load_path(path), config)


@paused_gc()
def validate_bytes(raw: bytes, source: str = "<trace>", config: ReplayConfig | None = None) -> FileReport:
    return validate_loaded(load_bytes(raw, source), config)


@paused_gc()
def validate_loaded(loaded: LoadedTrace, config: ReplayConfig | None = None) -> FileReport:
    grouped = group_trace(loaded)
    verdicts = tuple(
        validate_group(g, config) for _, g in sorted(grouped.groups.items())
    )
    return FileReport(loaded.source, grouped.events, verdicts, tuple(grouped.problems))


def validate_group_events(
    group_id: str,
    exchanges: Iterable[Exchange],
    records: Iterable[tuple[int, RecordEvent]] = (),
    gaps: Iterable[Gap] = (),
    other: int = 0,
    config: ReplayConfig | None = None,
    fetches: Iterable[tuple[int, FetchEvent]] = (),
) -> GroupVerdict:
    """One group's verdict from its events, given as they come (the Spark job streams each
    group's rows through this): the exchanges in the order :func:`group_trace` leaves them
    (by send time), its records, and the gaps that concern it (its own and the file's)."""
    return validate_group(
        GroupTrace(group_id, list(exchanges), list(records), list(gaps), other, list(fetches)), config)


def _from_failure(f: Failure, allowed: tuple[str, ...]) -> Divergence:
    e = f.exchange.event
    allows = allowed or ((f.allowed,) if f.allowed else ())
    return Divergence(f.exchange.seq, f.exchange.line, e.api, e.connection, e.client_id,
                      f.broker, allows, f.rule.name, f.rule.summary, f.rule.source, f.detail)


#: replay-free checks of what the group's leader (a client) computed: the assignor contract
_LEADER_RULES = frozenset({"AssignDisjoint", "AssignSubscribedTopicsOnly", "CooperativeRevokeFirst"})


def _from_finding(f: checks.Finding) -> Divergence:
    return Divergence(f.seq, f.line, f.api, f.connection, f.client_id, f.broker,
                      (f.allowed,) if f.allowed else (), f.rule.name, f.rule.summary,
                      f.rule.source, f.detail, side="client" if f.rule.name in _LEADER_RULES else "broker")


def _from_client(f: client_rules.ClientFinding) -> Divergence:
    return Divergence(f.seq, f.line, f.api, f.connection, f.client_id, f"client sent: {f.sent}",
                      (f.expected,), f.rule.name, f.rule.summary, f.rule.source, f.detail, side=f.side)


def _missing(g: Gap) -> Missing:
    return Missing(g.problem.line, f"{g.problem.kind}: {g.problem.message}")


@paused_gc()
def validate_group(g: GroupTrace, config: ReplayConfig | None = None) -> GroupVerdict:
    notes: list[str] = []
    findings: list[checks.Finding] = []
    findings += checks.stale_commits_accepted(g.exchanges)
    findings += checks.one_owner_per_generation(g.exchanges)
    findings += checks.assignor_contract(g.exchanges)
    records = sorted(g.records, key=lambda r: r[1].seq)
    rec_findings, stopped = checks.record_invariants(records)
    if stopped:
        notes.append(f"record invariants not checked past {stopped}")
    holes = [gap for gap in g.gaps if gap.problem.kind not in _BENIGN]
    if holes and rec_findings:
        # a dropped or unreadable record can break a record invariant by itself
        notes.append(
            f"record invariant {rec_findings[0].rule.name} fails at line {rec_findings[0].line}, "
            "but records are missing: not counted"
        )
    else:
        findings += rec_findings
    findings.sort(key=lambda f: (f.seq, f.line))

    result: ReplayResult | None = None
    if g.exchanges:
        result = replay_group(g.exchanges, config)
    assumed = {"group.initial.rebalance.delay.ms": result.initial_delay_ms} if result else {}
    explored = result.explored if result else 0
    if result is not None and result.failovers:
        notes.append(f"the replay assumed {result.failovers} coordinator failover(s)")
    for gap in g.gaps:
        if gap.problem.kind == "missing_response":
            notes.append(f"line {gap.problem.line}: no response recorded; replayed without checking the answer")
    base = {"group_id": g.group_id, "exchanges": len(g.exchanges), "records": len(g.records),
            "assumed": assumed, "alternatives_explored": explored}

    failure = result.failure if result is not None and not result.ok else None
    # The replay's divergence is a violation only if nothing missing could explain it.
    explaining: list[Gap] = []
    if failure is not None:
        cutoff = failure.exchange.received
        explaining = [
            gap for gap in g.gaps
            if gap.at_ms is None or gap.at_ms <= cutoff
        ]
        explaining = [gap for gap in explaining if gap.problem.kind not in ("out_of_order", "missing_header")]
    definite_replay = (
        failure is not None and not failure.prehistory and not failure.unprocessable
        and not (result is not None and result.bound_hit) and not explaining
    )
    candidates: list[tuple[int, int, Divergence]] = [(f.seq, 0, _from_finding(f)) for f in findings]
    if failure is not None and definite_replay and result is not None:
        candidates.append((failure.exchange.seq, 1, _from_failure(failure, result.allowed)))
    # client-side rules: evidence in what a client sent, whatever the broker did
    candidates += [(c.seq, 2, _from_client(c)) for c in client_rules.client_findings(g, result)]
    if candidates:
        candidates.sort(key=lambda c: (c[0], c[1]))
        return GroupVerdict(verdict=VIOLATION, violation=candidates[0][2], notes=tuple(notes), **base)  # type: ignore[arg-type]

    if failure is not None and result is not None:
        missing: list[Missing] = [_missing(gap) for gap in explaining]
        if failure.prehistory:
            missing.append(Missing(failure.exchange.line,
                                   "the group's history before the trace started (the request names a "
                                   "member or offset the trace never introduced)"))
        if failure.unprocessable:
            missing.append(Missing(failure.exchange.line, f"a request the reference can process: {failure.detail}"))
        if result.bound_hit:
            missing.append(Missing(failure.exchange.line,
                                   f"an explanation within the search bound ({result.explored} alternatives tried)"))
        return GroupVerdict(verdict=INCONCLUSIVE, missing=tuple(missing),
                            divergence=_from_failure(failure, result.allowed), notes=tuple(notes), **base)  # type: ignore[arg-type]

    # g.gaps holds this group's gaps and the file's unattributed ones (a line whose group
    # cannot be told may be this group's)
    own = [gap for gap in g.gaps if gap.problem.kind not in _BENIGN]
    if own:
        return GroupVerdict(verdict=INCONCLUSIVE, missing=tuple(_missing(gap) for gap in own),
                            notes=tuple(notes), **base)  # type: ignore[arg-type]
    if not g.exchanges and not g.records:
        return GroupVerdict(verdict=INCONCLUSIVE,
                            missing=(Missing(None, "no replayable events of this group"),),
                            notes=tuple(notes), **base)  # type: ignore[arg-type]
    return GroupVerdict(verdict=CONFORMING, notes=tuple(notes), **base)  # type: ignore[arg-type]
