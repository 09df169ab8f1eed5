"""A re-elected leader is the broker's choice: Kafka picks it by a HashMap's iteration
order (ClassicGroup.java remove / maybeElectNewJoinedLeader), the reference by insertion
order. The recording here is Apache Kafka 4.1.2 with three kafka-python roundrobin
members (the conformance suite's eager-roundrobin scenario): the leader ``b`` leaves and
Kafka elects ``c``, where the reference would have taken ``a``; once reported as a
JoinCompletion violation ("leader differs")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groupspec.validate import validate_bytes

TRACE = (Path(__file__).resolve().parents[1] / "examples" / "validator-false-positives"
         / "kafka-leader-reelection.jsonl")


def _events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in TRACE.read_text(encoding="utf-8").splitlines()]


def _joins(events: list[dict[str, Any]], generation: int) -> list[dict[str, Any]]:
    return [e for e in events if e.get("api") == "JoinGroup" and e["response"]
            and e["response"]["error"] == "NONE" and e["response"]["generation_id"] == generation]


def _validate(events: list[dict[str, Any]]) -> Any:
    raw = "".join(json.dumps(e) + "\n" for e in events).encode()
    [group] = validate_bytes(raw, "leader.jsonl").groups
    return group


def test_leader_reelected_after_the_leader_left_is_the_brokers_choice() -> None:
    events = _events()
    # the recording is what the docstring says: b led generation 4, left, c leads 5
    [gen4_leader] = {e["response"]["leader"] for e in _joins(events, 4)}
    [gen5_leader] = {e["response"]["leader"] for e in _joins(events, 5)}
    assert gen4_leader.startswith("b-") and gen5_leader.startswith("c-")
    group = _validate(events)
    assert group.verdict == "conforming", group


def test_a_leader_that_rejoined_is_kept() -> None:
    """Generation 3: the leader b rejoined, so Kafka must keep it; a trace where the
    broker named a instead is still a violation."""
    events = _events()
    gen3 = _joins(events, 3)
    leader = gen3[0]["response"]["leader"]
    roster = next(e["response"]["members"] for e in gen3 if e["response"]["members"])
    other = next(e["response"]["member_id"] for e in gen3 if e["response"]["member_id"] != leader)
    for e in gen3:
        e["response"]["leader"] = other
        e["response"]["members"] = roster if e["response"]["member_id"] == other else []
    group = _validate(events)
    assert group.verdict == "violation"
    assert group.violation.rule == "JoinCompletion"
    assert group.violation.seq in {e["seq"] for e in gen3}
    # the leader comparison decided it, not the member list that moved with it
    assert group.violation.detail == "leader differs", group.violation
    assert f"leader={other}" in group.violation.broker_answered


def test_only_the_leader_changed_is_caught_by_the_leader_comparison() -> None:
    """Generation 3 with every field as Kafka answered except the leader named in the
    followers' responses: only the JoinGroup leader comparison can see it."""
    events = _events()
    gen3 = _joins(events, 3)
    leader = gen3[0]["response"]["leader"]
    follower = next(e for e in gen3 if e["response"]["member_id"] != leader)
    follower["response"]["leader"] = follower["response"]["member_id"]
    group = _validate(events)
    assert group.verdict == "violation"
    assert group.violation.rule == "JoinCompletion"
    assert group.violation.seq == follower["seq"]
    assert group.violation.detail == "leader differs", group.violation
