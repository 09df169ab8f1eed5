"""The consumer protocol's vocabulary against Kafka 4.1.2 itself: every error name and
number against kafka-clients' ``Errors`` (through the JVM oracle), and the
ConsumerGroupHeartbeat / ConsumerGroupDescribe dataclasses field by field against the
message schemas inside kafka-clients-4.1.2.jar. Java and the jars are required (never
skipped)."""

from __future__ import annotations

import dataclasses
import json
import re
import zipfile
from typing import Any

import pytest

from groupspec.brokers.kafka import KAFKA_VERSION, kafka_libs
from groupspec.jvm import JvmOracle
from groupspec.protocol import consumer_group_messages as m
from groupspec.protocol import consumer_group_records as r
from groupspec.protocol.errors import Error

pytestmark = pytest.mark.java


def test_every_error_has_kafkas_name_and_number() -> None:
    with JvmOracle() as jvm:
        kafka: dict[str, int] = jvm.call("KafkaErrors", {})
    ours = {e.name: e.code for e in Error}
    assert {n: kafka.get(n) for n in ours} == ours
    for name in ("STALE_MEMBER_EPOCH", "FENCED_MEMBER_EPOCH", "UNRELEASED_INSTANCE_ID",
                 "UNSUPPORTED_ASSIGNOR", "INVALID_REGULAR_EXPRESSION", "UNKNOWN_MEMBER_ID"):
        assert name in ours


def _schema(name: str, jar_name: str = "kafka-clients") -> dict[str, Any]:
    jar = kafka_libs() / f"{jar_name}-{KAFKA_VERSION}.jar"
    with zipfile.ZipFile(jar) as z:
        text = z.read(f"common/message/{name}.json").decode()
    return dict(json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M)))


def _snake(name: str) -> str:
    return "error" if name == "ErrorCode" else re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _top(versions: str) -> int:
    return int(versions.split("-")[-1])


#: request fields taken from the header and the connection, not the body
_CONTEXT_FIELDS = frozenset({"client_id", "client_host"})


def _compare(fields: list[dict[str, Any]], cls: type, structs: dict[str, list[dict[str, Any]]],
             classes: dict[str, type], where: str) -> None:
    theirs = {_snake(f["name"]): f for f in fields}
    ours = {f.name: f for f in dataclasses.fields(cls)
            if (f.name != "version" or where.endswith("!"))
            and (f.name in theirs or f.name not in _CONTEXT_FIELDS)}
    assert set(ours) == set(theirs), f"{where}: fields differ"
    for name, f in theirs.items():
        nested = f.get("fields") or structs.get(f["type"].removeprefix("[]"))
        if nested is not None:
            struct = f["type"].removeprefix("[]")
            _compare(nested, classes[f"{where}.{struct}"], structs, classes, f"{where}.{struct}")
        default = ours[name].default
        if "default" in f and f["default"] in ("null", None):
            assert default is None, f"{where}.{name}: Kafka's default is null"
        elif "default" in f and default is not dataclasses.MISSING:
            assert default == int(f["default"]), f"{where}.{name}: default {f['default']}"


@pytest.mark.parametrize(
    ("api", "request_cls", "response_cls", "classes", "key", "top"),
    [
        (
            "ConsumerGroupHeartbeat",
            m.ConsumerGroupHeartbeatRequest,
            m.ConsumerGroupHeartbeatResponse,
            {
                "req.TopicPartitions": m.HeartbeatTopicPartitions,
                "resp.Assignment": m.HeartbeatAssignment,
                "resp.Assignment.TopicPartitions": m.HeartbeatTopicPartitions,
            },
            m.CONSUMER_GROUP_HEARTBEAT_API_KEY,
            m.CONSUMER_GROUP_HEARTBEAT_MAX_VERSION,
        ),
        (
            "ConsumerGroupDescribe",
            m.ConsumerGroupDescribeRequest,
            m.ConsumerGroupDescribeResponse,
            {
                "resp.DescribedGroup": m.DescribedGroup,
                "resp.DescribedGroup.Member": m.DescribedMember,
                "resp.DescribedGroup.Member.Assignment": m.DescribedAssignment,
                "resp.DescribedGroup.Member.Assignment.TopicPartitions": m.DescribedTopicPartitions,
            },
            m.CONSUMER_GROUP_DESCRIBE_API_KEY,
            m.CONSUMER_GROUP_DESCRIBE_MAX_VERSION,
        ),
    ],
)
def test_messages_match_kafkas_schemas(
    api: str, request_cls: type, response_cls: type, classes: dict[str, type], key: int, top: int
) -> None:
    for side, cls in (("req", request_cls), ("resp", response_cls)):
        schema = _schema(f"{api}{'Request' if side == 'req' else 'Response'}")
        assert schema["apiKey"] == key and _top(schema["validVersions"]) == top
        structs = {s["name"]: s["fields"] for s in schema.get("commonStructs", [])}
        _compare(schema["fields"], cls, structs, classes, side)


