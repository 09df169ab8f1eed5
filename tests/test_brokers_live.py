"""Real brokers on loopback with the recorder in front: a real client group (kafka-python,
two consumers) forms, consumes, commits and leaves through the proxy, and the recording
holds the whole protocol with decoded bodies.

Each broker starts once per session. Nothing is downloaded here: ci/setup.d/30-brokers.sh
fills the cache, and a broker that cannot be provided fails these tests (never skips).
"""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from groupspec.brokers import BrokerProcess, KafkaBroker, probe_metadata
from groupspec.protocol import messages as m
from groupspec.protocol.consumer_protocol import Assignment, Subscription
from groupspec.protocol.errors import Error
from groupspec.recorder import BackgroundRecorder
from groupspec.trace.events import DecodeErrorEvent, Event, WireExchange
from groupspec.trace.jsonl import TraceLineError, read_events

PARTITIONS = 4
RECORDS = 8


# kafka_broker and tansu_broker: session fixtures in tests/conftest.py (shared with
# tests/test_conformance.py); `broker` reaches them by name, so the module carries the
# xdist group that conftest.py gives their users (one broker of each kind under ci/test)
pytestmark = pytest.mark.xdist_group("brokers")


@pytest.fixture(
    params=[pytest.param("kafka", marks=[pytest.mark.java, pytest.mark.slow]),
            pytest.param("tansu", marks=pytest.mark.slow)]
)
def broker(request: pytest.FixtureRequest) -> BrokerProcess:
    found: BrokerProcess = request.getfixturevalue(f"{request.param}_broker")
    return found


Req = TypeVar("Req")
Resp = TypeVar("Resp")


@dataclass(frozen=True)
class Typed(Generic[Req, Resp]):
    """An exchange with its request and response at their own types."""

    event: WireExchange
    request: Req
    response: Resp | None

    @property
    def ok(self) -> Resp:
        assert self.response is not None, f"no response to {self.event}"
        return self.response


def typed(events: list[Event], req: type[Req], resp: type[Resp]) -> list[Typed[Req, Resp]]:
    out: list[Typed[Req, Resp]] = []
    for e in events:
        if isinstance(e, WireExchange) and isinstance(e.request, req):
            response = e.response
            assert response is None or isinstance(response, resp)
            request: Req = e.request
            out.append(Typed(e, request, response))
    return out


def read_trace(text: str) -> list[Event]:
    parsed = list(read_events(text.splitlines(keepends=True), "recording"))
    assert not [e for e in parsed if isinstance(e, TraceLineError)]
    return [e for e in parsed if not isinstance(e, TraceLineError)]


