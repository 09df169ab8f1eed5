"""The validator: a trace in, a verdict per group out.

``validate_path`` / ``validate_bytes`` read a trace (JSON Lines or Parquet), split it by
group (:mod:`.grouping`), run the replay-free checks (:mod:`.checks`) and the replay search
(:mod:`.replay`) on each group, and decide the verdict from their evidence and the gaps
in the input (:mod:`.verdict`). Nothing here raises on a trace's content; a file that
cannot be read raises :class:`~groupspec.validate.problems.TraceInputError`.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable, Mapping
from pathlib import Path

from groupspec.coordinator.config import BROKER_SETTINGS
from groupspec.gc_pause import paused_gc
from groupspec.protocol import messages as m
from groupspec.trace.events import RECORDER_SOURCE, FetchEvent, Header, MetadataEvent, RecordEvent
from groupspec.validate import checks, client_rules
from groupspec.validate.compare import main_error
from groupspec.validate.grouping import Exchange, Gap, GroupTrace, group_trace, txn_accepted
from groupspec.validate.load import LoadedTrace, load_bytes, load_path
from groupspec.validate.problems import InputProblem
from groupspec.validate.replay import (
    Failure,
    ReplayConfig,
    ReplayResult,
    effective_budget,
    replay_group,
)
from groupspec.validate.rules import FIRST_CAUSE, reported_rule
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


#: the broker setting the replay takes as its one initial rebalance delay (the replay does
#: not read CoordinatorConfig's: it tries each of ReplayConfig.initial_delays_ms)
INITIAL_DELAY = "group.initial.rebalance.delay.ms"
#: the broker setting whose value, once known, an accepted ConsumerGroupHeartbeat's interval
#: is compared with (ReplayConfig.heartbeat_interval_known)
HEARTBEAT_INTERVAL_SETTING = "group.consumer.heartbeat.interval.ms"


def with_broker_config(config: ReplayConfig, settings: Mapping[str, object], keep: bool = True) -> ReplayConfig:
    """``config`` with broker settings by Kafka's names (a trace header's ``broker_config``,
    or ``groupspec validate --broker-config``): those the reference models
    (:data:`groupspec.coordinator.config.BROKER_SETTINGS`) go into the coordinator's
    configuration; group.initial.rebalance.delay.ms becomes the one delay the replay tries.
    Other names are ignored: they change nothing the reference answers. Naming
    group.consumer.heartbeat.interval.ms makes the interval known (compared). With ``keep``, a
    setting ``config`` already gives (not Kafka's default, or delays other than the
    default ones) is kept: a value given on the command line wins over the trace's. An
    impossible configuration raises ValueError naming the setting."""
    known = {k: v for k, v in settings.items() if k in BROKER_SETTINGS}
    delay = known.pop(INITIAL_DELAY, None)
    coordinator = config.coordinator.with_broker_settings(known, keep=keep)
    if coordinator is not config.coordinator:
        config = dataclasses.replace(config, coordinator=coordinator)
    if HEARTBEAT_INTERVAL_SETTING in known and not config.heartbeat_interval_known:
        # (with ``keep`` the value already given stays: it is known either way)
        config = dataclasses.replace(config, heartbeat_interval_known=True)
    if delay is not None and not (keep and config.initial_delays_ms != ReplayConfig.initial_delays_ms):
        value = int(config.coordinator.with_broker_settings({INITIAL_DELAY: delay})
                    .group_initial_rebalance_delay_ms)
        config = dataclasses.replace(config, initial_delays_ms=(value,))
    return config


def with_command_line(config: ReplayConfig, settings: Mapping[str, object], delays_given: bool) -> ReplayConfig:
    """``config`` with the command line's ``--broker-config`` ``settings`` over it, except
    that ``--initial-delay-ms`` (``config``'s delays, when ``delays_given``) wins over their
    delay (``groupspec validate``, ``groupspec pipeline validate``). ValueError as
    :func:`with_broker_config`."""
    delays = config.initial_delays_ms
    config = with_broker_config(config, settings, keep=False)
    return dataclasses.replace(config, initial_delays_ms=delays) if delays_given else config

#: a Located's event
_EVENT = operator.itemgetter(1)


@paused_gc()
def file_config(loaded: LoadedTrace, config: ReplayConfig | None) -> ReplayConfig | None:
    """The configuration every group of ``loaded`` is judged with (the one place this is
    decided; the Spark job calls it too): a recording's connections are reliable (recorded
    over TCP, a connection delivers everything while it is open), the header's broker
    settings, and the file's metadata images, which in a recording are what clients asked
    about (learned), not the coordinator's image."""
    # the classes of the file's events, in one pass that makes no Python frame per event:
    # most files have no metadata event, and their header first
    kinds = set(map(type, map(_EVENT, loaded.events)))
    header = (next((x.event for x in loaded.events if isinstance(x.event, Header)), None)
              if any(issubclass(k, Header) for k in kinds) else None)
    recorded = header is not None and header.source == RECORDER_SOURCE
    if (config is None or not config.reliable_connections) and recorded:
        config = dataclasses.replace(config or ReplayConfig(), reliable_connections=True)
    if recorded and (config is None or config.offsets_check_phase_known is None):
        # the broker's periodic expiry check runs at instants a recording does not show
        config = dataclasses.replace(config or ReplayConfig(), offsets_check_phase_known=False)
    if header is not None and header.broker_config:
        try:
            config = with_broker_config(config or ReplayConfig(), header.broker_config)
        except ValueError as e:
            # judged as if the header named no setting; the report names the header's line
            line = next(x.line for x in loaded.events if x.event is header)
            if not any(p.line == line and p.kind == "bad_event" for p in loaded.problems):
                loaded.problems.append(InputProblem("bad_event", loaded.source, line,
                                                    f"header broker_config: {e}"))
    metadata = (tuple(sorted((x.event for x in loaded.events if isinstance(x.event, MetadataEvent)),
                             key=lambda e: (e.at_ms, e.seq)))
                if any(issubclass(k, MetadataEvent) for k in kinds) else ())
    if metadata:
        config = dataclasses.replace(config or ReplayConfig(), metadata=metadata)
        if recorded:
            config = dataclasses.replace(config, metadata_as_learned=True)
    return config


