"""ListGroups answers judged per group (rule ListGroupAnswer) and DescribeGroups entries
judged field by field (DescribeGroupAnswer), on real Kafka 4.1.2 recordings with the
broker's answer changed.

The recording (examples/validator-false-positives/delete-takes-a-pending-member-kafka-4.1.2.jsonl,
wire fuzz seed 6116) has a ListGroups v1 at line 41 that lists the trace's group with protocol
type "consumer". By then the group had been created with protocol type "other" (line 11,
generation 1), emptied, and joined again with "consumer": generation 3's join phase completed
at lines 35-36 and no SyncGroup followed, so the group is in CompletingRebalance. Kafka lists a
classic group with the state of its ClassicGroup in memory (GroupMetadataManager.listGroups,
ClassicGroup.asListedGroup), so that is the only state a v4 answer may show there, and "other"
is no longer its protocol type."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groupspec.conformance.runner import validation_config
from groupspec.validate.validator import validate_bytes, validate_path, with_broker_config

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "examples" / "validator-false-positives" / "delete-takes-a-pending-member-kafka-4.1.2.jsonl"
GROUP = "wf-6116-ecdc84-g0"
LINE = 41


def _judged(change: Callable[[dict[str, Any]], None], recording: Path = RECORDING, line: int = LINE,
            api: str = "ListGroups") -> list[tuple[int, str]]:
    """The broker-side divergences of ``recording`` with ``line`` changed by ``change``."""
    lines = recording.read_text(encoding="utf-8").splitlines()
    ev = json.loads(lines[line - 1])
    assert ev["api"] == api
    change(ev)
    lines[line - 1] = json.dumps(ev)
    config = with_broker_config(validation_config("kafka"), json.loads(lines[0]).get("broker_config", {}), keep=False)
    report = validate_bytes("\n".join(lines).encode(), RECORDING.name, config)
    return [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"]


def _entry(ev: dict[str, Any]) -> dict[str, Any]:
    (entry,) = [g for g in ev["response"]["groups"] if g["group_id"] == GROUP]
    assert isinstance(entry, dict)
    return entry


def _as_v4(state: str, states_filter: tuple[str, ...] = ()) -> Callable[[dict[str, Any]], None]:
    def change(ev: dict[str, Any]) -> None:
        ev["api_version"] = 4
        ev["request"]["states_filter"] = list(states_filter)
        _entry(ev)["group_state"] = state
    return change


def _left_out(version: int, connection: str | None = None) -> Callable[[dict[str, Any]], None]:
    def change(ev: dict[str, Any]) -> None:
        ev["api_version"] = version
        ev["response"]["groups"] = [g for g in ev["response"]["groups"] if g["group_id"] != GROUP]
        if connection is not None:
            ev["connection"] = connection
    return change


def test_the_recording_as_kafka_answered_conforms() -> None:
    assert _judged(lambda ev: None) == []


@pytest.mark.parametrize("state", ["Empty", "PreparingRebalance", "Stable", "Dead"])
def test_a_classic_group_is_listed_in_its_current_state_only(state: str) -> None:
    """Any state but CompletingRebalance is named, the group's earlier ones included (a read
    finds the ClassicGroup object as it is now, not as of its last written record)."""
    assert _judged(_as_v4("CompletingRebalance")) == []
    assert _judged(_as_v4(state)) == [(LINE, "ListGroupAnswer")]


def test_a_listing_before_v4_does_not_show_the_state() -> None:
    def change(ev: dict[str, Any]) -> None:
        _entry(ev)["group_state"] = "Stable"  # not on the wire before v4: not judged
    assert _judged(change) == []


def test_a_group_listed_with_an_earlier_protocol_type_is_named() -> None:
    def change(ev: dict[str, Any]) -> None:
        _entry(ev)["protocol_type"] = "other"
    assert _judged(change) == [(LINE, "ListGroupAnswer")]


def test_a_group_left_out_of_its_coordinator_s_listing_is_named() -> None:
    """Line 41 came on connection c3, which carried the group's own requests (the same
    broker, the group's coordinator)."""
    assert _judged(_left_out(1)) == [(LINE, "ListGroupAnswer")]
    assert _judged(_left_out(4)) == [(LINE, "ListGroupAnswer")]


