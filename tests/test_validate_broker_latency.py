"""A loaded broker reads a request long after the recorder stamped it: the validator must
allow any moment of the request's [sent, received] interval, not only the replay's slack.

Found in CI (two workers, TLC beside a real Kafka): a surviving member's heartbeat, sent
while another member's session still ran and answered after it ran out, came back
REBALANCE_IN_PROGRESS; the validator handled the heartbeat at most ``slack_ms`` after its
send time and called Kafka's answer a HeartbeatAnswer violation.

The cases edit one committed Kafka 4.1.2 recording: member b is killed, and a's heartbeats
go on until one is answered REBALANCE_IN_PROGRESS once b's session (6 s) has expired.
Here a's last heartbeats before that answer are dropped and the one sent about 600 ms
before the expiry gets the rebalance answer, received either after the expiry (a broker
that read it late: conforming) or before it (no broker could have known: a violation).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groupspec.assignors.server_spec import TopicMetadata
from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol.consumer_group_messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    HeartbeatTopicPartitions,
)
from groupspec.protocol.errors import Error
from groupspec.protocol.topic_id import TopicId
from groupspec.trace.events import APIS, Header, MetadataEvent, MetadataTopic, WireExchange
from groupspec.trace.jsonl import event_to_json
from groupspec.validate import CONFORMING, VIOLATION, validate_bytes
from groupspec.validate.validator import validate_path

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "examples" / "conformance" / "kafka-4.1.2" / "session-timeout--confluent-kafka.jsonl"
#: a's heartbeat sent about 600 ms before b's session expired, and the two after it (the
#: second of which Kafka answered REBALANCE_IN_PROGRESS)
READ_LATE, DROPPED = 60, (62, 64)


def _edited(tmp_path: Path, received_after_sent_ms: float) -> Path:
    events: list[dict[str, Any]] = [
        json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    [hb] = [e for e in events if e.get("seq") == READ_LATE]
    [answered] = [e for e in events if e.get("seq") == DROPPED[-1]]
    assert hb["api"] == "Heartbeat" and hb["response"] == {"error": "NONE"}
    assert answered["response"] == {"error": "REBALANCE_IN_PROGRESS"}
    hb["response"] = answered["response"]
    hb["received_ms"] = hb["sent_ms"] + received_after_sent_ms
    kept = [e for e in events if e.get("seq") not in DROPPED]
    for seq, e in enumerate(kept):
        e["seq"] = seq  # a gap in seq would say events were lost
    out = tmp_path / "edited.jsonl"
    out.write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")
    return out


def test_a_heartbeat_read_late_sees_a_session_that_ran_out_in_its_interval(tmp_path: Path) -> None:
    # answered 730 ms after it was sent: b's session ran out meanwhile
    [group] = validate_path(_edited(tmp_path, 730.0)).groups
    assert group.verdict == "conforming", group


def test_a_rebalance_answer_before_the_session_ran_out_is_a_violation(tmp_path: Path) -> None:
    # answered 400 ms after it was sent: b's session still ran whenever the broker read it
    [group] = validate_path(_edited(tmp_path, 400.0)).groups
    assert group.verdict == "violation", group
    assert group.violation is not None
    assert (group.violation.rule, group.violation.api) == ("HeartbeatAnswer", "Heartbeat")
    assert group.violation.broker_answered == "Heartbeat REBALANCE_IN_PROGRESS"


def _commit_read_late(tmp_path: Path, commit_answered_after_ms: float, hb_after_ms: float = 124.0) -> Path:
    """b's last OffsetCommit (which sets b's session deadline) answered
    ``commit_answered_after_ms`` after it was sent, and a's heartbeat sent ``hb_after_ms``
    after the deadline the commit's send time gives answered NONE."""
    events: list[dict[str, Any]] = [
        json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    [commit] = [e for e in events if e.get("seq") == B_LAST_COMMIT]
    [hb] = [e for e in events if e.get("seq") == DROPPED[0]]
    assert commit["api"] == "OffsetCommit" and commit["client_id"] == "b"
    assert hb["api"] == "Heartbeat" and hb["response"] == {"error": "NONE"}
    commit["received_ms"] = commit["sent_ms"] + commit_answered_after_ms
    hb["sent_ms"] = commit["sent_ms"] + SESSION_MS + hb_after_ms
    hb["received_ms"] = hb["sent_ms"] + 1.0
    out = tmp_path / "commit-late.jsonl"
    out.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return out


#: b's last request before it is killed, and b's session timeout
B_LAST_COMMIT, SESSION_MS = 38, 6000


def test_a_session_set_by_a_request_read_late_runs_out_late(tmp_path: Path) -> None:
    # the commit answered 600 ms after it was sent: the broker may have set b's deadline
    # up to 600 ms later than the send time says
    [group] = validate_path(_commit_read_late(tmp_path, 600.0)).groups
    assert group.verdict == "conforming", group


def test_a_session_set_by_a_request_read_late_runs_out_by_its_response_plus_the_session(
        tmp_path: Path) -> None:
    # the commit answered 250 ms after it was sent, a's heartbeat 350 ms after the deadline
    # its send time gives: however late the broker read the commit, b had expired by then
    [group] = validate_path(_commit_read_late(tmp_path, 250.0, 350.0)).groups
    assert group.verdict == "violation", group
    assert group.violation is not None
    assert (group.violation.rule, group.violation.broker_answered) == (
        "HeartbeatSignalsRebalance", "Heartbeat NONE")


def test_a_session_set_by_a_request_read_at_once_runs_out_on_time(tmp_path: Path) -> None:
    # answered 8 ms after it was sent: b's session had run out when a's heartbeat came
    [group] = validate_path(_commit_read_late(tmp_path, 8.0)).groups
    assert group.verdict == "violation", group
    assert group.violation is not None
    # (b expired: a's heartbeat should have been told to rejoin)
    assert (group.violation.rule, group.violation.broker_answered) == (
        "HeartbeatSignalsRebalance", "Heartbeat NONE")


# -- a KIP-848 member's session ----------------------------------------------------------

FOO = TopicId(0x51F00)
#: Kafka's default group.consumer.session.timeout.ms
CONSUMER_SESSION_MS = 45_000


def _consumer_trace(b_last_answered_after_ms: float) -> bytes:
    """Members a and b of a consumer group (KIP-848) reconcile; b's last heartbeat, sent at
    T, is read by the broker at T + 600 ms; b then goes silent. The broker (the reference
    coordinator, its timers fired at each request's time) answers a's heartbeats: at
    T + session + 300 ms b is still a member, at T + session + 800 ms it has expired and a
    is given every partition. The recording stamps b's last heartbeat sent at T and
    answered ``b_last_answered_after_ms`` later."""
    c = Coordinator()
    c.set_topics([TopicMetadata(FOO, "foo", 4)])
    events: list[object] = [Header(source="recorder", minor=2),
                            MetadataEvent(1, 0.0, (MetadataTopic("foo", FOO, 4),))]
    epoch = {"a": 0, "b": 0}
    owned: dict[str, tuple[HeartbeatTopicPartitions, ...]] = {"a": (), "b": ()}

    def hb(member: str, read_at: int, sent: float | None = None, received: float | None = None,
           **kw: Any) -> ConsumerGroupHeartbeatResponse:
        n = len(events)
        req = ConsumerGroupHeartbeatRequest(group_id="g", member_id=member, member_epoch=epoch[member],
                                            topic_partitions=owned[member], **kw)
        c.advance(read_at)
        resp = c.handle(n, req, read_at).response_to(n)
        assert isinstance(resp, ConsumerGroupHeartbeatResponse) and resp.error is Error.NONE
        events.append(WireExchange(
            seq=n, connection=f"{member}#1", client_id=member, api="ConsumerGroupHeartbeat",
            api_key=APIS["ConsumerGroupHeartbeat"][0], api_version=1, correlation_id=n,
            group_id="g", sent_ms=float(read_at) if sent is None else sent,
            received_ms=read_at + 1.0 if received is None else received, request=req, response=resp))
        epoch[member] = resp.member_epoch
        if resp.assignment is not None:
            owned[member] = resp.assignment.topic_partitions
        return resp

    now = 1000
    for who in ("a", "b"):
        now += 100
        hb(who, now, rebalance_timeout_ms=5000, subscribed_topic_names=("foo",))
    for _ in range(3):
        for who in ("a", "b"):
            now += 100
            hb(who, now)
    assert owned["a"] and owned["b"]
    t = now + 100
    hb("b", t + 600, sent=float(t), received=t + b_last_answered_after_ms)
    at = t + 700
    while at + 5000 < t + CONSUMER_SESSION_MS:
        at += 5000
        hb("a", at)
    still = hb("a", t + CONSUMER_SESSION_MS + 300)
    assert still.assignment is None  # b is still a member: nothing changes for a
    gone = hb("a", t + CONSUMER_SESSION_MS + 800)
    assert gone.member_epoch > still.member_epoch  # b expired: a new epoch for a
    lines = [event_to_json(e) for e in events]  # type: ignore[arg-type]
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


def test_a_consumer_session_set_by_a_heartbeat_read_late_runs_out_late() -> None:
    [group] = validate_bytes(_consumer_trace(601.0), "late.jsonl").groups
    assert group.verdict == CONFORMING, group


def test_a_consumer_session_set_by_a_heartbeat_read_at_once_runs_out_on_time() -> None:
    # answered 1 ms after it was sent: the broker read it by then, so b's session ran out
    # before a's heartbeat at T + session + 300 ms
    [group] = validate_bytes(_consumer_trace(1.0), "prompt.jsonl").groups
    assert group.verdict == VIOLATION, group
    assert group.violation is not None and group.violation.api == "ConsumerGroupHeartbeat"


def _join_read_late(tmp_path: Path, sent_before_ms: float, answered_after_ms: float) -> Path:
    """The recording with one more exchange: b (killed after its heartbeat at ...108,960,
    its session 6 s) rejoins with its member id, sent ``sent_before_ms`` before
    ...115,000 (the recording's epoch milliseconds, shortened) and answered
    UNKNOWN_MEMBER_ID ``answered_after_ms`` after it; the replay's deadline for b's session
    is ...115,075."""
    events: list[dict[str, Any]] = [
        json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]
    [first, join] = [e for e in events if e.get("seq") in (16, 20)]  # b's two first JoinGroups
    assert (first["response"]["error"], join["response"]["error"]) == ("MEMBER_ID_REQUIRED", "NONE")
    base = 1795466115000.0
    rejoin = json.loads(json.dumps(join))
    rejoin["request"]["member_id"] = join["response"]["member_id"]
    rejoin["sent_ms"], rejoin["received_ms"] = base - sent_before_ms, base + answered_after_ms
    rejoin["correlation_id"] = 1 + max(e["correlation_id"] for e in events
                                       if e.get("kind") == "exchange" and e["connection"] == join["connection"])
    rejoin["response"] = {**first["response"], "error": "UNKNOWN_MEMBER_ID",
                          "member_id": join["response"]["member_id"]}
    at = next(i for i, e in enumerate(events) if e.get("kind") == "exchange" and e["sent_ms"] > rejoin["sent_ms"])
    events.insert(at, rejoin)
    for seq, e in enumerate(events):
        e["seq"] = seq
    out = tmp_path / "join-read-late.jsonl"
    out.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return out


def test_a_join_read_late_finds_its_member_expired(tmp_path: Path) -> None:
    """A JoinGroup answered with an error was answered when it was read: any time of its
    interval. b's rejoin sent 150 ms before its session ran out and answered 125 ms after
    it: a loaded broker read it late and found b gone (UNKNOWN_MEMBER_ID). The replay used
    to handle a JoinGroup at most the slack after its send time (a's heartbeat sent within
    its interval moved it only 3 ms short of the expiry) and reported JoinCompletion."""
    [group] = validate_path(_join_read_late(tmp_path, 150.0, 200.0)).groups
    assert group.verdict == "conforming", group.divergences


def test_a_join_answered_before_its_member_could_have_expired_is_a_violation(tmp_path: Path) -> None:
    # the control: answered at 115,060, before b's session can have run out
    path = _join_read_late(tmp_path, 150.0, 60.0)
    [group] = validate_path(path).groups
    assert group.verdict == "violation"
    assert [(d.rule, d.broker_answered) for d in group.divergences][:1] == [
        ("JoinCompletion", "JoinGroup UNKNOWN_MEMBER_ID")]