def validate_loaded(loaded: LoadedTrace, config: ReplayConfig | None = None) -> FileReport:
    config = file_config(loaded, config)
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
    txn_commits: Iterable[Exchange] = (),
) -> GroupVerdict:
    """One group's verdict from its events, given as they come (the Spark job streams each
    group's rows through this): the exchanges in the order :func:`group_trace` leaves them
    (by send time), its records, the gaps that concern it (its own and the file's), and its
    TxnOffsetCommit exchanges (not replayed: see ReplayConfig.txn_commits)."""
    return validate_group(
        GroupTrace(group_id, list(exchanges), list(records), list(gaps), other, list(fetches),
                   txn_commits=list(txn_commits)), config)


def _from_failure(f: Failure, allowed: tuple[str, ...]) -> Divergence:
    e = f.exchange.event
    allows = allowed or ((f.allowed,) if f.allowed else ())
    rule = reported_rule(e.api, f.rule, main_error(e.response))
    return Divergence(f.exchange.seq, f.exchange.line, e.api, e.connection, e.client_id,
                      f.broker, allows, rule.name, rule.summary, rule.source, f.detail)


#: replay-free checks of what the group's leader (a client) computed: the assignor contract
_LEADER_RULES = frozenset({"AssignDisjoint", "AssignSubscribedTopicsOnly", "CooperativeRevokeFirst"})


def _from_finding(f: checks.Finding) -> Divergence:
    return Divergence(f.seq, f.line, f.api, f.connection, f.client_id, f.broker,
                      (f.allowed,) if f.allowed else (), f.rule.name, f.rule.summary,
                      f.rule.source, f.detail, side="client" if f.rule.name in _LEADER_RULES else "broker")


def _from_client(f: client_rules.ClientFinding) -> Divergence:
    return Divergence(f.seq, f.line, f.api, f.connection, f.client_id, f"client sent: {f.sent}",
                      (f.expected,), f.rule.name, f.rule.summary, f.rule.source, f.detail, side=f.side)


def _proved_unanswered(g: GroupTrace) -> set[int]:
    """Lines of exchanges with no response whose client sent again on the same connection:
    over a reliable connection the answer would have come first, so the missing response is
    the broker's, not a hole in the recording."""
    last: dict[str, float] = {}
    for x in g.exchanges:
        last[x.event.connection] = max(last.get(x.event.connection, x.sent), x.sent)
    return {x.line for x in g.exchanges
            if x.event.response is None and last[x.event.connection] > x.sent}


def _txn_note(x: Exchange) -> str:
    req = x.event.request
    parts = ", ".join(f"{p.topic}-{p.partition}@{p.committed_offset}" for p in txn_accepted(x.event))
    tid = req.transactional_id if isinstance(req, m.TxnOffsetCommitRequest) else ""
    return (f"line {x.line}: TxnOffsetCommit (transactional id {tid!r}) of [{parts}]: transactions "
            "are not modelled; from then on an OffsetFetch may answer these partitions with these "
            "offsets (the transaction committed) or the earlier ones")


def _missing(g: Gap) -> Missing:
    return Missing(g.problem.line, f"{g.problem.kind}: {g.problem.message}")


