"""A request left unanswered while its client goes on sending on the same connection (issue
16, item 2): over a recorded (TCP) connection the broker answers requests in order, so such a
request was never answered, and that is a violation naming the time Kafka answers it by, not
an inconclusive "lost" request. Traces whose network loses single messages (the simulator's)
are judged without that premise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from groupspec.validate import CONFORMING, VIOLATION, validate_bytes
from tests.test_validate_violations import dump, events

RECORDING = Path(__file__).parents[1] / "examples/conformance/kafka-4.1.2/cooperative-sticky--kafka-python.jsonl"


def _drop_answer(api: str, source: str = "recorder") -> tuple[bytes, dict[str, Any]]:
    """The recording with the answer to the first ``api`` exchange that has a later request
    on its connection removed (as a broker that never answered it)."""
    objs: list[dict[str, Any]] = events(RECORDING.read_text(encoding="utf-8"))
    objs[0]["source"] = source
    exchanges = [o for o in objs if o["kind"] == "exchange"]
    target = next(
        o for o in exchanges
        if o["api"] == api and o["response"] is not None
        and any(x["connection"] == o["connection"] and x["sent_ms"] > o["received_ms"] + 1_000
                for x in exchanges)
    )
    target["response"] = None
    target["received_ms"] = None
    return dump(objs).encode(), target


def test_the_unmodified_recording_conforms() -> None:
    report = validate_bytes(RECORDING.read_bytes())
    assert report.groups and all(g.verdict == CONFORMING for g in report.groups), report.groups


def test_a_heartbeat_never_answered_on_a_live_connection_is_a_violation_naming_the_rule() -> None:
    raw, target = _drop_answer("Heartbeat")
    [g] = [g for g in validate_bytes(raw).groups if g.group_id == target["group_id"]]
    assert g.verdict == VIOLATION, g
    found = [d for d in g.divergences if d.rule == "AnsweredBeforeLaterRequests"]
    assert found and found[0].seq == target["seq"], g.divergences
    assert found[0].broker_answered == "no answer"
    assert f"connection {target['connection']}" in found[0].detail


def test_a_join_never_answered_on_a_live_connection_is_a_violation() -> None:
    raw, target = _drop_answer("JoinGroup")
    [g] = [g for g in validate_bytes(raw).groups if g.group_id == target["group_id"]]
    assert g.verdict == VIOLATION, g
    assert any(
        d.rule == "AnsweredBeforeLaterRequests" and d.seq == target["seq"] for d in g.divergences
    ), g.divergences


def test_the_same_trace_from_a_lossy_simulated_network_is_not_this_violation() -> None:
    raw, target = _drop_answer("Heartbeat", source="simulator")
    [g] = [g for g in validate_bytes(raw).groups if g.group_id == target["group_id"]]
    assert all(d.rule != "AnsweredBeforeLaterRequests" for d in g.divergences), g.divergences


def test_a_request_unanswered_before_a_later_answer_on_its_connection_is_a_violation_whatever_the_timing() -> None:
    """confluent-kafka's last OffsetCommit before its LeaveGroup (sent within the slack of
    it) made unanswered while the LeaveGroup stays answered: the broker reads a connection's
    next request only after answering the one before (SocketServer mutes the channel while a
    request is in flight), so the commit was answered first and the recording would show it.
    That the client went on sending within the slack was no evidence; that the broker
    answered the later request is."""
    path = RECORDING.with_name("eager-roundrobin--confluent-kafka.jsonl")
    objs: list[dict[str, Any]] = events(path.read_text(encoding="utf-8"))
    [target] = [o for o in objs if o.get("kind") == "exchange" and o["seq"] == 97]
    assert target["api"] == "OffsetCommit"
    later = [o for o in objs if o.get("kind") == "exchange" and o["connection"] == target["connection"]
             and o["sent_ms"] > target["sent_ms"]]
    assert later and later[0]["response"] is not None
    assert later[0]["sent_ms"] - target["received_ms"] < 1_000  # within the slack
    target["response"] = None
    target["received_ms"] = None
    [g] = validate_bytes(dump(objs).encode()).groups
    assert g.verdict == VIOLATION, g
    [d] = [d for d in g.divergences if d.rule == "AnsweredBeforeLaterRequests"]
    assert d.seq == 97 and f"seq {later[0]['seq']}" in d.detail and "in order" in d.detail, d.detail