def test_a_group_left_out_where_the_trace_cannot_tell_is_not_judged() -> None:
    """A v5 answer may leave the group out by its types filter, which traces do not keep; a
    listing on a connection that carried none of the group's requests may come from a broker
    that is not its coordinator."""
    assert _judged(_left_out(5)) == []
    assert _judged(_left_out(1, connection="elsewhere")) == []


def test_the_states_filter_is_applied_as_kafka_applies_it() -> None:
    """GroupMetadataManager.listGroups lower-cases and trims each filter; a group whose
    state is not in a non-empty filter is not listed."""
    assert _judged(_as_v4("CompletingRebalance", (" completingREBALANCE ",))) == []
    assert _judged(_as_v4("CompletingRebalance", ("Stable",))) == [(LINE, "ListGroupAnswer")]

    def filtered_out(ev: dict[str, Any]) -> None:
        _left_out(4)(ev)
        ev["request"]["states_filter"] = ["Stable", "Empty"]
    assert _judged(filtered_out) == []


def test_a_listing_with_an_error_is_not_judged_per_group() -> None:
    """An answer with a top-level error lists no group (GroupCoordinatorService.listGroups):
    which shard failed is not on the wire, so no group's replay takes it."""
    def change(ev: dict[str, Any]) -> None:
        ev["response"] = {"error": "COORDINATOR_LOAD_IN_PROGRESS", "groups": []}
    assert _judged(change) == []


#: a DescribeGroups v2 (line 14) of a Stable group of one member, protocol "range", whose
#: metadata Kafka shows because the group is Stable (ClassicGroupMember.describe)
DESCRIBED = ROOT / "examples" / "validator-false-positives" / "describe-lets-leave-precede-leader-sync-kafka-4.1.2.jsonl"
DESCRIBE_LINE = 14


def _described(change: Callable[[dict[str, Any]], None]) -> list[tuple[int, str]]:
    def on_entry(ev: dict[str, Any]) -> None:
        (entry,) = ev["response"]["groups"]
        assert entry["group_state"] == "Stable" and len(entry["members"]) == 1
        change(entry)
    return _judged(on_entry, DESCRIBED, DESCRIBE_LINE, "DescribeGroups")


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(entry: dict[str, Any]) -> None:
        target = entry
        for key in path[:-1]:
            target = target[key][0] if key == "members" else target[key]
        target[path[-1]] = value
    return change


def test_the_described_recording_as_kafka_answered_conforms() -> None:
    assert _described(lambda entry: None) == []


@pytest.mark.parametrize("path, value", [
    (("protocol_type",), "other"),
    (("protocol_data",), "roundrobin"),
    (("members", "client_id"), "someone-else"),
    (("members", "member_metadata"), ""),
    (("members", "member_assignment"), "AAE="),
])
def test_each_field_of_a_described_group_is_judged(path: tuple[str, ...], value: Any) -> None:
    assert _described(_set(path, value)) == [(DESCRIBE_LINE, "DescribeGroupAnswer")]


def test_the_client_host_is_not_judged() -> None:
    """The broker sees the recording proxy's address, not the client's."""
    assert _described(_set(("members", "client_host"), "/10.0.0.9")) == []


def test_a_leader_s_member_list_names_each_member_s_instance_id() -> None:
    """JoinGroup v5+ lists each member with its group instance id (JoinGroupResponseMember,
    KIP-345): a real kafka-python static-membership recording (line 7, v7) with the leader's
    list naming another instance id is named."""
    recording = ROOT / "examples" / "conformance" / "kafka-4.1.2" / "static-membership--kafka-python.jsonl"

    def change(ev: dict[str, Any]) -> None:
        (member,) = ev["response"]["members"]
        assert member["group_instance_id"] == "instance-b"
        member["group_instance_id"] = "instance-z"
    lines = recording.read_text(encoding="utf-8").splitlines()
    report = validate_bytes("\n".join(lines).encode(), recording.name, validation_config("kafka"))
    assert [d for g in report.groups for d in g.divergences if d.side == "broker"] == []
    assert _judged(change, recording, 7, "JoinGroup") == [(7, "JoinCompletion")]