def run_group(bootstrap: str, topic: str, group: str) -> dict[str, int]:
    """Two consumers subscribe, poll until the partitions are shared out and each member
    has consumed its partitions to the end, heartbeat a little, commit and close. Returns
    client id -> records seen (a record may be seen twice: before the second member
    joins, the first owns every partition and commits nothing)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="admin")
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="producer")
    for i in range(RECORDS):
        producer.send(topic, value=b"record-%d" % i, partition=i % PARTITIONS)
    producer.flush(timeout=30)
    producer.close()

    names = ("member-a", "member-b")
    seen = dict.fromkeys(names, 0)
    #: name -> (partitions assigned, every assigned partition consumed to its end)
    state: dict[str, tuple[int, bool]] = dict.fromkeys(names, (0, False))
    finish = threading.Event()
    failures: list[BaseException] = []

    def member(name: str) -> None:
        # one thread per consumer, polling continuously, as an application would
        try:
            c = KafkaConsumer(
                bootstrap_servers=bootstrap, group_id=group, client_id=name,
                auto_offset_reset="earliest", enable_auto_commit=False,
                session_timeout_ms=6000, heartbeat_interval_ms=300, max_poll_interval_ms=10000,
            )
            try:
                c.subscribe([topic])
                while not finish.is_set():
                    for records in c.poll(timeout_ms=100).values():
                        seen[name] += len(records)
                    assigned = c.assignment()
                    state[name] = (len(assigned), all(
                        c.position(tp) == RECORDS // PARTITIONS for tp in assigned
                    ))
                c.commit()
            finally:
                c.close()
        except BaseException as e:
            failures.append(e)

    threads = [threading.Thread(target=member, args=(n,), daemon=True) for n in names]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    settled_at: float | None = None
    try:
        while not failures:
            assert time.monotonic() < deadline, f"group never settled: {state}"
            counts = [n for n, _ in state.values()]
            if all(counts) and sum(counts) == PARTITIONS and all(done for _, done in state.values()):
                settled_at = settled_at or time.monotonic()
                if time.monotonic() - settled_at > 1.5:  # time for a few heartbeats
                    break
            else:
                settled_at = None
            time.sleep(0.05)
    finally:
        finish.set()
        for t in threads:
            t.join(timeout=60)
    if failures:
        raise failures[0]
    return seen


def test_kafka_broker_answers_metadata(kafka_broker: KafkaBroker) -> None:
    assert kafka_broker.running
    assert probe_metadata(kafka_broker.host, kafka_broker.port) == [
        (1, kafka_broker.host, kafka_broker.port)
    ]
    assert kafka_broker.startup_s is not None and kafka_broker.startup_s < 120
    props = kafka_broker.server_properties()
    assert props["group.initial.rebalance.delay.ms"] == "0"
    assert props["offsets.topic.replication.factor"] == "1"


@pytest.mark.slow
def test_recorded_group(broker: BrokerProcess) -> None:
    topic, group = f"t-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    out = io.StringIO()
    with BackgroundRecorder((broker.host, broker.port), out, cluster=broker.kind) as rec:
        proxy = rec.recorder.listen
        seen = run_group(rec.address, topic, group)
    assert sum(seen.values()) >= RECORDS
    events = read_trace(out.getvalue())
    assert not [e for e in events if isinstance(e, DecodeErrorEvent)]
    recorded = [e for e in events if isinstance(e, WireExchange)]
    assert recorded and all(e.group_id == group and e.cluster == broker.kind for e in recorded)
    for e in recorded:
        assert e.received_ms is not None and e.sent_ms <= e.received_ms

    # the coordinator the clients were told is the proxy
    found = [x.response for x in typed(events, m.FindCoordinatorRequest, m.FindCoordinatorResponse)
             if x.response is not None and x.response.error is Error.NONE]
    assert found and all((r.host, r.port) == proxy for r in found)

    joins = [x for x in typed(events, m.JoinGroupRequest, m.JoinGroupResponse)
             if x.response is not None and x.response.error is Error.NONE]
    assert {x.event.client_id for x in joins} == {"member-a", "member-b"}
    last_join = {x.event.client_id: x for x in joins}
    members = {client: x.ok.member_id for client, x in last_join.items()}
    assert all(mid.startswith(client) for client, mid in members.items())
    generations = {x.ok.generation_id for x in last_join.values()}
    assert len(generations) == 1
    (generation,) = generations
    (leader_join,) = [x for x in last_join.values() if x.ok.members]
    assert leader_join.ok.leader == leader_join.ok.member_id
    assert {x.member_id for x in leader_join.ok.members} == set(members.values())
    for member in leader_join.ok.members:
        assert Subscription.decode(member.metadata).topics == (topic,)
    for x in last_join.values():
        assert x.request.session_timeout_ms == 6000 and x.request.rebalance_timeout_ms == 10000
        assert x.request.client_id == x.event.client_id

    syncs = [x for x in typed(events, m.SyncGroupRequest, m.SyncGroupResponse)
             if x.request.generation_id == generation and x.response is not None
             and x.response.error is Error.NONE]
    assert [x for x in syncs if x.request.assignments]  # the leader's
    assignments = {x.request.member_id: Assignment.decode(x.ok.assignment).partitions for x in syncs}
    assert set(assignments) == set(members.values())
    owned = [p for parts in assignments.values() for p in parts.get(topic, ())]
    assert sorted(owned) == list(range(PARTITIONS))

    beats = [x for x in typed(events, m.HeartbeatRequest, m.HeartbeatResponse)
             if x.request.generation_id == generation]
    assert beats and {x.request.member_id for x in beats} <= set(members.values())

    committed: dict[int, int] = {}
    commits = typed(events, m.OffsetCommitRequest, m.OffsetCommitResponse)
    assert {c.event.client_id for c in commits} == set(members)
    for c in commits:
        assert c.request.generation_id == generation
        assert c.request.member_id == members[c.event.client_id]
        assert c.ok.errors() == {Error.NONE}
        committed.update({p.partition: p.committed_offset for p in c.request.partitions})
    assert committed == dict.fromkeys(range(PARTITIONS), RECORDS // PARTITIONS)

    leaves = typed(events, m.LeaveGroupRequest, m.LeaveGroupResponse)
    assert {i.member_id for x in leaves for i in x.request.members} == set(members.values())
    assert all(x.ok.error is Error.NONE for x in leaves)


def free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.java
@pytest.mark.slow
def test_record_command_against_kafka(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    trace = tmp_path / "admin.jsonl"
    listen = f"127.0.0.1:{free_tcp_port()}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "groupspec", "record", "--listen", listen,
         "--upstream", kafka_broker.bootstrap, "--out", str(trace), "--quiet"],
        stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith(f"recording {listen} -> {kafka_broker.bootstrap}"), line
        admin = KafkaAdminClient(bootstrap_servers=listen, client_id="recorded-admin")
        groups = admin.list_groups()
        assert isinstance(groups, list)
        admin.describe_groups(["no-such-group"])
        admin.close()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "group exchanges" in err
    events = read_trace(trace.read_text(encoding="utf-8"))
    listed = typed(events, m.ListGroupsRequest, m.ListGroupsResponse)
    assert listed and listed[0].event.client_id == "recorded-admin"
    assert listed[0].ok.error is Error.NONE
    described = typed(events, m.DescribeGroupsRequest, m.DescribeGroupsResponse)
    assert described and described[0].request.groups == ("no-such-group",)
    assert [(g.group_id, g.group_state) for g in described[0].ok.groups] == [("no-such-group", "Dead")]


@pytest.mark.slow
def test_broker_command_runs_until_interrupted() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "groupspec", "broker", "start", "--kind", "tansu"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ},
    )
    try:
        assert proc.stdout is not None
        bootstrap = proc.stdout.readline().strip()
        host, _, port = bootstrap.rpartition(":")
        assert probe_metadata(host, int(port))
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    with pytest.raises(OSError):
        socket.create_connection((host, int(port)), timeout=1).close()


@pytest.mark.java
@pytest.mark.slow
def test_kafka_broker_starts_with_settings_and_stops_cleanly() -> None:
    broker = KafkaBroker(group_initial_rebalance_delay_ms=250, properties={"num.partitions": "3"})
    with broker:
        assert broker.running
        text = (broker.workdir / "server.properties").read_text(encoding="utf-8")
        assert "group.initial.rebalance.delay.ms=250\n" in text and "num.partitions=3\n" in text
        proc = broker.proc
        assert proc is not None
    assert proc.returncode is not None  # exited
    assert not broker.workdir.exists()
    with pytest.raises(OSError):
        socket.create_connection((broker.host, broker.port), timeout=1).close()


def test_cluster_ids_never_start_with_a_dash() -> None:
    """Kafka's storage tool reads an id starting with "-" as an option and refuses to format
    (one broker start in 64 failed that way); Uuid.randomUuid draws again, and so do we."""
    from groupspec.brokers.kafka import random_cluster_id

    ids = [random_cluster_id() for _ in range(2000)]
    assert not [i for i in ids if i.startswith("-")]
    assert all(len(i) == 22 for i in ids)
    assert len(set(ids)) == len(ids)
