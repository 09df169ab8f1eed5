"""Historical Kafka broker bugs (docs/historical-bugs-backlog.md) written into real Kafka
4.1.2 recordings: each test changes the answer the fixed broker gave into the one the buggy
broker gave, and the oracle must name it, on the broker's side, at that line, with the
rule that decides it; the recording as it is stays conforming. (The client bugs are named
by the client rules: tests/test_client_rules.py, one test per KAFKA issue.)"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groupspec.conformance.runner import validation_config
from groupspec.coordinator.config import CoordinatorConfig
from groupspec.validate.replay import ReplayConfig
from groupspec.validate.validator import validate_bytes

ROOT = Path(__file__).resolve().parents[1]
CLASSIC = ROOT / "examples" / "conformance" / "kafka-4.1.2"
KIP848 = ROOT / "examples" / "validator-false-positives" / "kip848"
MIXED = ROOT / "examples" / "validator-false-positives" / "mixed"
#: recordings made for a historical bug (the script that made each beside it)
HISTORICAL = ROOT / "examples" / "historical-bugs"
#: the broker settings the KIP-848 recordings were made with (tests/test_validate_regressions.py)
KIP848_CONFIG = ReplayConfig(coordinator=dataclasses.replace(
    CoordinatorConfig(), consumer_group_session_timeout_ms=6000, consumer_group_heartbeat_interval_ms=1000))

Edit = Callable[[dict[str, Any], list[dict[str, Any]]], None]


def _broker_findings(path: Path, line: int, edit: Edit | None, config: ReplayConfig) -> list[tuple[int, str]]:
    """The broker-side divergences of ``path`` with line ``line`` changed by ``edit`` (given
    that line's event and every line's, all parsed)."""
    events = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    if edit is not None:
        edit(events[line - 1], events)
    raw = "".join(json.dumps(e) + "\n" for e in events).encode()
    report = validate_bytes(raw, path.name, config)
    return [(d.line, d.rule) for g in report.groups for d in g.divergences if d.side == "broker"]


def _kafka_7610(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
    # KIP-394 skipped: the new member's JoinGroup v5 is admitted at once (the answer its
    # second JoinGroup got, line 8)
    e["response"] = events[7]["response"]


def _kafka_8500(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
    # the restarted static member is handed its old member id (line 12's) back
    e["response"]["member_id"] = events[11]["response"]["member_id"]


def _kafka_16367_extra(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
    # a partial heartbeat (owned partitions only, nothing changed) answered with the
    # assignment all the same (line 7's)
    e["response"]["assignment"] = events[6]["response"]["assignment"]


def _kafka_8653(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
    # b's JoinGroup v0 answered at once, alone in generation 2 (a v0 member's rebalance
    # timeout taken as 0: the join phase ends at the first join, without a); a's heartbeat
    # sent meanwhile (line 8) then finds a gone. Kafka 4.1.2 takes a's session timeout for
    # it and waits for a, who rejoins (line 10)
    b = e["response"]["member_id"]
    e["received_ms"] = e["sent_ms"] + 1
    e["response"]["leader"] = b
    e["response"]["members"] = [{"member_id": b, "group_instance_id": None,
                                 "metadata": e["request"]["protocols"][0]["metadata"]}]
    events[7]["response"]["error"] = "UNKNOWN_MEMBER_ID"


def _kafka_16367_missing(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
    # a join (epoch 0) answered without its assignment
    e["response"]["assignment"] = None


def _kafka_16147(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
    # a joining member handed partitions another member (b, line 7) still holds
    mine, theirs = e["response"]["assignment"], events[6]["response"]["assignment"]
    e["response"]["assignment"] = {"topic_partitions": mine["topic_partitions"] + theirs["topic_partitions"]}


def _kafka_16249(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
    # b acknowledged the revocation asked at line 13 (it reports 2 partitions, not 3): the
    # buggy broker keeps its epoch (1) and goes on asking; Kafka 4.1.2 moves it to epoch 2
    e["response"]["member_epoch"] = e["request"]["member_epoch"]


def _pr_16145(answer: str) -> Edit:
    def edit(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
        # a classic member's OffsetCommit v8 in a consumer group made stale (generation 1,
        # the member holds 3), answered as the broker before PR #16145 did: Kafka 4.1.2
        # answers ILLEGAL_GENERATION, the error a classic client understands
        e["request"]["generation_id"] = 1
        for p in e["response"]["partitions"]:
            p["error"] = answer
    return edit


def _kafka_17228(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
    # a consumer-protocol member joining with the instance id a crashed classic static member
    # still holds (instance-a), answered as 3.8 and 3.9 did: Kafka 4.1.2 replaces the member
    e["response"] = {**e["response"], "error": "UNRELEASED_INSTANCE_ID",
                     "error_message": "Static member instance-a with unknown member id rejoins, "
                                      "but the previous member has not left yet",
                     "member_id": None, "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}


CASES = [
    # (bug, recording, line changed, change, the broker finding expected first)
    ("KAFKA-7610", CLASSIC / "cooperative-sticky--confluent-kafka.jsonl", 7, _kafka_7610, "JoinMemberIdRequired"),
    ("KAFKA-8500", CLASSIC / "static-membership--kafka-python.jsonl", 38, _kafka_8500, "MemberIdFresh"),
    ("KAFKA-8653", HISTORICAL / "join-group-v0-kafka-4.1.2.jsonl", 9, _kafka_8653, "JoinWaitsForAllMembers"),
    ("KAFKA-16367-extra", KIP848 / "regex-topic-order-kafka-4.1.2.jsonl", 10, _kafka_16367_extra,
     "ConsumerReconciliation"),
    ("KAFKA-16367-missing", KIP848 / "regex-topic-order-kafka-4.1.2.jsonl", 14, _kafka_16367_missing,
     "ConsumerReconciliation"),
    ("KAFKA-16147", KIP848 / "regex-topic-order-kafka-4.1.2.jsonl", 14, _kafka_16147, "ConsumerReconciliation"),
    ("KAFKA-16249", KIP848 / "member-order-tie-break-kafka-4.1.2.jsonl", 16, _kafka_16249, "ConsumerReconciliation"),
    # (named after the broker's refusal: the reference replaces the member, NONE)
    ("KAFKA-17228", MIXED / "static-upgrade-replaces-a-classic-member-kafka-4.1.2.jsonl", 38, _kafka_17228,
     "ConsumerStaticMembership"),
    *((f"PR-16145-{answer}", MIXED / "classic-members-commit-v8-in-a-consumer-group-kafka-4.1.2.jsonl", 97,
       _pr_16145(answer), "CommitGenerationCheck") for answer in ("STALE_MEMBER_EPOCH", "UNSUPPORTED_VERSION")),
]


@pytest.mark.parametrize(("bug", "path", "line", "edit", "rule"), CASES, ids=[c[0] for c in CASES])
def test_a_historical_broker_bug_in_a_real_recording_is_named(
        bug: str, path: Path, line: int, edit: Edit, rule: str) -> None:
    config = (KIP848_CONFIG if path.parent == KIP848
              else validation_config("kafka", "mixed") if path.parent == MIXED else validation_config("kafka"))
    assert _broker_findings(path, line, None, config) == [], f"{path.name} as recorded"
    found = _broker_findings(path, line, edit, config)
    assert found[:1] == [(line, rule)], (bug, found)


def test_kafka_19233_is_kafka_4_1_2_s_own_behaviour() -> None:
    """KAFKA-19233 (backlog entry 14, fixed in 2026, after 4.1.2): a consumer-protocol member
    the coordinator still knows at a higher epoch that re-joins with epoch 0 and its member id
    is fenced, because epoch 0 is checked like any other (GroupMetadataManager.
    throwIfConsumerGroupMemberEpochIsInvalid: 0 is neither the member's epoch nor its
    previous one). Recorded against Kafka 4.1.2 by the wire fuzzer (seed 9405): the member
    at epoch 3 (previous 1, line 23) re-joins at line 26 and is answered FENCED_MEMBER_EPOCH;
    the reference answers the same, so a broker with the fix (the member reset and
    re-admitted) is named there as a deviation from 4.1.2."""
    path = KIP848 / "epoch-zero-rejoin-of-a-known-member-is-fenced-kafka-4.1.2.jsonl"

    def fixed(e: dict[str, Any], events: list[dict[str, Any]]) -> None:
        assert e["request"]["member_epoch"] == 0 and e["response"]["error"] == "FENCED_MEMBER_EPOCH"
        assert events[22]["request"]["member_id"] == e["request"]["member_id"]
        assert events[22]["response"]["member_epoch"] == 3
        e["response"] = {**e["response"], "error": "NONE", "error_message": None,
                         "member_id": e["request"]["member_id"], "member_epoch": 3,
                         "heartbeat_interval_ms": 1000, "assignment": events[18]["response"]["assignment"]}
    assert _broker_findings(path, 26, None, KIP848_CONFIG) == []
    assert _broker_findings(path, 26, fixed, KIP848_CONFIG)[:1] == [(26, "ConsumerMemberEpochCheck")]
