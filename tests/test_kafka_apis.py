"""The broker's API layer (KafkaApis.scala, Kafka 4.1.2) rules kept in
coordinator/kafka_apis.py, and the validator applying them to recorded exchanges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupspec.conformance.runner import validation_config
from groupspec.coordinator import kafka_apis
from groupspec.protocol import messages as m
from groupspec.protocol.errors import Error
from groupspec.validate import validate_bytes, validate_path

ROOT = Path(__file__).resolve().parents[1]
#: recorded against Kafka 4.1.2 by groupspec.conformance.wire_fuzz (seed 15): line 12 is a
#: SyncGroup v5 with neither protocol type nor name, answered INCONSISTENT_GROUP_PROTOCOL
RECORDING = ROOT / "examples" / "validator-false-positives" / "sync-v5-without-protocol-kafka-4.1.2.jsonl"


def _sync(ptype: str | None, pname: str | None) -> m.SyncGroupRequest:
    return m.SyncGroupRequest(group_id="g", generation_id=1, member_id="a",
                              protocol_type=ptype, protocol_name=pname)


@pytest.mark.parametrize("ptype, pname", [(None, None), ("consumer", None), (None, "range")])
def test_sync_group_v5_without_protocol_type_or_name_is_refused(ptype: str | None, pname: str | None) -> None:
    assert kafka_apis.answer_before_coordinator(5, _sync(ptype, pname)) == \
        m.SyncGroupResponse(error=Error.INCONSISTENT_GROUP_PROTOCOL)
    # before v5 the fields do not exist on the wire: nothing is refused
    assert kafka_apis.answer_before_coordinator(4, _sync(ptype, pname)) is None


def test_sync_group_v5_with_both_goes_to_the_coordinator() -> None:
    assert kafka_apis.answer_before_coordinator(5, _sync("consumer", "range")) is None
    assert kafka_apis.answer_before_coordinator(9, m.HeartbeatRequest(group_id="g", generation_id=1,
                                                                      member_id="a")) is None


def test_delete_groups_asks_the_coordinator_once_per_group() -> None:
    req = m.DeleteGroupsRequest(groups_names=("b", "a", "b", "a", "c"))
    assert kafka_apis.as_coordinator_sees(req) == m.DeleteGroupsRequest(groups_names=("b", "a", "c"))
    plain = m.DeleteGroupsRequest(groups_names=("a",))
    assert kafka_apis.as_coordinator_sees(plain) is plain


def test_the_recording_of_kafka_conforms() -> None:
    report = validate_path(RECORDING, validation_config("kafka"))
    assert report.groups and all(g.verdict == "conforming" for g in report.groups), \
        [(g.group_id, g.violation) for g in report.groups]


def test_a_broker_that_lets_the_request_through_is_named() -> None:
    """The same recording with line 12 answered as the coordinator would (the unknown
    member): the validator names the API layer's rule."""
    lines = RECORDING.read_text(encoding="utf-8").splitlines()
    ev = json.loads(lines[11])
    assert ev["api"] == "SyncGroup" and ev["api_version"] == 5
    assert ev["response"]["error"] == "INCONSISTENT_GROUP_PROTOCOL"
    ev["response"]["error"] = "UNKNOWN_MEMBER_ID"
    lines[11] = json.dumps(ev)
    report = validate_bytes("\n".join(lines).encode(), "mutated", validation_config("kafka"))
    violation = next(g.violation for g in report.groups if g.violation is not None)
    assert (violation.line, violation.rule) == (12, "SyncProtocolConsistent")
    assert violation.protocol_allows == ("SyncGroup INCONSISTENT_GROUP_PROTOCOL",)
