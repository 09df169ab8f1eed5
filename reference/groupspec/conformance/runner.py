"""The conformance run: a broker (started here, or one already running), the recorder in
front of it, each scenario with each client library through the recorder, one trace per
scenario, and the validator's verdict on each trace.

The broker is reached directly only to create and fill the scenario's topics; the
members talk to the recorder, which rewrites the broker's advertised address so that
every connection (to the coordinator, to partition leaders) comes through it.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from groupspec.conformance.drivers import CLIENTS, CONSUMER_CLIENTS, GROUP_PROTOCOLS
from groupspec.conformance.findings import findings_of
from groupspec.conformance.members import ScenarioError
from groupspec.conformance.scenarios import RECORDS_PER_PARTITION, SCENARIOS, Context, Scenario
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.protocol.consumer_group_messages import CONSUMER_GROUP_HEARTBEAT_API_KEY
from groupspec.recorder import BackgroundRecorder, parse_address
from groupspec.validate import ReplayConfig, TraceInputError, validate_path
from groupspec.validate.verdict import INCONCLUSIVE, FileReport

#: the suites a run may be of: the members' group protocol, or ``mixed`` (classic and
#: consumer-protocol members in one group: groupspec.conformance.mixed_scenarios)
SUITES = (*GROUP_PROTOCOLS, "mixed")

#: a scenario whose clients could not be driven as scripted (the trace is validated anyway)
RUN_ERROR = "error"


@dataclass
class ScenarioResult:
    scenario: str
    title: str
    client: str
    verdict: str
    trace: str
    duration_s: float
    notes: list[str] = field(default_factory=list)
    #: what went wrong driving the clients, if anything
    run_error: str | None = None
    #: the validator's report on the trace (FileReport.to_json)
    validation: dict[str, Any] = field(default_factory=dict)
    #: exchanges per API, and every error the broker answered (seq, client, request, error)
    wire: dict[str, Any] = field(default_factory=dict)
    #: earlier attempts (a run error on a trace with no violation is retried once)
    earlier: list[dict[str, Any]] = field(default_factory=list)
    #: every distinct divergence with its timeline (groupspec.conformance.findings)
    findings: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunResult:
    broker: str
    #: how the broker was provided: "kafka 4.1.2 (started on ...)", "HOST:PORT (running)"
    broker_detail: str
    clients: list[str]
    results: list[ScenarioResult] = field(default_factory=list)
    started: str = ""
    duration_s: float = 0.0
    #: "classic", "consumer" (KIP-848) or "mixed" (both in one group)
    group_protocol: str = "classic"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "broker": self.broker,
            "broker_detail": self.broker_detail,
            "clients": self.clients,
            "started": self.started,
            "duration_s": round(self.duration_s, 1),
            "summary": self.summary(),
            "results": [r.to_json() for r in self.results],
        }
        if self.group_protocol != "classic":
            out["group_protocol"] = self.group_protocol
        return out

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        return counts


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def provide_broker(spec: str) -> Iterator[tuple[str, int, str, str, dict[str, int]]]:
    """``kafka`` or ``tansu`` (started here, stopped on exit) or ``HOST:PORT`` (running).
    Yields (host, port, label, detail, the broker settings the reference models that it is
    known to run with: a Kafka broker started here, else none)."""
    if spec in ("kafka", "tansu"):
        from groupspec.brokers import KAFKA_VERSION, KafkaBroker, make_broker

        broker = make_broker(spec)
        _log(f"starting {spec} ...")
        with broker:
            version = f" {KAFKA_VERSION}" if spec == "kafka" else ""
            detail = (f"{spec}{version}, started by groupspec on {broker.bootstrap} "
                      f"(answered Metadata after {broker.startup_s or 0:.1f} s)")
            _log(detail)
            settings = broker.group_settings() if isinstance(broker, KafkaBroker) else {}
            yield broker.host, broker.port, spec, detail, settings
        return
    host, port = parse_address(spec)
    yield host, port, spec, f"{spec}, already running", {}


def prepare_topics(upstream: str, topics: dict[str, int]) -> None:
    """Create the topics on the broker and put RECORDS_PER_PARTITION records in each
    partition (directly, not through the recorder: no group traffic)."""
    from kafka import KafkaAdminClient, KafkaProducer
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=upstream, client_id="conformance-admin")
    try:
        admin.create_topics([NewTopic(t, n, 1) for t, n in topics.items()])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=upstream, client_id="conformance-producer")
    try:
        for t, n in topics.items():
            for p in range(n):
                for i in range(RECORDS_PER_PARTITION):
                    producer.send(t, value=b"record-%d" % i, partition=p)
        producer.flush(timeout=30)
    finally:
        producer.close()


#: answers that are part of every rebalance, not worth listing (KIP-394's first join, the
#: heartbeat that tells a member to rejoin)
_ROUTINE = frozenset({"NONE", "MEMBER_ID_REQUIRED", "REBALANCE_IN_PROGRESS"})


def wire_summary(trace: Path, limit: int = 20) -> dict[str, Any]:
    """What went over the wire: exchanges per API and the error answers, in order (the
    rejected stale commit, the fenced member), less the routine ones."""
    from groupspec.trace.events import WireExchange
    from groupspec.trace.jsonl import read_events
    from groupspec.validate.compare import main_error

    counts: dict[str, int] = {}
    errors: list[str] = []
    try:
        # bytes that are not UTF-8 are read as replacement characters (the validator names the line)
        with open(trace, encoding="utf-8", errors="replace") as fh:
            for e in read_events(fh, str(trace)):
                if not isinstance(e, WireExchange):
                    continue
                counts[e.api] = counts.get(e.api, 0) + 1
                err = main_error(e.response)
                if err is None or err.name in _ROUTINE:
                    continue
                if len(errors) < limit:
                    gen = getattr(e.request, "generation_id", None)
                    member = getattr(e.request, "member_id", None)
                    who = f" member {member}" if member else ""
                    at_gen = f" generation {gen}" if gen is not None else ""
                    errors.append(f"seq {e.seq}: {e.api} from {e.client_id}{who}{at_gen}: {err.name}")
    except OSError:
        pass
    return {"exchanges": counts, "errors": errors}


def apis_not_offered(trace: Path, wanted: dict[int, str]) -> list[str]:
    """The APIs of ``wanted`` (key -> name) that no ApiVersions answer in the trace offers,
    when the trace has answered ApiVersions exchanges at all (none: nothing is known)."""
    from groupspec.trace.events import ApiVersionsEvent
    from groupspec.trace.jsonl import read_events

    offered: set[int] = set()
    answered = False
    try:
        # bytes that are not UTF-8 are read as replacement characters (the validator names the line)
        with open(trace, encoding="utf-8", errors="replace") as fh:
            for e in read_events(fh, str(trace)):
                if isinstance(e, ApiVersionsEvent) and e.error_code == 0:
                    answered = True
                    offered.update(r.api_key for r in e.api_keys)
    except OSError:
        return []
    return [f"{name} (API key {key})" for key, name in sorted(wanted.items())
            if answered and key not in offered]


def validation_config(broker: str, group_protocol: str = "classic") -> ReplayConfig:
    """How the traces of a run against ``broker`` are validated.

    The Kafka broker groupspec starts has group.initial.rebalance.delay.ms 0 and, for
    consumer groups, a shorter session timeout and heartbeat interval than Kafka's
    defaults (groupspec.brokers.kafka.KafkaBroker); the reference is given the same. A
    broker groupspec did not start is assumed to run Kafka's defaults. A mixed group
    (``mixed``) is validated as a consumer group's (its classic members' session timeouts
    are their own), with Kafka's default migration policy (``bidirectional``)."""
    if group_protocol in ("consumer", "mixed"):
        from groupspec.brokers.kafka import (
            CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS,
            CONSUMER_GROUP_SESSION_TIMEOUT_MS,
        )

        if broker == "kafka":
            return ReplayConfig(initial_delays_ms=(0, 3000), coordinator=CoordinatorConfig(
                consumer_group_session_timeout_ms=CONSUMER_GROUP_SESSION_TIMEOUT_MS,
                consumer_group_heartbeat_interval_ms=CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS),
                heartbeat_interval_known=True)
        return ReplayConfig()
    return ReplayConfig(initial_delays_ms=(0, 3000)) if broker == "kafka" else ReplayConfig()


