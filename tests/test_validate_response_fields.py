"""A broker's answer that differs from Kafka's in one field is named, also where the field
holds a list: real Kafka 4.1.2 recordings (examples/conformance) with one response changed
as another broker might answer, each judged a violation naming the field. The cases are
the ones a sweep over every response field of those recordings found unnamed: a partition
or member answered twice (the comparisons kept one entry per key), metadata or a leader
epoch on a partition without an offset, a partition answered that was neither asked for
nor committed, a message on a ConsumerGroupHeartbeat answered without error, and a
heartbeat interval that no broker setting allows where the setting is not known."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groupspec.validate import CONFORMING, INCONCLUSIVE, VIOLATION, validate_bytes

ROOT = Path(__file__).resolve().parent.parent / "examples" / "conformance" / "kafka-4.1.2"
PYTHON = ROOT / "cooperative-sticky--kafka-python.jsonl"
EOS_848 = ROOT / "eos-zombie-producer--confluent-kafka-consumer-protocol.jsonl"


def changed(path: Path, seq: int, change: Callable[[dict[str, Any]], None]) -> bytes:
    """The recording with the response of exchange ``seq`` changed in place by ``change``."""
    out = []
    hits = 0
    for line in path.read_text().splitlines():
        o = json.loads(line)
        if o.get("kind") == "exchange" and o["seq"] == seq:
            change(o["response"])
            hits += 1
            line = json.dumps(o, separators=(",", ":"))
        out.append(line)
    assert hits == 1, f"no exchange {seq} in {path.name}"
    return "\n".join(out).encode()


def verdict(raw: bytes, source: str) -> tuple[str, str]:
    """The one group's verdict and its first divergence's rule and text."""
    [g] = validate_bytes(raw, source).groups
    if g.violation is None:
        return g.verdict, ""
    v = g.violation
    return g.verdict, f"{v.rule}: {v.broker_answered} / {v.detail}"


def _dup_partition(r: dict[str, Any]) -> None:
    r["partitions"].append(dict(r["partitions"][0]))


def _dup_member(r: dict[str, Any]) -> None:
    r["members"].append(dict(r["members"][0]))


def _dup_assigned_partition(r: dict[str, Any]) -> None:
    r["assignment"]["topic_partitions"][0]["partitions"].append(0)


def _dup_assigned_topic(r: dict[str, Any]) -> None:
    tps = r["assignment"]["topic_partitions"]
    tps.append({"topic_id": tps[0]["topic_id"], "partitions": []})


def _metadata_without_offset(r: dict[str, Any]) -> None:
    assert r["partitions"][0]["committed_offset"] == -1
    r["partitions"][0]["metadata"] = "x"


def _null_metadata_without_offset(r: dict[str, Any]) -> None:
    r["partitions"][0]["metadata"] = None


def _unasked_partition(r: dict[str, Any]) -> None:
    extra = dict(r["partitions"][0])
    extra["partition"] = 99
    r["partitions"].append(extra)


def _message_without_error(r: dict[str, Any]) -> None:
    r["error_message"] = "all good"


def _interval(ms: int) -> Callable[[dict[str, Any]], None]:
    def change(r: dict[str, Any]) -> None:
        r["heartbeat_interval_ms"] = ms
    change.__name__ = f"interval_{ms}"
    return change


def _sync_without_protocol(r: dict[str, Any]) -> None:
    assert r["error"] == "NONE" and r["protocol_name"] == "cooperative-sticky"
    r["protocol_name"] = None


def _join_without_protocol_type(r: dict[str, Any]) -> None:
    assert r["error"] == "NONE" and r["protocol_type"] == "consumer"
    r["protocol_type"] = None


CASES = [
    # (recording, seq, change, rule, words the divergence names)
    (PYTHON, 78, _dup_partition, "CommitAccepted", "answered 2 times"),
    (EOS_848, 25, _dup_partition, "TxnCommitAccepted", "answered 2 times"),
    (PYTHON, 10, _dup_partition, "FetchReturnsCommitted", "answered 2 times"),
    (PYTHON, 8, _dup_member, "JoinCompletion", "listed more than once"),
    (EOS_848, 15, _dup_assigned_partition, "ConsumerReconciliation", "more than once"),
    (EOS_848, 15, _dup_assigned_topic, "ConsumerReconciliation", "more than once"),
    (PYTHON, 10, _metadata_without_offset, "FetchReturnsCommitted", "no committed offset"),
    (PYTHON, 10, _null_metadata_without_offset, "FetchReturnsCommitted", "no committed offset"),
    (PYTHON, 10, _unasked_partition, "FetchReturnsCommitted", "neither asked for nor committed"),
    (EOS_848, 15, _message_without_error, "ConsumerReconciliation", "all good"),
    (EOS_848, 15, _interval(0), "ConsumerHeartbeatInterval", "at least 1 ms"),
    (EOS_848, 115, _interval(1000), "ConsumerHeartbeatInterval", "none on a leave"),
    (PYTHON, 8, _join_without_protocol_type, "JoinCompletion", "protocol_type differs: None"),
    (PYTHON, 7, _sync_without_protocol, "SyncPropagatesLeaderAssignment", "protocol_name differs: None"),
]


def test_the_recordings_conform_unchanged() -> None:
    for path in (PYTHON, EOS_848):
        assert verdict(path.read_bytes(), path.name)[0] == CONFORMING


@pytest.mark.parametrize(("path", "seq", "change", "rule", "words"), CASES,
                         ids=[f"{c[0].stem[:12]}-{c[1]}-{c[2].__name__.strip('_')}" for c in CASES])
def test_a_one_field_difference_is_named(path: Path, seq: int, change: Callable[[dict[str, Any]], None],
                                         rule: str, words: str) -> None:
    got, text = verdict(changed(path, seq, change), path.name)
    assert got == VIOLATION, text
    assert text.startswith(rule + ":") and words in text, text


def test_a_transaction_s_offset_fetched_back_with_another_leader_epoch_is_not_taken_as_the_transaction_s() -> None:
    """After a TxnOffsetCommit (whose end the validator does not see) an OffsetFetch may
    answer the offset the transaction committed: with its metadata and, from v5, its leader
    epoch; the same offset with another epoch is not that answer (here: undecided, as any
    other difference on such a partition). This recording predates the trace's epoch field
    of TxnOffsetCommit (its epochs read -1, unknown, which match any): the producer's commit
    of in-1@10 (twice: the zombie's is refused) is given epoch 0, as the fetch answers it."""
    lines = EOS_848.read_text().splitlines()
    txn = [i for i, line in enumerate(lines) if '"api":"TxnOffsetCommit"' in line and '"committed_offset":10' in line]
    assert txn
    for i in txn:
        o = json.loads(lines[i])
        o["request"]["partitions"][0]["committed_leader_epoch"] = 0
        lines[i] = json.dumps(o)
    stated = EOS_848.with_name("stated-epoch.jsonl")
    raw = "\n".join(lines).encode()
    assert verdict(raw, stated.name)[0] == CONFORMING

    def epoch(r: dict[str, Any]) -> None:
        assert r["partitions"][0]["committed_leader_epoch"] == 0
        r["partitions"][0]["committed_leader_epoch"] = 1

    seq = 39  # OffsetFetch v9 of in-1 after the transactional producer's commit
    at = next(i for i, line in enumerate(lines) if f'"seq":{seq},' in line)
    o = json.loads(lines[at])
    epoch(o["response"])
    lines[at] = json.dumps(o)
    [g] = validate_bytes("\n".join(lines).encode(), stated.name).groups
    assert g.verdict == INCONCLUSIVE and any("transactions are not modelled" in n for n in g.notes), g


FUZZ = Path(__file__).resolve().parent.parent / "examples" / "validator-false-positives"
#: wire-fuzz recordings of Kafka 4.1.2 (their groups carry the fuzzer's client-side
#: findings already: the broker's answer is judged by the divergence it adds)
DESCRIBE = FUZZ / "commit-inside-a-delete-then-fetch-all-kafka-4.1.2.jsonl"
DELETE = FUZZ / "delete-takes-a-pending-member-kafka-4.1.2.jsonl"


def _dup_described_member(r: dict[str, Any]) -> None:
    r["groups"][0]["members"].append(dict(r["groups"][0]["members"][0]))


def _dup_described_group(r: dict[str, Any]) -> None:
    r["groups"].append(dict(r["groups"][0]))


def _renamed_described_group(r: dict[str, Any]) -> None:
    r["groups"][0]["group_id"] += "-other"


LISTED = [
    (DESCRIBE, 33, _dup_described_member, "DescribeGroupAnswer", "members"),
    (DESCRIBE, 33, _dup_described_group, "DescribeGroupAnswer", "groups described"),
    (DESCRIBE, 33, _renamed_described_group, "DescribeGroupAnswer", "groups described"),
    (DELETE, 22, _dup_partition, "OffsetDeleteAccepted", "answered 2 times"),
]


def _divergences(raw: bytes, source: str) -> set[tuple[int, str, str]]:
    return {(d.seq, d.rule, d.detail) for g in validate_bytes(raw, source).groups for d in g.divergences}


@pytest.mark.parametrize(("path", "seq", "change", "rule", "words"), LISTED,
                         ids=[f"{c[0].stem[:16]}-{c[1]}-{c[2].__name__.strip('_')}" for c in LISTED])
def test_a_one_field_difference_is_listed(path: Path, seq: int, change: Callable[[dict[str, Any]], None],
                                          rule: str, words: str) -> None:
    """A DescribeGroups answer listing a member or a group twice, or a group it was not
    asked for, and an OffsetDelete answering a partition twice: each a divergence of its own
    at that exchange (they were compared entry by entry, by position or by key)."""
    before = _divergences(path.read_bytes(), path.name)
    added = _divergences(changed(path, seq, change), path.name) - before
    assert any(s == seq and r == rule and words in d for s, r, d in added), added


def test_a_list_groups_answered_with_an_error_kafka_never_gives_is_named() -> None:
    """ListGroups is cluster-wide, and the validator judges each answer for the groups it
    lists or that used its connection; an error answer was never judged (only NONE ones
    were handed to the groups). Kafka answers ListGroups with an error only while a
    coordinator is not active or loading: any other error is a divergence for the groups
    on that connection."""
    seq = 17  # ListGroups v1 on c1, answered NONE
    before = _divergences(DESCRIBE.read_bytes(), DESCRIBE.name)

    def error(r: dict[str, Any]) -> None:
        assert r["error"] == "NONE"
        r["error"] = "UNKNOWN_SERVER_ERROR"

    added = _divergences(changed(DESCRIBE, seq, error), DESCRIBE.name) - before
    assert any(s == seq and rule == "ListGroupAnswer" for s, rule, _ in added), added

    def loading(r: dict[str, Any]) -> None:
        r["error"] = "COORDINATOR_LOAD_IN_PROGRESS"
        r["groups"] = []

    assert not any(s == seq for s, _, _ in _divergences(changed(DESCRIBE, seq, loading), DESCRIBE.name) - before)