#: an OffsetFetch v8 (line 19) of the three partitions by name: 10, 18 and none committed
FETCHED = DESCRIBED
FETCH_LINE = 19
#: an OffsetFetch v2 of every committed offset (line 15): partitions 2, 0 and 1
FETCHED_ALL = ROOT / "examples" / "validator-false-positives" / "describe-before-new-group-commits-kafka-4.1.2.jsonl"
FETCH_ALL_LINE = 15


def _fetched(change: Callable[[list[dict[str, Any]]], object], recording: Path = FETCHED,
             line: int = FETCH_LINE) -> list[tuple[int, str]]:
    def on_partitions(ev: dict[str, Any]) -> None:
        parts = ev["response"]["partitions"]
        assert len(parts) == 3
        change(parts)
    return _judged(on_partitions, recording, line, "OffsetFetch")


def test_the_fetched_recordings_as_kafka_answered_conform() -> None:
    assert _fetched(lambda parts: None) == []
    assert _fetched(lambda parts: None, FETCHED_ALL, FETCH_ALL_LINE) == []


@pytest.mark.parametrize("index", [1, 2])
def test_a_partition_asked_for_and_left_unanswered_is_named(index: int) -> None:
    """OffsetMetadataManager.fetchOffsets answers every partition asked for, -1 for one
    with no committed offset (index 2)."""
    assert _fetched(lambda parts: parts.pop(index)) == [(FETCH_LINE, "FetchReturnsCommitted")]


def test_a_committed_offset_left_out_of_a_fetch_of_all_is_named() -> None:
    assert _fetched(lambda parts: parts.pop(0), FETCHED_ALL, FETCH_ALL_LINE) == [
        (FETCH_ALL_LINE, "FetchReturnsCommitted")]


@pytest.mark.parametrize("error, named", [
    ("UNKNOWN_TOPIC_OR_PARTITION", True),
    ("COORDINATOR_NOT_AVAILABLE", True),
    ("UNSTABLE_OFFSET_COMMIT", False),  # a pending transactional offset (require_stable)
    ("TOPIC_AUTHORIZATION_FAILED", False),  # KafkaApis, before the coordinator
])
def test_a_partition_error_is_named_unless_kafka_can_give_it(error: str, named: bool) -> None:
    def change(parts: list[dict[str, Any]]) -> None:
        parts[0].update(error=error, committed_offset=-1)
    assert _fetched(change) == ([(FETCH_LINE, "FetchReturnsCommitted")] if named else [])


def _as_v5(types: list[str] | None, group_type: str | None, listed: bool = True) -> Callable[[dict[str, Any]], None]:
    """Line 41 as a v5 answer recorded with its types filter (``types``; None: not
    recorded) and the group's type (``group_type``), the group listed or left out."""
    def change(ev: dict[str, Any]) -> None:
        ev["api_version"] = 5
        ev["request"]["types_filter"] = types
        if listed:
            entry = _entry(ev)
            entry["group_state"] = "CompletingRebalance"
            entry["group_type"] = group_type
        else:
            ev["response"]["groups"] = [g for g in ev["response"]["groups"] if g["group_id"] != GROUP]
    return change


def test_a_v5_listing_is_judged_by_its_types_filter_and_the_group_s_type() -> None:
    """GroupMetadataManager.listGroups keeps the groups whose type (Group.GroupType, parsed
    case-insensitively) is in a non-empty types filter; ClassicGroup.asListedGroup gives
    the type "classic"."""
    assert _judged(_as_v5([], "classic")) == []
    assert _judged(_as_v5(["CLASSIC", "share"], "classic")) == []
    assert _judged(_as_v5([], "consumer")) == [(LINE, "ListGroupAnswer")]
    assert _judged(_as_v5(["consumer"], "classic")) == [(LINE, "ListGroupAnswer")]
    assert _judged(_as_v5(["consumer"], None, listed=False)) == []
    assert _judged(_as_v5(["bogus"], None, listed=False)) == []
    assert _judged(_as_v5([], None, listed=False)) == [(LINE, "ListGroupAnswer")]
    # recorded before the fields: the type is not judged, nor is an omission
    assert _judged(_as_v5(None, None)) == []
    assert _judged(_as_v5(None, None, listed=False)) == []


