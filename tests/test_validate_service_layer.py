"""What goes on the wire is GroupCoordinatorService's answer, not only the shard's
(group-coordinator/.../GroupCoordinatorService.java): the validator judges brokers by it.

Each test is a small hand-written trace; each fails when the service-layer rule it covers
is removed from the reference coordinator or the validator.
"""

from __future__ import annotations

import json
from typing import Any

from groupspec.validate import CONFORMING, VIOLATION, validate_bytes

HEADER = {"kind": "header", "format": "groupspec-trace", "version": 1, "source": "test", "seq": 0}


def exchange(seq: int, api: str, key: int, version: int, request: dict[str, Any],
             response: dict[str, Any], group: str = "g", conn: str = "c1", at: float = 1000.0) -> dict[str, Any]:
    return {"kind": "exchange", "seq": seq, "connection": conn, "client_id": "cl", "api": api,
            "api_key": key, "api_version": version, "correlation_id": seq, "group_id": group,
            "sent_ms": at + seq, "received_ms": at + seq + 0.5, "request": request, "response": response}


def trace(*events: dict[str, Any]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in (HEADER, *events)).encode()


def leave(version: int, response: dict[str, Any], dynamic: bool = True) -> bytes:
    members = [{"member_id": "", "group_instance_id": "i-2", "reason": None}]
    if dynamic:
        members.insert(0, {"member_id": "m-1", "group_instance_id": None, "reason": None})
    return trace(exchange(1, "LeaveGroup", 13, version, {"group_id": "g", "members": members}, response))


def test_leave_of_an_unknown_group_is_none_with_unknown_member_per_identity() -> None:
    ok = leave(3, {"error": "NONE", "members": [
        {"member_id": "m-1", "group_instance_id": None, "error": "UNKNOWN_MEMBER_ID"},
        {"member_id": "", "group_instance_id": "i-2", "error": "UNKNOWN_MEMBER_ID"},
    ]})
    [g] = validate_bytes(ok).groups
    assert g.verdict == CONFORMING, g
    # the shard's answer (top-level UNKNOWN_MEMBER_ID) is not what Kafka puts on the wire (an
    # admin removal by instance id: no member id from before the trace could explain it)
    shard = leave(3, {"error": "UNKNOWN_MEMBER_ID", "members": []}, dynamic=False)
    [g] = validate_bytes(shard).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "LeaveGroupAnswer"
    assert "UNKNOWN_MEMBER_ID" in g.violation.protocol_allows[0]
    # the member and instance ids must be echoed
    no_echo = leave(3, {"error": "NONE", "members": [
        {"member_id": "", "group_instance_id": None, "error": "UNKNOWN_MEMBER_ID"},
    ]}, dynamic=False)
    [g] = validate_bytes(no_echo).groups
    assert g.verdict == VIOLATION


def test_leave_v2_carries_the_first_member_error_at_top_level() -> None:
    # LeaveGroupResponse.java: versions 0-2 carry one error, the first member's
    [g] = validate_bytes(leave(2, {"error": "UNKNOWN_MEMBER_ID", "members": []}, dynamic=False)).groups
    assert g.verdict == CONFORMING, g
    [g] = validate_bytes(leave(2, {"error": "NONE", "members": []}, dynamic=False)).groups
    assert g.verdict == VIOLATION


def _heartbeat(error: str) -> bytes:
    req = {"group_id": "g", "generation_id": 1, "member_id": "m-1", "group_instance_id": None}
    return trace(exchange(1, "Heartbeat", 12, 4, req, {"error": error}))


def test_heartbeat_is_never_answered_load_in_progress() -> None:
    # GroupCoordinatorService.heartbeat answers NONE when the group is still loading
    [g] = validate_bytes(_heartbeat("COORDINATOR_LOAD_IN_PROGRESS")).groups
    assert g.verdict == VIOLATION and g.violation is not None
    assert g.violation.rule == "HeartbeatWhileLoading"
    assert "GroupCoordinatorService.java" in g.violation.kafka_source
    # the other coordinator errors stay allowed
    [g] = validate_bytes(_heartbeat("NOT_COORDINATOR")).groups
    assert g.verdict == CONFORMING, g


def _describe(version: int, error: str) -> bytes:
    resp = {"groups": [{"error": error, "group_id": "g", "group_state": "Dead", "protocol_type": "",
                        "protocol_data": "", "members": []}]}
    return trace(exchange(1, "DescribeGroups", 15, version, {"groups": ["g"]}, resp))


def test_describe_of_an_unknown_group_is_group_id_not_found_from_v6() -> None:
    # GroupMetadataManager.describeGroups: GROUP_ID_NOT_FOUND only when requestVersion() >= 6
    assert validate_bytes(_describe(6, "GROUP_ID_NOT_FOUND")).groups[0].verdict == CONFORMING
    assert validate_bytes(_describe(5, "NONE")).groups[0].verdict == CONFORMING
    assert validate_bytes(_describe(6, "NONE")).groups[0].verdict == VIOLATION
    assert validate_bytes(_describe(5, "GROUP_ID_NOT_FOUND")).groups[0].verdict == VIOLATION