#: the reason a group is inconclusive when judging it raised: a bug of the validator's, which
#: must not cost the file's other groups their verdicts (the fuzzers look for this text)
VALIDATOR_FAILED = "the validator failed on this group (a bug in groupspec: please report it with the trace)"
#: whether such a failure is contained (the default); the tests that check the validator's
#: own consistency (the fast path's lockstep) turn it off, so that their assertions surface
CONTAIN_FAILURES = True


@paused_gc()
def validate_group(g: GroupTrace, config: ReplayConfig | None = None) -> GroupVerdict:
    """The group's verdict (:func:`_judge_group`); if judging it raises, the group is
    inconclusive naming the error (VALIDATOR_FAILED), and the file's other groups are judged."""
    if not CONTAIN_FAILURES:
        return _judge_group(g, config)
    try:
        return _judge_group(g, config)
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as e:
        return GroupVerdict(group_id=g.group_id, verdict=INCONCLUSIVE, exchanges=len(g.exchanges),
                            records=len(g.records),
                            missing=(Missing(None, f"{VALIDATOR_FAILED}: {type(e).__name__}: {e}"),))


def _judge_group(g: GroupTrace, config: ReplayConfig | None) -> GroupVerdict:
    notes: list[str] = []
    findings: list[checks.Finding] = []
    findings += checks.stale_commits_accepted(g.exchanges)
    findings += checks.one_owner_per_generation(g.exchanges)
    findings += checks.assignor_contract(g.exchanges)
    findings += checks.closed_unanswered(g.closed_unanswered)
    # (the broker's interval when it is known; otherwise only what holds whatever it is)
    findings += checks.heartbeat_intervals(
        g.exchanges, config.coordinator.consumer_heartbeat_interval_ms_of(g.group_id)
        if config is not None and config.heartbeat_interval_known else None)
    records = list(g.records) if g.records_in_seq_order else sorted(g.records, key=lambda r: r[1].seq)
    rec_findings, rec_cov = checks.record_invariants(records)
    stopped = rec_cov.stopped
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

    if g.txn_commits:
        # transactions are not modelled: the partitions a TxnOffsetCommit names may hold its
        # offsets from then on (ReplayConfig.txn_commits)
        config = dataclasses.replace(config or ReplayConfig(), txn_commits=tuple(g.txn_commits))
        for x in g.txn_commits:
            notes.append(_txn_note(x))
    result: ReplayResult | None = None
    if g.exchanges:
        result = replay_group(g.exchanges, config)
    assumed = {"group.initial.rebalance.delay.ms": result.initial_delay_ms} if result else {}
    if result is not None and result.offsets_check_ms is not None:
        # (only when the replay needed it: the clock's zero is not named)
        assumed["offsets.retention.check.at.ms"] = result.offsets_check_ms
        notes.append(f"the replay assumed the coordinator's periodic group and offset expiry check "
                     f"ran at {result.offsets_check_ms} ms (and every offsets.retention.check.interval.ms "
                     "from there): a recording does not show when the broker's shard loaded")
    explored = result.explored if result else 0
    if result is not None and result.failovers:
        notes.append(f"the replay assumed {result.failovers} coordinator failover(s)")
    unanswered = _proved_unanswered(g) if (config is not None and config.reliable_connections) else set()
    for gap in g.gaps:
        if gap.problem.kind == "missing_response":
            if gap.problem.line in unanswered:
                notes.append(f"line {gap.problem.line}: no response recorded although the client went on "
                             "sending on its connection: judged as never answered")
            else:
                notes.append(f"line {gap.problem.line}: no response recorded; replayed without checking the answer")
    search_used = max((f.explored for f in result.found), default=explored) if result else 0
    judged = len(g.exchanges)
    if result is not None and result.truncated and result.found:
        # the replay stopped at its last divergence: what came after it was not judged
        last = result.found[-1].failure.exchange.seq
        judged = sum(1 for x in g.exchanges if x.seq <= last)
    coverage: dict[str, tuple[int, int]] = {}
    if g.exchanges:
        coverage["replay"] = (judged, len(g.exchanges))
        for name in ("stale commits", "one owner per generation", "assignor contract"):
            coverage[name] = (len(g.exchanges), len(g.exchanges))
    if records:
        coverage["record invariants"] = (rec_cov.checked, rec_cov.total)
    base = {"group_id": g.group_id, "exchanges": len(g.exchanges), "records": len(g.records),
            "assumed": assumed, "alternatives_explored": explored,
            "search_budget": effective_budget(config or ReplayConfig(), len(g.exchanges)),
            "search_used": search_used,
            "divergences_truncated": bool(result and result.truncated), "coverage": coverage}

    # Every divergence the replay found, each judged on its own: decisive unless something
    # missing, history before the trace, the search bound, or an earlier undecided
    # divergence it may follow from could explain it.
    replayed: list[tuple[Divergence, list[Missing]]] = []
    revealed: dict[int, int | None] = {}
    undecided: set[int] = set()
    for found in result.found if result is not None else ():
        f = found.failure
        cutoff = f.exchange.received
        why = [_missing(gap) for gap in g.gaps
               if (gap.at_ms is None or gap.at_ms <= cutoff)
               and gap.problem.kind not in ("out_of_order", "missing_header")
               and not (gap.problem.kind == "missing_response" and gap.problem.line in unanswered)]
        if f.prehistory:
            why.append(Missing(f.exchange.line,
                               "the group's history before the trace started (the request names a "
                               "member or offset the trace never introduced)"))
        if f.unmodelled:
            why.append(Missing(f.exchange.line, f.unmodelled))
        if f.unprocessable:
            why.append(Missing(f.exchange.line, f"a request the reference can process: {f.detail}"))
        if found.bound_hit:
            why.append(Missing(f.exchange.line,
                               f"an explanation within the search bound ({found.explored} alternatives tried)"))
        if found.after is not None and found.after in undecided:
            why.append(Missing(f.exchange.line, f"a decision on the divergence at seq {found.after} it may follow from"))
        if why:
            undecided.add(f.exchange.seq)
        d = _from_failure(f, found.allowed)
        d = dataclasses.replace(d, definite=not why, consequence_of=found.after,
                                undecided_because="; ".join(w.what for w in why))
        replayed.append((d, why))
        revealed[id(d)] = found.revealed_by
    checked = [_from_finding(f) for f in findings]
    # client-side rules: evidence in what a client sent, whatever the broker did
    checked += [_from_client(c) for c in client_rules.client_findings(
        g, result, config.topic_names if config is not None else None)]
    every = sorted([d for d, _ in replayed] + checked,
                   key=lambda d: (d.seq, d.line, d.rule not in FIRST_CAUSE))
    cap = (config or ReplayConfig()).max_divergences
    if len(every) > cap:  # the cap counts every listed divergence, the checks' and clients' too
        every = every[:cap]
        base["divergences_truncated"] = True
    base["divergences"] = tuple(every)

    candidates: list[tuple[int, int, Divergence]] = [(d.seq, 1, d) for d in checked]
    # the replay's headline: the first divergence found that is decisive and follows from no
    # earlier one (later ones are listed, and count, but the first cause is named first)
    lead = next((d for d, _ in replayed if d.definite and d.consequence_of is None), None)
    if lead is not None:
        # with it: the other differences at its exchange, and those that taking the broker's
        # answer there revealed (the same join completion's answers), the first cause first
        candidates += [(lead.seq, 0 if d.rule in FIRST_CAUSE else 2, d) for d, _ in replayed
                       if d.definite and (d.seq == lead.seq or revealed[id(d)] == lead.seq)]
    if candidates:
        candidates.sort(key=lambda c: (c[0], c[1]))
        head = candidates[0][2]
        also = [d.rule for s, _, d in candidates[1:] if s == head.seq]
        if also:
            head = dataclasses.replace(head, detail=f"{head.detail} (the same answer also breaks: {', '.join(also)})")
        return GroupVerdict(verdict=VIOLATION, violation=head, notes=tuple(notes), **base)  # type: ignore[arg-type]

    if replayed:
        first, why = replayed[0]
        return GroupVerdict(verdict=INCONCLUSIVE, missing=tuple(why),
                            divergence=dataclasses.replace(first, definite=False),
                            notes=tuple(notes), **base)  # type: ignore[arg-type]

    # g.gaps holds this group's gaps and the file's unattributed ones (a line whose group
    # cannot be told may be this group's)
    own = [gap for gap in g.gaps if gap.problem.kind not in _BENIGN]
    if stopped and not own:
        # every record is checked, or the verdict says why not
        return GroupVerdict(verdict=INCONCLUSIVE,
                            missing=(Missing(rec_cov.stopped_line,
                                             f"records the record invariants can follow: {stopped} "
                                             f"({rec_cov.checked} of {rec_cov.total} checked)"),),
                            notes=tuple(notes), **base)  # type: ignore[arg-type]
    if own:
        return GroupVerdict(verdict=INCONCLUSIVE, missing=tuple(_missing(gap) for gap in own),
                            notes=tuple(notes), **base)  # type: ignore[arg-type]
    if not g.exchanges and not g.records:
        return GroupVerdict(verdict=INCONCLUSIVE,
                            missing=(Missing(None, "no replayable events of this group"),),
                            notes=tuple(notes), **base)  # type: ignore[arg-type]
    return GroupVerdict(verdict=CONFORMING, notes=tuple(notes), **base)  # type: ignore[arg-type]