def test_heartbeat_versions_and_epochs() -> None:
    join = m.ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="m", member_epoch=m.JOIN_GROUP_MEMBER_EPOCH,
        subscribed_topic_regex="t.*",
    )
    assert join.version == 1
    with pytest.raises(ValueError, match="v0 has no subscribed_topic_regex"):
        m.ConsumerGroupHeartbeatRequest(
            group_id="g", member_id="m", member_epoch=0, subscribed_topic_regex="t.*", version=0
        )
    with pytest.raises(ValueError, match=r"not in 0\.\.1"):
        m.ConsumerGroupDescribeRequest(group_ids=("g",), version=2)
    assert (m.LEAVE_GROUP_MEMBER_EPOCH, m.LEAVE_GROUP_STATIC_MEMBER_EPOCH) == (-1, -2)


_RECORDS = [
    ("ConsumerGroupMetadata", r.ConsumerGroupMetadataKey, r.ConsumerGroupMetadataValue, {}),
    (
        "ConsumerGroupPartitionMetadata",
        r.ConsumerGroupPartitionMetadataKey,
        r.ConsumerGroupPartitionMetadataValue,
        {"TopicMetadata": r.TopicMetadata, "TopicMetadata.PartitionMetadata": r.PartitionMetadata},
    ),
    (
        "ConsumerGroupMemberMetadata",
        r.ConsumerGroupMemberMetadataKey,
        r.ConsumerGroupMemberMetadataValue,
        {
            "ClassicMemberMetadata": r.ClassicMemberMetadata,
            "ClassicMemberMetadata.ClassicProtocol": r.ClassicProtocol,
        },
    ),
    (
        "ConsumerGroupTargetAssignmentMetadata",
        r.ConsumerGroupTargetAssignmentMetadataKey,
        r.ConsumerGroupTargetAssignmentMetadataValue,
        {},
    ),
    (
        "ConsumerGroupTargetAssignmentMember",
        r.ConsumerGroupTargetAssignmentMemberKey,
        r.ConsumerGroupTargetAssignmentMemberValue,
        {"TopicPartition": r.RecordTopicPartitions},
    ),
    (
        "ConsumerGroupCurrentMemberAssignment",
        r.ConsumerGroupCurrentMemberAssignmentKey,
        r.ConsumerGroupCurrentMemberAssignmentValue,
        {"TopicPartitions": r.RecordTopicPartitions},
    ),
    (
        "ConsumerGroupRegularExpression",
        r.ConsumerGroupRegularExpressionKey,
        r.ConsumerGroupRegularExpressionValue,
        {},
    ),
]


@pytest.mark.parametrize(("name", "key", "value", "structs"), _RECORDS, ids=[x[0] for x in _RECORDS])
def test_records_match_kafkas_schemas(
    name: str, key: Any, value: type, structs: dict[str, type]
) -> None:
    key_schema = _schema(f"{name}Key", "kafka-group-coordinator")
    value_schema = _schema(f"{name}Value", "kafka-group-coordinator")
    assert key_schema["type"] == "coordinator-key"
    assert key_schema["apiKey"] == key.RECORD_TYPE == value_schema["apiKey"]
    _compare(key_schema["fields"], key, {}, {}, "key")
    common = {s["name"]: s["fields"] for s in value_schema.get("commonStructs", [])}
    _compare(value_schema["fields"], value, common, {f"value!.{k}": v for k, v in structs.items()}, "value!")


def test_member_states_are_kafkas_bytes() -> None:
    assert [(s.name, s.value) for s in r.MemberState] == [
        ("STABLE", 0), ("UNREVOKED_PARTITIONS", 1), ("UNRELEASED_PARTITIONS", 2), ("UNKNOWN", 127)
    ]
