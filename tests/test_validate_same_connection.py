"""A request's answer arrived before the next request on the same connection was sent, so
the broker handled it first: the replay must not let the reference's timers for it run past
that send time (the slack it allows across connections does not apply). The recording is
Tansu with two kafka-python members (the conformance suite's eager-range scenario): Tansu
completes the first join with generation 0 where Kafka starts at 1. The divergence used to
be reported one request late, at the leader's SyncGroup (INCONSISTENT_GROUP_PROTOCOL,
because the reference had not completed the join yet)."""

from __future__ import annotations

from pathlib import Path

from groupspec.validate import validate_path

TRACE = (Path(__file__).resolve().parents[1] / "examples" / "conformance"
         / "tansu-eager-range-kafka-python.jsonl")


def test_divergence_is_the_join_answered_before_the_sync_on_its_connection() -> None:
    [group] = validate_path(TRACE).groups
    assert group.verdict == "violation"
    v = group.violation
    assert v is not None
    assert (v.seq, v.line, v.api) == (5, 6, "JoinGroup")
    assert "generation=0" in v.broker_answered
    assert any("generation=1" in allowed for allowed in v.protocol_allows)