def run_scenario(
    scenario: Scenario, client: str, host: str, port: int, label: str, out_dir: Path,
    config: ReplayConfig, attempts: int = 2, jitter_ms: float = 0.0,
    broker_config: Mapping[str, int] | None = None,
) -> ScenarioResult:
    """Run one scenario with one client; when the clients could not be driven as scripted
    and yet the broker did nothing the validator calls a violation, the failure is the
    client's (a real library can hang), and the scenario runs again, at most ``attempts``
    times in all. Earlier attempts stay in the result (``earlier``) and their traces on
    disk (``...attemptN.jsonl``); a run error with a violation is never retried."""
    earlier: list[dict[str, Any]] = []
    for attempt in range(1, attempts + 1):
        result = _run_once(scenario, client, host, port, label, out_dir, config, jitter_ms, broker_config)
        if result.run_error is None or result.verdict == "violation" or attempt == attempts:
            result.earlier = earlier
            return result
        kept = out_dir / result.trace
        moved = kept.with_name(f"{kept.stem}.attempt{attempt}.jsonl")
        kept.replace(moved)
        result.trace = str(moved.relative_to(out_dir))
        earlier.append({"trace": result.trace, "verdict": result.verdict,
                        "run_error": result.run_error, "notes": result.notes})
    raise AssertionError("unreachable")


