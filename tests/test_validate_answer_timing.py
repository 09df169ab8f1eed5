"""Timing is judged (issue 16, item 2): a parked request is answered when what completes it
happens. The recording is Tansu with two confluent-kafka members (the conformance suite's
session-timeout scenario): the follower's SyncGroup, parked until the leader's assignment
arrived (seq 9, answered at once), is answered a second later (seq 13)."""

from __future__ import annotations

from pathlib import Path

from groupspec.validate import validate_path

TRACE = (Path(__file__).resolve().parents[1] / "examples" / "conformance"
         / "tansu-session-timeout-confluent-kafka.jsonl")


def test_a_parked_sync_answered_a_second_after_the_leaders_assignment_is_late() -> None:
    [g] = validate_path(TRACE).groups
    late = [d for d in g.divergences if d.rule == "AnsweredWhenDue"]
    assert [(d.seq, d.line, d.api) for d in late] == [(13, 14, "SyncGroup")]
    d = late[0]
    assert "seq 9" in d.detail and "1000 ms earlier" in d.detail
    assert d.broker_answered.startswith("SyncGroup NONE")
    assert len(d.protocol_allows) == 1 and " by " in d.protocol_allows[0]
    # the headline stays the first cause: Tansu's first generation is 0
    assert g.violation is not None and g.violation.rule == "GenerationStartsAtOne"
