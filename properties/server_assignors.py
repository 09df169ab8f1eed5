"""Properties of the server-side (KIP-848) assignors, and their differential test against
Kafka 4.1.2's own ``UniformAssignor`` and ``RangeAssignor`` run in the JVM oracle.

Each ``*_property(...)`` returns a Hypothesis test (call it to run it); tests/ holds thin
wrappers. Inputs (:func:`groups`): a few topics (some with no partitions, some missing from
the metadata only when a test asks for errors), members subscribed to the same topics
(HOMOGENEOUS) or to different ones, static and dynamic members, racks on members and
replicas, and a current target assignment that is valid but arbitrary: partitions of
topics a member no longer subscribes to, more than a balanced share, partitions nobody
holds, listed in arbitrary orders (the order is part of the input; see
:mod:`groupspec.assignors.server_spec`). A "next round" strategy also derives inputs from
an assignor's own previous output with members leaving, joining and changing
subscriptions, the way the coordinator feeds its target back.

- differential: the Python assignor's output equals Kafka's exactly (member keys, topics,
  partitions), or both raise ``PartitionAssignorException``;
- validity: every subscribed partition assigned exactly once, only to a subscriber;
- balance: uniform with HOMOGENEOUS subscriptions gives sizes within one
  (``UniformHomogeneousAssignmentBuilder``); uniform with HETEROGENEOUS ones leaves no
  topic whose subscribers' sizes differ by more than one while the giver holds a partition
  of it, unless the 16-round limit was hit (``balanceTopics``); range gives, per topic,
  subscriber shares within one (``RangeAssignor``);
- stickiness (uniform, HOMOGENEOUS): the number of moved partitions is exactly the
  closed-form minimum of :mod:`groupspec.assignors.moves` (every member keeps
  ``min(owned, quota)``); (uniform, HETEROGENEOUS): a member keeps every partition of its
  subscribed topics unless it ends above the least loaded subscriber of that topic plus one
  ... see :func:`check_heterogeneous_sticky`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from groupspec.assignors.server_spec import (
    GroupAssignment,
    GroupSpec,
    SubscribedTopicMetadata,
    topic_id_from_str,
    topic_id_str,
)


def oracle_input(assignor: str, spec: GroupSpec, topics: SubscribedTopicMetadata) -> dict[str, Any]:
    """The JSON the ``ServerAssignor`` oracle tool reads, keeping every order."""
    return {
        "assignor": assignor,
        "subscription_type": spec.kind.value,
        "topics": [
            {
                "id": topic_id_str(t.topic_id),
                "partitions": t.num_partitions,
                "racks": [sorted(r) for r in t.partition_racks],
            }
            for t in topics.topics.values()
        ],
        "members": [
            {
                "member_id": m.member_id,
                "instance_id": m.instance_id,
                "rack_id": m.rack_id,
                "topics": [topic_id_str(t) for t in m.subscribed_topic_ids],
                "assignment": [[topic_id_str(t), list(ps)] for t, ps in m.assignment.items()],
            }
            for m in spec.members
        ],
    }


Canonical = dict[str, dict[uuid.UUID, tuple[int, ...]]]


def canonical(result: GroupAssignment) -> Canonical:
    """Members with their topics and sorted partitions (empty topics kept, to compare)."""
    return {mid: {t: tuple(sorted(ps)) for t, ps in parts.items()} for mid, parts in result.items()}


def from_oracle(output: Mapping[str, Any]) -> Canonical:
    members: Mapping[str, list[list[Any]]] = output["members"]
    return {
        mid: {topic_id_from_str(t): tuple(ps) for t, ps in pairs}
        for mid, pairs in members.items()
    }