def test_a_commit_answered_inside_a_delete_may_have_been_deleted_with_the_group() -> None:
    """Apache Kafka 4.1.2 recorded (wire fuzz, seed 9607): a simple OffsetCommit (line 22,
    generation -1) sent 5 ms after a DeleteGroups of its Empty group (line 23) was answered
    NONE 6 ms before the delete was; 1.1 s later an OffsetFetch of every offset (line 50)
    was answered with none. The broker handled the commit first and the delete took its
    offsets with the group. Once fetches of all offsets were checked for the partitions they
    leave out, the search had to reach back to that commit: choices since the last accepted
    commit of a partition the fetch reads are tried (``Replayer._horizon``)."""
    recording = ROOT / "examples" / "validator-false-positives" / "commit-inside-a-delete-then-fetch-all-kafka-4.1.2.jsonl"
    assert _judged(lambda ev: None, recording, 50, "OffsetFetch") == []

    def kept(ev: dict[str, Any]) -> None:  # the offsets as if the delete came first
        ev["response"]["partitions"] = [
            {"topic": "wf-9607-4726d7-t", "partition": p, "committed_offset": o, "metadata": "", "error": "NONE"}
            for p, o in ((0, 35), (2, 18))]
    assert _judged(kept, recording, 50, "OffsetFetch") == []

    def half(ev: dict[str, Any]) -> None:  # no order gives one of the two offsets alone
        kept(ev)
        ev["response"]["partitions"].pop()
    assert _judged(half, recording, 50, "OffsetFetch") == [(50, "FetchReturnsCommitted")]


# ---------------------------------------------------------------- committed leader epochs
#: a real Kafka 4.1.2 recording (2026-11-29): simple-group commits through the recorder, raw
#: wire requests on one connection: OffsetCommit v8 of le-t 0, 1, 2 at offsets 10, 20, 30
#: with leader epochs 5, none (-1) and 7 (line 6); OffsetFetch v8, v5, v4 of the three and v9
#: of them and of all (lines 7-11: v5+ answer 5, -1, 7; v4 carries no epoch); OffsetCommit v5
#: of partition 0 at 11 (line 12, a version without the field: none); OffsetFetch v7 (line 13:
#: -1, -1, 7). As OffsetAndMetadata.fromRequest and OffsetMetadataManager.fetchOffsets say.
EPOCHS = ROOT / "examples" / "conformance" / "wire" / "offset-leader-epochs-kafka-4.1.2.jsonl"


def _epochs_changed(line: int, partition: int, epoch: int) -> bytes:
    events = [json.loads(x) for x in EPOCHS.read_text(encoding="utf-8").splitlines()]
    parts = events[line - 1]["response"]["partitions"]
    [p] = [p for p in parts if p["partition"] == partition]
    p["committed_leader_epoch"] = epoch
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def test_kafka_keeps_each_committed_leader_epoch_and_a_broker_that_does_not_is_named() -> None:
    report = validate_path(EPOCHS)
    assert [g.verdict for g in report.groups] == ["conforming"]

    def named(raw: bytes) -> list[tuple[int, str]]:
        return [(d.line, d.rule) for g in validate_bytes(raw).groups for d in g.divergences if d.side == "broker"]

    # a broker that drops the epoch (v8), answers another (v9 of all), or keeps the old one
    # after a commit that carried none (v7)
    for line, partition, epoch in ((7, 0, -1), (11, 2, 6), (13, 0, 5)):
        assert named(_epochs_changed(line, partition, epoch)) == [(line, "FetchReturnsCommitted")], line
    detail = next(d.detail for g in validate_bytes(_epochs_changed(7, 0, -1)).groups for d in g.divergences)
    assert "leader epoch of le-t-0 (answered -1, committed 5)" in detail
    # OffsetFetch v4 answers carry no epoch: what the recorder read there is not judged
    assert named(_epochs_changed(9, 0, 3)) == []
