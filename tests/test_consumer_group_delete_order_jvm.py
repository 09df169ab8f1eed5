"""Deleting an empty consumer group, by DeleteGroups or by the offset expiry, writes the
same tombstones in Kafka 4.1.2's order (GroupCoordinatorShard.deleteGroups and
cleanupGroupMetadata: OffsetMetadataManager.deleteAllOffsets, then ConsumerGroup.
createGroupTombstoneRecords: the target assignment's epoch, each resolved regex in the
order of the resolvedRegularExpressions TimelineHashMap, the group's epoch). The regexes'
order is checked against Kafka's own TimelineHashMap (JVM oracle): a re-resolved regex is
removed and put again (ConsumerGroup.updateResolvedRegularExpression). Java is required."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from groupspec.coordinator.consumer.expiry import expire_consumer_offsets
from groupspec.coordinator.coordinator import Coordinator
from groupspec.coordinator.replay import apply_record
from groupspec.jvm import JvmOracle
from groupspec.protocol import consumer_group_records as cr
from groupspec.protocol import records as r
from groupspec.protocol.errors import Error
from groupspec.protocol.messages import DeleteGroupsRequest, DeleteGroupsResponse

pytestmark = pytest.mark.java

REGEXES = ["a.*", "b.*", "c.*", "orders-.*", "x", ".*-dlq"]


@pytest.fixture(scope="module")
def jvm() -> Iterator[JvmOracle]:
    with JvmOracle() as oracle:
        yield oracle


def _group(c: Coordinator) -> None:
    """An empty consumer group with resolved regexes (the last one re-resolved) and two
    committed offsets, from its records."""
    recs: list[r.Record] = [cr.ConsumerGroupEpochRecord("g", cr.ConsumerGroupMetadataValue(epoch=3))]
    for rx in [*REGEXES, REGEXES[0]]:
        recs.append(cr.ConsumerGroupRegularExpressionRecord(
            "g", rx, cr.ConsumerGroupRegularExpressionValue(topics=("v",), version=1, timestamp=0)))
    recs.append(cr.ConsumerGroupTargetAssignmentEpochRecord(
        "g", cr.ConsumerGroupTargetAssignmentMetadataValue(3)))
    recs += [r.OffsetCommitted("g", "t", 0, 1, "", 0, -1, ""), r.OffsetCommitted("g", "u", 0, 1, "", 0, -1, "")]
    for rec in recs:
        apply_record(c.state, rec)


def test_both_deletions_write_kafkas_tombstones(jvm: JvmOracle) -> None:
    ops = [["put", rx] for rx in [*REGEXES, REGEXES[0]]]
    # the re-resolution removes the regex first
    ops.insert(len(REGEXES), ["remove", REGEXES[0]])
    regex_order = jvm.call("TimelineOrder", {"ops": ops})
    assert regex_order != REGEXES  # the map's order, not the put order
    expected_group = [cr.ConsumerGroupTargetAssignmentEpochRecord("g", None),
                      *(cr.ConsumerGroupRegularExpressionRecord("g", rx, None) for rx in regex_order),
                      cr.ConsumerGroupSubscriptionMetadataRecord("g", None),
                      cr.ConsumerGroupEpochRecord("g", None)]

    c = Coordinator()
    _group(c)
    offsets = c.state.offset_order["g"].order()
    out = c.handle(1, DeleteGroupsRequest(groups_names=("g",)), 0)
    resp = out.response_to(1)
    assert isinstance(resp, DeleteGroupsResponse) and resp.results[0].error is Error.NONE
    assert [x for x in out.records if x.persisted] == [
        r.OffsetsDeleted("g", tuple(offsets), "group deleted"), *expected_group]
    assert "g" not in c.state.consumer_groups

    # the offset expiry: the regexes resolved to v only, so both offsets expire, then the
    # emptied group is deleted with the same tombstones
    c = Coordinator()
    _group(c)
    txn = c._txn(c.config.offsets_retention_ms)
    expire_consumer_offsets(txn, c.state.consumer_groups["g"])
    assert [x for x in txn.out.records if x.persisted] == [
        r.OffsetsDeleted("g", tuple(offsets), "retention"), *expected_group]