def _run_once(
    scenario: Scenario, client: str, host: str, port: int, label: str, out_dir: Path,
    config: ReplayConfig, jitter_ms: float = 0.0, broker_config: Mapping[str, int] | None = None,
) -> ScenarioResult:
    tag = uuid.uuid4().hex[:6]
    # a mixed suite's client is a pair, CLASSIC+CONSUMER: "+" is not allowed in a topic name
    slug = client.replace("+", "_")
    topics = {f"{scenario.name}-{slug}-{suffix}-{tag}": n for suffix, n in scenario.topics.items()}
    group = f"{scenario.name}-{slug}-{tag}"
    trace = out_dir / "traces" / f"{scenario.name}--{client}.jsonl"
    logs = out_dir / "logs" / f"{scenario.name}--{client}"
    trace.parent.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    run_error: str | None = None
    ctx: Context | None = None
    try:
        prepare_topics(f"{host}:{port}", topics)
        with open(trace, "w", encoding="utf-8") as out, BackgroundRecorder(
            (host, port), out, cluster=label, note=f"conformance {scenario.name} with {client}",
            broker_config=dict(broker_config or {}), jitter_ms=jitter_ms,
        ) as rec:
            if scenario.group_protocol == "consumer":
                from groupspec.conformance.consumer_scenarios import ConsumerContext

                ctx = ConsumerContext(rec.address, client, group, topics, logs, trace=trace)
            elif scenario.group_protocol == "mixed":
                from groupspec.conformance.mixed_scenarios import MixedContext

                ctx = MixedContext(rec.address, client, group, topics, logs, trace=trace)
            else:
                ctx = Context(rec.address, client, group, topics, logs, trace=trace)
            try:
                scenario.run(ctx)
            finally:
                for m in ctx.members:
                    m.shutdown()
                released = {m.name: m.released_polls for m in ctx.members if m.released_polls}
                if released:
                    ctx.note("the driver released a stuck poll of the client library (" + ", ".join(
                        f"{name}: {n}" for name, n in released.items()) + "); see docs/conformance.md")
    except ScenarioError as e:
        run_error = str(e)
    except Exception as e:  # a failure of the run itself is reported, not raised
        # the report gets one line; the stack goes beside the member logs
        run_error = f"{type(e).__name__}: {e}"
        (logs / "run-error.log").write_text(traceback.format_exc(), encoding="utf-8")
    notes = list(ctx.notes) if ctx is not None else []
    if scenario.group_protocol in ("consumer", "mixed"):
        lacking = apis_not_offered(trace, {CONSUMER_GROUP_HEARTBEAT_API_KEY: "ConsumerGroupHeartbeat"})
        if lacking:
            # the first cause, named before what followed from it (members that never joined)
            what = (f"the broker does not offer {', '.join(lacking)} in its ApiVersions answers: "
                    "consumer-protocol (KIP-848) members cannot join")
            notes.insert(0, what)
            run_error = f"{what}; {run_error}" if run_error else what
    try:
        report = validate_path(trace, config)
    except TraceInputError as e:
        report = FileReport(str(trace), 0, (), (), error=str(e))
    verdict = report.worst()
    if not report.groups and run_error is not None:
        verdict = RUN_ERROR
    validation = report.to_json()
    try:
        lines: list[str] | None = trace.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = None
    return ScenarioResult(
        scenario=scenario.name, title=scenario.title, client=client, verdict=verdict,
        trace=str(trace.relative_to(out_dir)), duration_s=round(time.monotonic() - t0, 1),
        notes=notes, run_error=run_error, validation=validation, wire=wire_summary(trace),
        findings=[f.to_json() for f in findings_of(validation, lines)],
    )


