"""A recording does not show when the broker's periodic group and offset expiry check runs:
Kafka runs it one offsets.retention.check.interval.ms after its shard loaded, then every
interval (GroupCoordinatorShard.onLoaded, scheduleGroupMetadataExpiration), while the
replay's coordinator counts from the trace's clock zero. An Empty group without offsets
disappears at that check, and a request after it is answered otherwise (a generation >= 0
OffsetCommit from a departed member: UNKNOWN_MEMBER_ID while the group exists, ILLEGAL_GENERATION
once it is gone). The wire fuzzer met this against Kafka 4.1.2 and its recording was lost;
here the reference coordinator plays a broker whose shard loaded at another instant."""

from __future__ import annotations

from groupspec.coordinator.coordinator import Coordinator
from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error
from groupspec.validate import validate_bytes
from groupspec.validate.replay import offsets_check_candidates
from groupspec.validate.verdict import GroupVerdict
from tests.test_validate_offset_delete import Broker, commit, stable_member

INTERVAL = 600_000
#: the broker's shard loaded at LOADED: its checks run at LOADED + k * INTERVAL (605 s, ...),
#: the replay's default ones at k * INTERVAL (600 s, ...)
LOADED = 5_000
LEFT = 10_000


def _departed_member_commits(at: int) -> tuple[Broker, int]:
    """A member joins, syncs and leaves at LEFT (the group Empty, no offsets), then commits
    with its old member id and generation at ``at``."""
    b = Broker(Coordinator(loaded_at_ms=LOADED))
    member, gen = stable_member(b)  # Stable by 3020 ms
    b.send(m.LeaveGroupRequest(group_id="g", members=(m.MemberIdentity(member, None),)), LEFT)
    b.advance(at)
    return b, commit(b, at, ("t", 0, 5), gen=gen, member=member)


def _verdict(b: Broker) -> GroupVerdict:
    [g] = validate_bytes(b.trace()).groups
    return g


def _broker_side(g: GroupVerdict) -> list[str]:
    """The broker-side divergences (the departed member's commit itself breaks a client
    rule, ClientCommitsOwnedOnly: it owns nothing any more)."""
    return [f"{d.rule}: {d.detail}" for d in g.divergences if d.side == "broker"]


def test_the_check_instant_is_searched_in_a_recording() -> None:
    # at 601 s the replay's default check (600 s) has deleted the group, the broker's
    # (605 s) not yet: the broker does not know the member
    b, rid = _departed_member_commits(601_000)
    answer = b.answer(rid)
    assert isinstance(answer, m.OffsetCommitResponse)
    assert [p.error for p in answer.partitions] == [Error.UNKNOWN_MEMBER_ID]
    g = _verdict(b)
    assert _broker_side(g) == []
    assert g.assumed.get("offsets.retention.check.at.ms") is not None
    assert any("periodic group and offset expiry check" in n for n in g.notes)


def test_a_trace_that_fits_no_check_instant_stays_a_violation() -> None:
    b, rid = _departed_member_commits(601_000)
    # a broker accepting the departed member's commit: no check instant explains it
    b.inject[rid] = m.OffsetCommitResponse(partitions=(m.OffsetCommitPartitionResponse("t", 0, Error.NONE),))
    g = _verdict(b)
    assert [d.api for d in g.divergences if d.side == "broker"] == ["OffsetCommit"]


def test_a_group_gone_at_both_checks_needs_no_search() -> None:
    b, rid = _departed_member_commits(606_000)
    answer = b.answer(rid)
    assert isinstance(answer, m.OffsetCommitResponse)
    assert [p.error for p in answer.partitions] != [Error.UNKNOWN_MEMBER_ID]
    g = _verdict(b)
    assert _broker_side(g) == []
    assert "offsets.retention.check.at.ms" not in g.assumed


def test_candidates_fall_among_the_exchanges_of_the_interval_before() -> None:
    from groupspec.validate.grouping import group_trace
    from groupspec.validate.load import load_bytes

    b, _ = _departed_member_commits(601_000)
    g = group_trace(load_bytes(b.trace(), "t")).groups["g"]
    last = g.exchanges[-1]
    cands = offsets_check_candidates(g.exchanges, last, INTERVAL)
    sent = {int(x.sent) for x in g.exchanges}
    assert cands[0] == 601_001  # just after the diverging exchange: the check comes after it
    assert all(c - 1 in sent for c in cands[:-1]) and cands[-1] == 601_000 - INTERVAL + 1
    assert all(c % INTERVAL for c in cands)


def test_kafka_recording_whose_check_must_fit_two_deletions() -> None:
    """Apache Kafka 4.1.2 recorded by the wire fuzzer with offsets.retention.check.interval.ms
    5000 (and offsets.retention.minutes 1; seed 8001): group g0, Empty without offsets, was
    deleted by the periodic check between 3.6 s and 6.0 s of the recording (a DescribeGroups
    found it, a DeleteGroups then did not), created again by a static member that left at
    6.05 s, and still there at 8.75 s (an OffsetCommit with a generation answered
    UNKNOWN_MEMBER_ID, not the ILLEGAL_GENERATION of a group that does not exist): one check
    instant must fall in the first window and the next one after 8.75 s. The placement that
    explained the first deletion put the next check at 8.72 s; the search now also tries the
    placements for the divergence that placement met."""
    import json
    from pathlib import Path

    from groupspec.conformance.runner import validation_config
    from groupspec.validate.validator import with_broker_config

    path = (Path(__file__).resolve().parents[1] / "examples" / "validator-false-positives"
            / "expiry-check-placed-for-two-deletions-kafka-4.1.2.jsonl")
    text = path.read_text(encoding="utf-8")
    header = json.loads(text.splitlines()[0])
    assert header["broker_config"]["offsets.retention.check.interval.ms"] == 5000
    config = with_broker_config(validation_config("kafka"), header["broker_config"], keep=False)
    report = validate_bytes(text.encode(), path.name, config)
    [g0] = [g for g in report.groups if g.group_id.endswith("-g0")]
    assert _broker_side(g0) == []
    assert "offsets.retention.check.at.ms" in g0.assumed