def run_conformance(
    broker: str,
    clients: Sequence[str] = CLIENTS,
    scenarios: Sequence[Scenario] = SCENARIOS,
    out_dir: Path = Path("conformance-report"),
    progress: Callable[[str], None] = _log,
    *,
    parallel: bool = True,
    label: str | None = None,
    config: ReplayConfig | None = None,
    group_protocol: str = "classic",
    jitter_ms: float = 0.0,
    attempts: int = 2,
) -> RunResult:
    """Run every scenario with every client against ``broker`` and write the traces and
    ``summary.json`` under ``out_dir`` (the reports are :mod:`.report`'s).

    With ``parallel`` the clients run side by side (each client's scenarios one after the
    other, each scenario on its own group and topics): a scenario spends most of its time
    waiting for a timeout, so this halves the run. ``label`` names a running broker in the
    report (default: its address); ``config`` overrides how traces are validated.

    ``jitter_ms`` delays each request on its way to the broker by up to that long, at
    random (the recorder's ``jitter_ms``): other interleavings of the same scenario, to
    look for what a plain run rarely shows.

    ``attempts``: how many times in all a scenario runs when its clients could not be driven
    as scripted and the broker did nothing the validator calls a violation (:func:`run_scenario`).

    ``group_protocol`` ``consumer`` runs the KIP-848 suite: pass its clients
    (``CONSUMER_CLIENTS``) and scenarios (``consumer_scenarios.CONSUMER_SCENARIOS``);
    ``mixed`` the mixed-group suite, whose clients are library pairs
    (``mixed_scenarios.MIXED_CLIENTS``) and scenarios ``mixed_scenarios.MIXED_SCENARIOS``."""
    if group_protocol not in SUITES:
        raise ValueError(f"unknown group protocol {group_protocol} (known: {', '.join(SUITES)})")
    if group_protocol == "mixed":
        from groupspec.conformance.mixed_scenarios import MIXED_PAIRS

        known: Sequence[str] = MIXED_PAIRS
    else:
        known = CONSUMER_CLIENTS if group_protocol == "consumer" else CLIENTS
    for c in clients:
        if c not in known:
            raise ValueError(f"unknown client {c} (known: {', '.join(known)})")
    for s in scenarios:
        if s.group_protocol != group_protocol:
            raise ValueError(f"scenario {s.name} is of the {s.group_protocol} protocol, not {group_protocol}")
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    with provide_broker(broker) as (host, port, given, detail, settings):
        name = label or given
        run = RunResult(broker=name, broker_detail=detail, clients=list(clients), started=started,
                        group_protocol=group_protocol)
        cfg = config or validation_config(broker, group_protocol)
        total = len(clients) * len(scenarios)
        done: dict[tuple[str, str], ScenarioResult] = {}
        lock = threading.Lock()
        counter = [0]

        def one_client(client: str) -> None:
            for scenario in scenarios:
                with lock:
                    counter[0] += 1
                    i = counter[0]
                progress(f"[{i}/{total}] {name} / {client} / {scenario.name} ...")
                result = run_scenario(scenario, client, host, port, name, out_dir, cfg,
                                      attempts=attempts, jitter_ms=jitter_ms, broker_config=settings)
                with lock:
                    done[(client, scenario.name)] = result
                extra = f"; run error: {result.run_error.splitlines()[0]}" if result.run_error else ""
                progress(f"[{i}/{total}] {name} / {client} / {scenario.name}: "
                         f"{result.verdict.upper()} ({result.duration_s:.1f} s){extra}")

        if parallel and len(clients) > 1:
            threads = [threading.Thread(target=one_client, args=(c,), name=f"conformance-{c}")
                       for c in clients]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            for c in clients:
                one_client(c)
        run.results = [done[(c, s.name)] for c in clients for s in scenarios if (c, s.name) in done]
    run.duration_s = time.monotonic() - t0
    (out_dir / "summary.json").write_text(json.dumps(run.to_json(), indent=2) + "\n", encoding="utf-8")
    return run


def exit_code(run: RunResult) -> int:
    """0 when every scenario is conforming; 1 when some scenario shows a violation;
    2 otherwise (inconclusive verdicts or scenarios that could not be run)."""
    verdicts = {r.verdict for r in run.results}
    if "violation" in verdicts:
        return 1
    if verdicts - {"conforming"} or any(r.run_error for r in run.results):
        return 2
    return 0


__all__ = ["INCONCLUSIVE", "RUN_ERROR", "RunResult", "ScenarioResult", "exit_code", "run_conformance"]
